// A step's prompt chunks packed into one token sequence for one forward.
#ifndef TANDEM_CORE_MODEL_PREFILL_PACK_H_
#define TANDEM_CORE_MODEL_PREFILL_PACK_H_

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "absl/types/span.h"

namespace tandem {

// One prompt chunk: `tokens` at positions [start, start + tokens.size()) of
// KV slot `slot`, attending to that slot's positions before `start` too.
struct PrefillSegment {
  int64_t slot = 0;
  int64_t start = 0;
  absl::Span<const int32_t> tokens;
};

// Query tiles for the prefill attention kernel: each is up to kTileTokens
// consecutive tokens of one segment.
inline constexpr int64_t kPrefillTileTokens = 16;

// The pack, on the model's device. Rows [0, num_tokens) are the segments'
// tokens back to back; rows [num_tokens, padded_tokens) are padding (token
// 0, position 0) that every row-wise op computes and nothing reads, so the
// forward runs at a bucketed shape. Segments [num_segments, padded_segments)
// are padding too: their last row is row 0.
// Owned by the caller; immutable once built.
struct PrefillPack {
  int64_t num_tokens = 0;
  int64_t padded_tokens = 0;
  int64_t num_segments = 0;
  int64_t padded_segments = 0;
  std::vector<PrefillSegment> segments;  // host copy, [num_segments]
  at::Tensor tokens;     // int64 [padded_tokens]
  at::Tensor positions;  // int64 [padded_tokens]
  at::Tensor slots;      // int64 [num_tokens]: each real token's slot
  at::Tensor last_rows;  // int64 [padded_segments]: row of each segment's last token
  // int64 [num_tiles, 4]: (first row, first position, tokens, slot) per tile.
  at::Tensor tiles;
  int64_t num_tiles = 0;
};

// Builds a pack of `segments` (non-empty, each with tokens) on `device`,
// padded to at least `padded_tokens` rows and `padded_segments` segments.
// One host buffer, one copy to the device (pinned and asynchronous on CUDA).
PrefillPack MakePrefillPack(std::vector<PrefillSegment> segments, at::Device device,
                            int64_t padded_tokens = 0, int64_t padded_segments = 0);

// Query tiles of `tokens` rows split into segments: at most this many.
inline int64_t MaxPrefillTiles(int64_t tokens, int64_t segments) {
  return tokens / kPrefillTileTokens + segments;
}

// Where FillPrefillArrays writes a pack's host arrays: tokens, positions and
// slots [padded rows], last rows [padded segments], tiles [capacity, 4].
struct PrefillArrays {
  int64_t* tokens;
  int64_t* positions;
  int64_t* slots;
  int64_t* last_rows;
  int64_t* tiles;
};

// Writes `segments` (tokens()/tiles() of the pack they make) and pads:
// rows [num tokens, padded_tokens) get token 0, position 0 and slot
// `padding_slot`; segments past the real ones get last row 0; tiles past
// the real ones, up to `tile_capacity`, are empty (0 tokens). Returns the
// number of real tiles.
int64_t FillPrefillArrays(const std::vector<PrefillSegment>& segments, int64_t padded_tokens,
                          int64_t padded_segments, int64_t tile_capacity,
                          int64_t padding_slot, const PrefillArrays& out);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_PREFILL_PACK_H_
