// Any CausalLm on a CUDA device: device-resident decode state,
// double-buffered streams, CUDA graphs per batch bucket, per-step GPU idle
// measurement. Compiled only when the Torch found has CUDA
// (TANDEM_WITH_CUDA).
#ifndef TANDEM_CORE_MODEL_CUDA_CUDA_RUNNER_H_
#define TANDEM_CORE_MODEL_CUDA_CUDA_RUNNER_H_

#include <array>
#include <deque>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include "core/model/causal_lm.h"
#include "core/model/kv_cache.h"
#include "core/model/cuda/cuda_prefiller.h"
#include "core/model/cuda/slot_state.h"
#include "core/engine/model_runner.h"

namespace tandem {

struct CudaRunnerOptions {
  bool cuda_graphs = true;
  // Prefill packs are padded to token buckets up to this size, each run
  // once at start-up (see prefill_buckets()).
  int32_t max_prefill_tokens = 8192;
  // Mixed steps in one forward where the model fuses them.
  bool one_forward_mixed_steps = true;
};

// Owns the model, the KV slots (num_slots + 1: the last is a scratch slot
// that padded batch rows write to), the per-slot decode state, two streams,
// pinned staging buffers and the captured graphs.
//
// Per-slot device state, all [num_slots + 1]: next input token, position,
// sampling offset and sampling parameters. A prefill writes its slot's
// state; a decode step gathers state by slot id, samples and scatters the
// advanced state back, all on the device. So step i+1 can be launched before
// step i's tokens reach the host. Whether a sequence stops is decided on the
// host (the scheduler), one step later in the pipelined engine.
//
// Step i runs on stream i % 2 after waiting (on the device) for step i-1's
// end event; its tokens and log-probs are copied with
// non-blocking copies into pinned buffer i % 2. Collect() blocks on step i's
// end event only. Events at each step's start and end give GPU busy time and
// the idle gap since the previous step ended.
// What is graphed: the decode part of a step (embedding to slot-state
// advance), one graph per batch bucket and greedy/sampling; and the prefill
// part (a CudaPrefiller: the packed forward of the step's prompt chunks, the
// sampling of each chunk's last row and its slot's state), one graph per
// token bucket and greedy/sampling. A step's chunks run before its decode
// rows on the same stream, or, where the model fuses mixed steps
// (CausalLm::FusesMixedSteps), in one forward with them: a mixed graph per
// token bucket and greedy/sampling, its decode rows padded to num_slots.
//
// Threading: engine thread only.
class CudaRunner : public ModelRunner {
 public:
  // `cache` must have description.num_slots + 1 slots.
  CudaRunner(ModelDescription description, std::unique_ptr<CausalLm> model,
             std::unique_ptr<KvCache> cache, at::Device device, CudaRunnerOptions options);
  ~CudaRunner() override;

  const ModelDescription& description() const override { return description_; }
  absl::StatusOr<StepOutput> Step(const StepPlan& plan) override;
  absl::Status Launch(const StepPlan& plan) override;
  absl::StatusOr<StepOutput> Collect() override;
  bool reads_tokens_on_device() const override { return true; }

  // Batch-size buckets decode steps (and a pack's segments) are padded to
  // (1, 2, 4, ... num_slots).
  const std::vector<int64_t>& buckets() const { return buckets_; }
  // Token counts prefill packs are padded to (see CudaPrefiller).
  const std::vector<int64_t>& prefill_buckets() const { return prefiller_->buckets(); }

 private:
  struct RowOutputs {
    at::Tensor tokens;    // int64 [rows]
    at::Tensor logprobs;  // float32 [rows]
  };
  struct DecodeGraph {
    at::cuda::CUDAGraph graph;
    RowOutputs outputs;  // [bucket], owned by the graph's memory pool
  };
  struct MixedOutputs {
    SampledTensors prefill;  // [num_slots]: the pack's rows (CudaPrefiller::Run)
    RowOutputs decode;       // [num_slots]: the decode rows
  };
  struct MixedGraph {
    at::cuda::CUDAGraph graph;
    MixedOutputs outputs;  // owned by the graph's memory pool
  };
  struct Events {
    // mid is recorded only between a separate prefill and the decode rows:
    // a timing event between the start and a decode graph cost ~1.2 us a
    // step (GPT-2 small bf16 N=1 165.8 -> 164.6 us without it:
    // docs/results/bench/2026-12-04-h200-idle-streams/).
    cudaEvent_t start = nullptr, mid = nullptr, end = nullptr;
  };
  struct InFlight {
    int64_t index = 0;  // step counter
    int prefill_rows = 0;
    int decode_rows = 0;
    bool follows_idle = false;
    bool one_forward = false;  // a mixed step in one forward
    bool separate_prefill = false;  // prompt rows before the decode rows (mid recorded)
    bool full_bucket = false;  // a decode-only step of the largest bucket
    int64_t prefill_bucket = 0;  // a one-forward step's token bucket
    double context_pairs = 0;    // its pack's sum of tokens x start position
  };

