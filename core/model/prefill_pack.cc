#include "core/model/prefill_pack.h"

#include <algorithm>
#include <utility>

namespace tandem {

int64_t FillPrefillArrays(const std::vector<PrefillSegment>& segments, int64_t padded_tokens,
                          int64_t padded_segments, int64_t tile_capacity,
                          int64_t padding_slot, const PrefillArrays& out) {
  int64_t row = 0, tile = 0;
  for (size_t s = 0; s < segments.size(); ++s) {
    const PrefillSegment& seg = segments[s];
    const auto length = static_cast<int64_t>(seg.tokens.size());
    for (int64_t i = 0; i < length; ++i) {
      out.tokens[row + i] = seg.tokens[i];
      out.positions[row + i] = seg.start + i;
      out.slots[row + i] = seg.slot;
    }
    for (int64_t i = 0; i < length; i += kPrefillTileTokens, ++tile) {
      int64_t* t = out.tiles + 4 * tile;
      t[0] = row + i;
      t[1] = seg.start + i;
      t[2] = std::min(kPrefillTileTokens, length - i);
      t[3] = seg.slot;
    }
    row += length;
    out.last_rows[s] = row - 1;
  }
  const int64_t real_tiles = tile;
  for (; row < padded_tokens; ++row) {
    out.tokens[row] = 0;
    out.positions[row] = 0;
    out.slots[row] = padding_slot;
  }
  for (auto s = static_cast<int64_t>(segments.size()); s < padded_segments; ++s) {
    out.last_rows[s] = 0;
  }
  for (; tile < tile_capacity; ++tile) {
    std::fill_n(out.tiles + 4 * tile, 4, int64_t{0});
    out.tiles[4 * tile + 3] = padding_slot;
  }
  return real_tiles;
}

PrefillPack MakePrefillPack(std::vector<PrefillSegment> segments, at::Device device,
                            int64_t padded_tokens, int64_t padded_segments) {
  PrefillPack pack;
  pack.num_segments = static_cast<int64_t>(segments.size());
  for (const PrefillSegment& s : segments) {
    pack.num_tokens += static_cast<int64_t>(s.tokens.size());
    pack.num_tiles += (static_cast<int64_t>(s.tokens.size()) + kPrefillTileTokens - 1) /
                      kPrefillTileTokens;
  }
  pack.padded_tokens = std::max(padded_tokens, pack.num_tokens);
  pack.padded_segments = std::max(padded_segments, pack.num_segments);
  const int64_t T = pack.padded_tokens, S = pack.padded_segments;
  // One int64 host buffer: tokens, positions, slots, last rows, tiles.
  const int64_t total = 3 * T + S + 4 * pack.num_tiles;
  at::Tensor host = at::empty(
      {total}, at::TensorOptions().dtype(at::kLong).pinned_memory(device.is_cuda()));
  int64_t* base = host.data_ptr<int64_t>();
  FillPrefillArrays(segments, T, S, pack.num_tiles, /*padding_slot=*/0,
                    {base, base + T, base + 2 * T, base + 3 * T, base + 3 * T + S});
  const at::Tensor on_device = host.to(device, /*non_blocking=*/true);
  pack.tokens = on_device.narrow(0, 0, T);
  pack.positions = on_device.narrow(0, T, T);
  pack.slots = on_device.narrow(0, 2 * T, pack.num_tokens);
  pack.last_rows = on_device.narrow(0, 3 * T, S);
  pack.tiles = on_device.narrow(0, 3 * T + S, 4 * pack.num_tiles).view({pack.num_tiles, 4});
  pack.segments = std::move(segments);
  return pack;
}

}  // namespace tandem
