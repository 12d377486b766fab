#include "core/model/cuda/cuda_prefiller.h"

#include <algorithm>
#include <cstdlib>
#include <exception>

#include <cuda_profiler_api.h>

#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/base/logging.h"
#include "core/model/cuda/cuda_support.h"
#include "core/model/cuda/decode_ops.h"

namespace tandem {
namespace {

// The largest power of two <= n (n >= 1).
int64_t PowerOfTwoBelow(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

std::vector<int64_t> Buckets(int64_t largest) {
  std::vector<int64_t> buckets;
  for (int64_t b = 16;; b = b < 128 ? 2 * b : b + std::max<int64_t>(64, PowerOfTwoBelow(b) / 4)) {
    buckets.push_back(std::min(b, largest));
    if (b >= largest) return buckets;
  }
}

std::vector<PrefillSegment> SegmentsOf(const std::vector<PrefillItem>& items) {
  std::vector<PrefillSegment> segments;
  for (const PrefillItem& item : items) segments.push_back({item.slot, item.start, item.tokens});
  return segments;
}

}  // namespace

CudaPrefiller::CudaPrefiller(const CausalLm* model, KvCache* cache, SlotState* state,
                             int64_t num_slots, int64_t max_prefill_tokens, at::Device device)
    : model_(model),
      cache_(cache),
      state_(state),
      num_slots_(num_slots),
      scratch_slot_(num_slots),
      device_(device),
      graphable_(model->GraphablePrefill()),
      // A pack holds at most one chunk per slot, each within the context.
      buckets_(Buckets(std::min(std::max<int64_t>(max_prefill_tokens, 1),
                                num_slots * cache->max_context()))) {
  const int64_t P = buckets_.back(), S = num_slots_;
  zeros_.assign(static_cast<size_t>(P), 0);
  rows_offset_ = 3 * P + S + 4 * MaxPrefillTiles(P, S);
  longs_ = at::zeros({rows_offset_ + 5 * S}, at::TensorOptions().dtype(at::kLong).device(device));
  floats_ = at::zeros({3 * S}, at::TensorOptions().dtype(at::kFloat).device(device));
  for (int p = 0; p < 2; ++p) {
    staged_longs_[p] = PinnedBuffer(longs_.numel(), at::kLong);
    staged_floats_[p] = PinnedBuffer(floats_.numel(), at::kFloat);
  }
}

int64_t CudaPrefiller::BucketFor(int64_t tokens) const {
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), tokens);
  if (it != buckets_.end()) return *it;
  return (tokens + 1023) / 1024 * 1024;  // beyond the prepared sizes: eager
}

PrefillPack CudaPrefiller::StaticPack(int64_t bucket) const {
  const int64_t P = buckets_.back(), S = num_slots_;
  PrefillPack pack;
  pack.num_tokens = pack.padded_tokens = bucket;
  pack.num_segments = pack.padded_segments = S;
  pack.num_tiles = MaxPrefillTiles(bucket, S);
  pack.tokens = longs_.narrow(0, 0, bucket);
  pack.positions = longs_.narrow(0, P, bucket);
  pack.slots = longs_.narrow(0, 2 * P, bucket);
  pack.last_rows = longs_.narrow(0, 3 * P, S);
  pack.tiles = longs_.narrow(0, 3 * P + S, 4 * pack.num_tiles).view({pack.num_tiles, 4});
  return pack;
}

void CudaPrefiller::Stage(const std::vector<PrefillItem>& items, int64_t bucket, int parity) {
  const int64_t P = buckets_.back(), S = num_slots_;
  int64_t* l = staged_longs_[parity].data_ptr<int64_t>();
  float* f = staged_floats_[parity].data_ptr<float>();
  if (graphable_ && bucket <= P) {
    FillPrefillArrays(SegmentsOf(items), bucket, S, MaxPrefillTiles(bucket, S), scratch_slot_,
                      {l, l + P, l + 2 * P, l + 3 * P, l + 3 * P + S});
  }
  // Padding rows are greedy and write the scratch slot, as do chunks that do
  // not end their prompt; the scratch slot's state stays at position 0.
  int64_t* rows = l + rows_offset_;
  for (int64_t r = 0; r < S; ++r) {
    const PrefillItem* item = r < static_cast<int64_t>(items.size()) ? &items[r] : nullptr;
    const SamplingParams p = item ? item->sampling.params : SamplingParams{};
    const bool sets_state = item && item->last_chunk && item->slot != scratch_slot_;
    f[r] = item ? p.temperature : 0.0f;
    f[S + r] = p.top_p;
    f[2 * S + r] = p.min_p;
    rows[r] = p.top_k;
    rows[S + r] = static_cast<int64_t>(p.seed);
    rows[2 * S + r] = item ? item->sampling.rng_offset : 0;
    rows[3 * S + r] = sets_state ? item->slot : scratch_slot_;
    rows[4 * S + r] = sets_state ? item->end() : 0;
  }
  longs_.copy_(staged_longs_[parity], /*non_blocking=*/true);
  floats_.copy_(staged_floats_[parity], /*non_blocking=*/true);
}

PrefillPack CudaPrefiller::Pack(const std::vector<PrefillItem>& items, int64_t bucket) const {
  return graphable_ && bucket <= buckets_.back()
             ? StaticPack(bucket)
             : MakePrefillPack(SegmentsOf(items), device_, bucket, num_slots_);
}

