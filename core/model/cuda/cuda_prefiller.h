// A CUDA runner's prefill: a step's prompt chunks as one packed forward,
// graphed per token bucket (CUDA builds only).
#ifndef TANDEM_CORE_MODEL_CUDA_CUDA_PREFILLER_H_
#define TANDEM_CORE_MODEL_CUDA_CUDA_PREFILLER_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>

#include "core/engine/step_plan.h"
#include "core/model/causal_lm.h"
#include "core/model/cuda/slot_state.h"
#include "core/model/kv_cache.h"
#include "core/model/prefill_pack.h"
#include "core/model/sampler.h"

namespace tandem {

// What a step's prefill does, on the current stream, without a host sync:
// the chunks' pack (tokens, positions, slots, attention tiles, padded to a
// token bucket with rows that write the scratch slot) and per-row inputs
// (sampling parameters, the slot state to set) are written into pinned
// staging (one buffer per parity, reused every other step), copied into
// static device buffers, and the forward, the sampling of each chunk's last
// row and the slot-state writes run as one CUDA graph for the bucket and
// greedy/sampling choice, or eagerly at the same shapes. Rows are padded to
// num_slots. Every bucket is captured (or run) at start-up, so no request
// meets a new shape.
//
// Owns its buffers and graphs; borrows the model, cache and slot state from
// the runner, which outlives it. Engine thread only.
class CudaPrefiller {
 public:
  CudaPrefiller(const CausalLm* model, KvCache* cache, SlotState* state, int64_t num_slots,
                int64_t max_prefill_tokens, at::Device device);

  // Captures a graph per bucket and greedy/sampling on the current stream
  // (not the default one) into `pool`, when the model's prefill is graphable.
  void CaptureGraphs(decltype(at::cuda::graph_pool_handle()) pool);
  // Runs every bucket once (through its graph where captured). Returns the
  // time of the smallest bucket's step (the prefill's fixed cost).
  double WarmUp();
  // Prefills `items` (at most num_slots; staging `parity`): row r of the
  // result is items[r]'s sampled token and log-probability.
  SampledTensors Run(const std::vector<PrefillItem>& items, int parity);

  // The parts of Run, for a forward that also decodes (CudaRunner's mixed
  // steps): the bucket `items` are padded to (and whether every item is
  // greedy); Stage writes them for that bucket; Pack is the pack the
  // forward then reads (the static buffers where graphable); Finish samples
  // each chunk's last row from the forward's logits [num_slots, V] float32
  // (or, greedy, takes the tokens the forward chose when it did) and writes
  // the slot state of each prompt that ended.
  int64_t BucketFor(const std::vector<PrefillItem>& items, bool* greedy) const;
  void Stage(const std::vector<PrefillItem>& items, int64_t bucket, int parity);
  PrefillPack Pack(const std::vector<PrefillItem>& items, int64_t bucket) const;
  SampledTensors Finish(const CausalLm::SlotDecode& rows, bool greedy);
  // Greedy chunks of `tokens` zeros (at most the largest bucket) into the
  // scratch slot, each within the context: real work for warm-ups and
  // measurements, touching no sequence.
  std::vector<PrefillItem> ScratchItems(int64_t tokens) const;

  // Token counts packs are padded to (16, 32, 64, 128, then steps of a
  // quarter of the power of two below, at least 64, up to max_prefill_tokens
  // or what the slots hold).
  const std::vector<int64_t>& buckets() const { return buckets_; }
  size_t num_graphs() const { return graphs_.size(); }

 private:
  struct Graph {
    at::cuda::CUDAGraph graph;
    SampledTensors outputs;  // [num_slots], owned by the graph's pool
  };
  int64_t BucketFor(int64_t tokens) const;
  // The forward, sampling and state writes over the static buffers
  // (graph-capturable when the model's prefill is graphable).
  SampledTensors Body(const std::vector<PrefillItem>& items, int64_t bucket, bool greedy);
  PrefillPack StaticPack(int64_t bucket) const;

  const CausalLm* model_;
  KvCache* cache_;
  SlotState* state_;
  const int64_t num_slots_, scratch_slot_;
  const at::Device device_;
  const bool graphable_;
  std::vector<int64_t> buckets_;
  // Static inputs. longs: tokens, positions and slots of the largest
  // bucket, last rows [S], tiles [MaxPrefillTiles(largest, S), 4], then per
  // row [S] top_k, seed, rng_offset, state slot, next position. floats:
  // temperature, top_p, min_p [S] each. S = num_slots.
  at::Tensor longs_, floats_;
  std::array<at::Tensor, 2> staged_longs_, staged_floats_;  // pinned, per parity
  int64_t rows_offset_ = 0;  // where the per-row part of longs_ starts
  std::vector<int32_t> zeros_;  // ScratchItems' tokens
  std::map<std::pair<int64_t, bool>, std::unique_ptr<Graph>> graphs_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_CUDA_PREFILLER_H_