  // The decode step for slots_[0, bucket): gathers, runs, samples, scatters.
  // Graph-capturable: no host sync, static shapes.
  RowOutputs DecodeRows(int64_t bucket, bool greedy);
  // Samples (unless greedy) and advances the state of the decode rows
  // `slots` from the model's output `step`.
  RowOutputs FinishDecode(const CausalLm::SlotDecode& step, const at::Tensor& slots,
                          bool greedy);
  // A mixed step in one forward: the pack of `items` (staged for
  // `prefill_bucket`) and the decode rows slots_[0, num_slots).
  // Graph-capturable as DecodeRows is.
  MixedOutputs MixedRows(const std::vector<PrefillItem>& items, int64_t prefill_bucket,
                         bool greedy);
  // Points slots_[0, bucket) at the plan's decode rows (the scratch slot
  // past them); returns whether every row is greedy.
  bool SetDecodeSlots(const StepPlan& plan, int64_t bucket, int parity);
  void CaptureGraphs();
  // What adding the smallest pack to a decode step of num_slots rows costs
  // on the device (the mixed graph's time minus the decode graph's, the
  // median of 7 runs on the scratch slot; the decode graph's time goes to
  // full_decode_seconds_); `otherwise` without both graphs. Fills
  // mixed_extra_seconds_ and seconds_per_context_pair_.
  double MixedFixedSeconds(double otherwise);
  // The median device time of 7 runs of the mixed graph for `bucket` with
  // `items` staged, minus that of the decode graph `decode` (into
  // decode_seconds).
  double MixedExtraSeconds(const std::vector<PrefillItem>& items, int64_t bucket,
                           at::cuda::CUDAGraph& decode, std::vector<double>* decode_seconds);
  int64_t BucketFor(int64_t rows) const;
  // Rows [0, count) of a step's outputs into the parity's pinned buffers at
  // `offset`: one kernel (PublishRows) where they are mapped, else two copies.
  void CopyRows(const RowOutputs& rows, int64_t count, int64_t offset, int parity);

  ModelDescription description_;
  std::unique_ptr<CausalLm> model_;
  std::unique_ptr<KvCache> cache_;
  at::Device device_;
  const CudaRunnerOptions options_;
  const int64_t scratch_slot_;
  const bool one_forward_;  // mixed steps in one forward (options and model allow)
  std::vector<int64_t> buckets_;

  SlotState state_;  // device state per slot (see the class comment)
  std::unique_ptr<CudaPrefiller> prefiller_;
  at::Tensor slots_;  // int64 [max bucket]: the decode graphs' static input

  std::array<c10::cuda::CUDAStream, 2> streams_;
  std::array<at::Tensor, 2> pinned_slots_;     // int64 [max bucket]
  std::array<at::Tensor, 2> pinned_tokens_;    // int64 [2 * (num_slots + 1)]
  std::array<at::Tensor, 2> pinned_logprobs_;  // float32
  // Their device pointers (null: not mapped, CopyRows copies): each step's
  // tokens and log-probabilities are written there by a kernel.
  std::array<int64_t*, 2> mapped_tokens_{};
  std::array<float*, 2> mapped_logprobs_{};
  std::array<Events, 4> events_;               // ring indexed by step % 4
  std::vector<int64_t> current_slots_;         // what slots_ holds now
  // Keyed by bucket, greedy and parity: with one_forward_ a decode-only
  // step's rows start at offset 0, so each parity has its own graph that
  // publishes them as its last node (GPT-2 small bf16 N=1 168.5 -> 166.0 us
  // a step against the publishing launch after the graph:
  // docs/results/bench/2026-12-04-h200-folds/; the GPU idle it added between
  // steps went with one hardware queue, see UseOneCudaHardwareQueue); else
  // parity 0 only, and the rows are published after the graph.
  std::map<std::tuple<int64_t, bool, int>, std::unique_ptr<DecodeGraph>> graphs_;
  // Keyed by prefill token bucket and greedy.
  std::map<std::pair<int64_t, bool>, std::unique_ptr<MixedGraph>> mixed_graphs_;
  std::deque<InFlight> in_flight_;
  int64_t next_step_ = 0;
  int64_t decode_steps_ = 0;  // steps launched with decode rows
  // The device time of a decode-only step of the largest bucket: measured at
  // start-up, then a moving average of such steps.
  double full_decode_seconds_ = 0;
  // What adding a prompt of each token bucket (up to 1024) to a decode
  // step of the largest bucket costs, measured at start-up. A mixed step in one
  // forward reports that much of its time as prefilling (the busy time of
  // a step also holds the host's latency when the host is the bottleneck,
  // which is no cost of the pack's tokens), the rest as decoding; larger
  // buckets: full_decode_seconds_ as decoding, the rest as prefilling.
  std::map<int64_t, double> mixed_extra_seconds_;
  // What each (query token, earlier key) pair of a chunk that starts past
  // position 0 adds to mixed_extra_seconds_ (whose prompts start at 0):
  // a late chunk of a long prompt attends to all the tokens before it.
  // Measured at start-up; 0 if unknown.
  double seconds_per_context_pair_ = 0;
  int64_t profiled_decode_step_ = -1;  // see TANDEM_PROFILE_DECODE_STEP
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_CUDA_RUNNER_H_