SampledTensors CudaPrefiller::Finish(const CausalLm::SlotDecode& rows, bool greedy) {
  const int64_t S = num_slots_;
  auto row = [&](int i) { return longs_.narrow(0, rows_offset_ + i * S, S); };
  auto floats = [&](int i) { return floats_.narrow(0, i * S, S); };
  const SamplingTensors params{floats(0), row(0), floats(1), floats(2), row(1), row(2)};
  const SampledTensors sampled = greedy && rows.tokens.defined()
                                     ? SampledTensors{rows.tokens, rows.logprobs}
                                     : Sampler::Sample(rows.logits, params, greedy);
  // The decode state of each slot whose prompt ended: its first decode step
  // feeds the sampled token at position end(), sampling offset 1.
  SetPrefilledSlots(state_, scratch_slot_, row(3), row(4), sampled.tokens, params);
  return sampled;
}

SampledTensors CudaPrefiller::Body(const std::vector<PrefillItem>& items, int64_t bucket,
                                   bool greedy) {
  return Finish({model_->PrefillPacked(Pack(items, bucket), cache_)}, greedy);  // [S, V]
}

int64_t CudaPrefiller::BucketFor(const std::vector<PrefillItem>& items, bool* greedy) const {
  int64_t tokens = 0;
  *greedy = true;
  for (const PrefillItem& item : items) {
    tokens += static_cast<int64_t>(item.tokens.size());
    *greedy &= item.sampling.params.temperature <= 0;
  }
  return BucketFor(tokens);
}

SampledTensors CudaPrefiller::Run(const std::vector<PrefillItem>& items, int parity) {
  bool greedy = true;
  const int64_t bucket = BucketFor(items, &greedy);
  Stage(items, bucket, parity);
  if (auto graph = graphs_.find({bucket, greedy}); graph != graphs_.end()) {
    graph->second->graph.replay();
    return graph->second->outputs;
  }
  return Body(items, bucket, greedy);
}

void CudaPrefiller::CaptureGraphs(decltype(at::cuda::graph_pool_handle()) pool) {
  if (!graphable_) return;
  c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream(device_.index());
  for (auto it = buckets_.rbegin(); it != buckets_.rend(); ++it) {
    for (bool greedy : {true, false}) {
      try {
        // All padding (the scratch slot): warm-up and capture touch no
        // sequence. Staging 0 is reused: wait for its last copy first.
        stream.synchronize();
        Stage({}, *it, 0);
        Body({}, *it, greedy);  // warm-up: cuBLAS plans, allocator
        stream.synchronize();
        auto graph = std::make_unique<Graph>();
        graph->graph.capture_begin(pool);
        graph->outputs = Body({}, *it, greedy);
        graph->graph.capture_end();
        graphs_[{*it, greedy}] = std::move(graph);
      } catch (const std::exception& e) {
        LogWarning("CUDA graph capture failed for prefill bucket ", *it,
                   greedy ? " (greedy)" : " (sampling)", "; it runs eagerly: ", e.what());
      }
    }
  }
  stream.synchronize();
}

std::vector<PrefillItem> CudaPrefiller::ScratchItems(int64_t tokens) const {
  const int64_t context = cache_->max_context();
  const int64_t segments = std::min((tokens + context - 1) / context, num_slots_);
  std::vector<PrefillItem> items(static_cast<size_t>(segments));
  int64_t offset = 0;
  for (int64_t i = 0; i < segments; ++i) {
    const int64_t length = tokens / segments + (i < tokens % segments ? 1 : 0);
    items[i].slot = static_cast<int32_t>(scratch_slot_);
    items[i].tokens = absl::MakeConstSpan(zeros_).subspan(offset, length);
    offset += length;
  }
  return items;
}

double CudaPrefiller::WarmUp() {
  const absl::Time start = absl::Now();
  auto run = [&](int64_t tokens, bool greedy) {
    std::vector<PrefillItem> items = ScratchItems(tokens);
    for (PrefillItem& item : items) item.sampling.params.temperature = greedy ? 0.0f : 1.0f;
    Run(items, /*parity=*/0);
    c10::cuda::device_synchronize();  // staging 0 is reused by the next run
  };
  for (int64_t tokens : buckets_) {
    for (bool greedy : {true, false}) run(tokens, greedy);
  }
  // The fixed cost: the median device time of a few runs of the smallest
  // bucket (staging copies, graph, sampling and state writes).
  std::vector<double> seconds;
  cudaEvent_t begin = nullptr, end = nullptr;
  cudaEventCreate(&begin);
  cudaEventCreate(&end);
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device_.index()).stream();
  std::vector<PrefillItem> one(1);
  one[0].slot = static_cast<int32_t>(scratch_slot_);
  one[0].tokens = absl::MakeConstSpan(zeros_).subspan(0, 1);
  // TANDEM_PROFILE_PREFILL: a profiler started with `--profile-from-start
  // off` records the fourth run alone.
  const bool profile = std::getenv("TANDEM_PROFILE_PREFILL") != nullptr;
  for (int i = 0; i < 7; ++i) {
    if (profile && i == 3) cudaProfilerStart();
    cudaEventRecord(begin, stream);
    Run(one, /*parity=*/0);
    cudaEventRecord(end, stream);
    if (profile && i == 3) cudaProfilerStop();
    cudaEventSynchronize(end);  // staging 0 is free again
    float ms = 0;
    cudaEventElapsedTime(&ms, begin, end);
    seconds.push_back(ms / 1000.0);
  }
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  std::sort(seconds.begin(), seconds.end());
  LogInfo("prefill: ", buckets_.size(), " token buckets up to ", buckets_.back(), ", ",
          graphs_.size(), " graphs; every bucket run once in ",
          absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Milliseconds(1))),
          "; a step's fixed cost ", absl::StrFormat("%.3f", 1e3 * seconds[3]), " ms");
  return seconds[3];
}

}  // namespace tandem
