#include "core/model/cuda/cuda_runner.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <string>

#include <cuda_profiler_api.h>

#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/model/cuda/cuda_support.h"
#include "core/model/cuda/decode_ops.h"
#include "core/model/cuda/decode_kernels.h"
#include "core/base/logging.h"
#include "core/model/sampler.h"

namespace tandem {
namespace {

double ElapsedSeconds(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0;
  CheckCuda(cudaEventElapsedTime(&ms, from, to), "cudaEventElapsedTime");
  return ms / 1000.0;
}

// The decode step that TANDEM_PROFILE_DECODE_STEP names (its index among
// steps with decode rows), or -1: a profiler started with
// `--profile-from-start off` (ncu, nsys) then records that step alone.
int64_t ProfiledDecodeStep() {
  const char* value = std::getenv("TANDEM_PROFILE_DECODE_STEP");
  return value == nullptr ? -1 : std::atoll(value);
}

}  // namespace

CudaRunner::CudaRunner(ModelDescription description, std::unique_ptr<CausalLm> model,
                       std::unique_ptr<KvCache> cache, at::Device device,
                       CudaRunnerOptions options)
    : description_(std::move(description)),
      model_(std::move(model)),
      cache_(std::move(cache)),
      device_(device),
      options_(options),
      scratch_slot_(description_.num_slots),
      one_forward_(options_.one_forward_mixed_steps && model_->FusesMixedSteps() &&
                   model_->GraphablePrefill()),
      streams_{c10::cuda::getStreamFromPool(false, device.index()),
               c10::cuda::getStreamFromPool(false, device.index())} {
  profiled_decode_step_ = ProfiledDecodeStep();
  c10::InferenceMode inference_mode;
  c10::cuda::CUDAGuard device_guard(device_);
  for (int64_t b = 1; b < description_.num_slots; b *= 2) buckets_.push_back(b);
  buckets_.push_back(description_.num_slots);
  const int64_t states = description_.num_slots + 1;
  const auto longs = at::TensorOptions().dtype(at::kLong).device(device_);
  state_ = SlotState::Zeros(states, device_);
  prefiller_ = std::make_unique<CudaPrefiller>(model_.get(), cache_.get(), &state_,
                                               description_.num_slots,
                                               options_.max_prefill_tokens, device_);
  slots_ = at::full({buckets_.back()}, scratch_slot_, longs);
  current_slots_.assign(buckets_.back(), scratch_slot_);
  const int64_t rows = 2 * states;
  for (int p = 0; p < 2; ++p) {
    pinned_slots_[p] = PinnedBuffer(buckets_.back(), at::kLong);
    pinned_tokens_[p] = PinnedBuffer(rows, at::kLong);
    pinned_logprobs_[p] = PinnedBuffer(rows, at::kFloat);
    mapped_tokens_[p] = static_cast<int64_t*>(MappedHostPointer(pinned_tokens_[p]));
    mapped_logprobs_[p] = static_cast<float*>(MappedHostPointer(pinned_logprobs_[p]));
  }
  for (Events& e : events_) {
    CheckCuda(cudaEventCreate(&e.start), "cudaEventCreate");
    CheckCuda(cudaEventCreate(&e.mid), "cudaEventCreate");
    CheckCuda(cudaEventCreate(&e.end), "cudaEventCreate");
  }
  // The state above, the weights and the KV slots were written on the
  // default stream; the step and capture streams must see them.
  c10::cuda::device_synchronize();
  if (options_.cuda_graphs) CaptureGraphs();
  // Through the prefill graphs where captured; tells the scheduler what a
  // prefill step costs at least.
  description_.prefill_fixed_seconds = prefiller_->WarmUp();
  // While sequences decode, a prefill rides in their step where the model
  // fuses mixed steps: then what that costs is the scheduler's fixed cost.
  if (one_forward_) {
    description_.prefill_fixed_seconds = MixedFixedSeconds(description_.prefill_fixed_seconds);
  }
}

double CudaRunner::MixedExtraSeconds(const std::vector<PrefillItem>& items, int64_t bucket,
                                     at::cuda::CUDAGraph& decode,
                                     std::vector<double>* decode_seconds) {
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device_.index()).stream();
  at::cuda::CUDAGraph& mixed = mixed_graphs_.at({bucket, true})->graph;
  std::array<cudaEvent_t, 3> marks{};
  for (cudaEvent_t& e : marks) CheckCuda(cudaEventCreate(&e), "cudaEventCreate");
  std::vector<double> seconds;
  for (int i = 0; i < 7; ++i) {
    prefiller_->Stage(items, bucket, 0);
    CheckCuda(cudaEventRecord(marks[0], stream), "cudaEventRecord");
    decode.replay();
    CheckCuda(cudaEventRecord(marks[1], stream), "cudaEventRecord");
    mixed.replay();
    CheckCuda(cudaEventRecord(marks[2], stream), "cudaEventRecord");
    CheckCuda(cudaEventSynchronize(marks[2]), "cudaEventSynchronize");  // staging 0 is free
    decode_seconds->push_back(ElapsedSeconds(marks[0], marks[1]));
    seconds.push_back(ElapsedSeconds(marks[1], marks[2]) - decode_seconds->back());
  }
  for (cudaEvent_t e : marks) cudaEventDestroy(e);
  std::sort(seconds.begin(), seconds.end());
  return std::max(0.0, seconds[3]);
}

double CudaRunner::MixedFixedSeconds(double otherwise) {
  const auto decode = graphs_.find({buckets_.back(), true, 0});
  if (decode == graphs_.end()) return otherwise;
  // A prompt of each token bucket up to 1024 into the scratch slot (its
  // attention too; the log shows what a pack's size costs).
  std::vector<double> decode_seconds;
  std::string costs;
  double smallest = -1;
  for (int64_t bucket : prefiller_->buckets()) {
    if (bucket > 1024 || !mixed_graphs_.count({bucket, true})) break;
    const double seconds = MixedExtraSeconds(prefiller_->ScratchItems(bucket), bucket,
                                             decode->second->graph, &decode_seconds);
    if (smallest < 0) smallest = seconds;
    mixed_extra_seconds_[bucket] = seconds;
    absl::StrAppend(&costs, costs.empty() ? "" : ", ", bucket, ": ",
                    absl::StrFormat("%.3f", 1e3 * seconds));
  }
  if (smallest < 0) return otherwise;
  // The same prompt as a chunk ending at the last position of the context:
  // what its attention to the positions before it adds, per pair.
  const int64_t context = cache_->max_context();
  const auto largest = mixed_extra_seconds_.upper_bound(context / 4);
  if (largest != mixed_extra_seconds_.begin()) {
    const int64_t bucket = std::prev(largest)->first;
    std::vector<PrefillItem> late = prefiller_->ScratchItems(bucket);
    late[0].start = static_cast<int32_t>(context - bucket);
    const double seconds =
        MixedExtraSeconds(late, bucket, decode->second->graph, &decode_seconds);
    seconds_per_context_pair_ =
        std::max(0.0, seconds - mixed_extra_seconds_[bucket]) / (bucket * late[0].start);
    absl::StrAppend(&costs, "; ", bucket, " at position ", late[0].start, ": ",
                    absl::StrFormat("%.3f", 1e3 * seconds));
  }
  std::sort(decode_seconds.begin(), decode_seconds.end());
  full_decode_seconds_ = decode_seconds[decode_seconds.size() / 2];
  LogInfo("mixed steps: a decode step of ", buckets_.back(), " rows takes ",
          absl::StrFormat("%.3f", 1e3 * full_decode_seconds_),
          " ms; adding a pack of N prompt tokens costs (N: ms) ", costs);
  return smallest;
}

CudaRunner::~CudaRunner() {
  cudaDeviceSynchronize();
  for (Events& e : events_) {
    cudaEventDestroy(e.start);
    cudaEventDestroy(e.mid);
    cudaEventDestroy(e.end);
  }
}

int64_t CudaRunner::BucketFor(int64_t rows) const {
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), rows);
  return it == buckets_.end() ? rows : *it;  // more rows than slots: the plan is invalid
}

CudaRunner::RowOutputs CudaRunner::DecodeRows(int64_t bucket, bool greedy) {
  const at::Tensor slots = slots_.narrow(0, 0, bucket);
  return FinishDecode(
      model_->DecodeSlots(slots, state_.next_token, state_.position, greedy, cache_.get()), slots,
      greedy);
}

CudaRunner::RowOutputs CudaRunner::FinishDecode(const CausalLm::SlotDecode& step,
                                                const at::Tensor& slots, bool greedy) {
  at::Tensor sampled_tokens = step.tokens, logprobs = step.logprobs;
  if (!greedy) {
    const SamplingTensors params{state_.temperature.index_select(0, slots),
                                 state_.top_k.index_select(0, slots),
                                 state_.top_p.index_select(0, slots),
                                 state_.min_p.index_select(0, slots),
                                 state_.seed.index_select(0, slots),
                                 state_.rng_offset.index_select(0, slots)};
    const SampledTensors sampled = Sampler::Sample(step.logits, params, /*all_greedy=*/false);
    sampled_tokens = sampled.tokens;
    logprobs = sampled.logprobs;
  }
  // Next token, position and RNG offset advance on the device.
  const SlotStatePointers state{state_.next_token.data_ptr<int64_t>(),
                                state_.position.data_ptr<int64_t>(),
                                state_.rng_offset.data_ptr<int64_t>(), scratch_slot_};
  AdvanceSlots(state, slots, sampled_tokens);
  return {sampled_tokens, logprobs};
}

CudaRunner::MixedOutputs CudaRunner::MixedRows(const std::vector<PrefillItem>& items,
                                               int64_t prefill_bucket, bool greedy) {
  // The pack's slots and the decode rows' differ (a sequence prefills or
  // decodes), so the prefill's state writes and the decode rows' advance
  // touch different slots; padding rows of both write the scratch slot only.
  const at::Tensor slots = slots_.narrow(0, 0, buckets_.back());
  const CausalLm::MixedDecode step = model_->DecodeSlotsWithPrefill(
      prefiller_->Pack(items, prefill_bucket), slots, state_.next_token, state_.position, greedy,
      cache_.get());
  MixedOutputs out;
  out.prefill = prefiller_->Finish(step.prefill, greedy);
  out.decode = FinishDecode(step.decode, slots, greedy);
  return out;
}

void CudaRunner::CaptureGraphs() {
  // Captured at start-up, largest bucket first, into one shared pool. slots_
  // holds only the scratch slot, so warm-up runs touch no real sequence.
  const absl::Time start = absl::Now();
  const auto pool = at::cuda::graph_pool_handle();
  c10::cuda::CUDAStream capture_stream = c10::cuda::getStreamFromPool(false, device_.index());
  c10::cuda::CUDAStreamGuard guard(capture_stream);
  prefiller_->CaptureGraphs(pool);
  if (one_forward_) {
    const std::vector<int64_t>& prefill_buckets = prefiller_->buckets();
    for (auto it = prefill_buckets.rbegin(); it != prefill_buckets.rend(); ++it) {
      for (bool greedy : {true, false}) {
        try {
          // Padding only: the pack's rows and slots_ write the scratch slot.
          capture_stream.synchronize();  // staging 0 is reused
          prefiller_->Stage({}, *it, 0);
          MixedRows({}, *it, greedy);  // warm-up: cuBLAS plans, allocator
          capture_stream.synchronize();
          auto graph = std::make_unique<MixedGraph>();
          graph->graph.capture_begin(pool);
          graph->outputs = MixedRows({}, *it, greedy);
          graph->graph.capture_end();
          mixed_graphs_[{*it, greedy}] = std::move(graph);
        } catch (const std::exception& e) {
          LogWarning("CUDA graph capture failed for mixed steps of ", *it, " prompt tokens",
                     greedy ? " (greedy)" : " (sampling)", "; they run eagerly: ", e.what());
        }
      }
    }
  }
  for (auto it = buckets_.rbegin(); it != buckets_.rend(); ++it) {
    for (bool greedy : {true, false}) {
      for (int parity = 0; parity < (one_forward_ ? 2 : 1); ++parity) {
        auto graph = std::make_unique<DecodeGraph>();
        try {
          // Warm-up (cuBLAS handles, allocator), once for both parities.
          if (parity == 0) DecodeRows(*it, greedy);
          capture_stream.synchronize();
          graph->graph.capture_begin(pool);
          graph->outputs = DecodeRows(*it, greedy);
          if (one_forward_) CopyRows(graph->outputs, *it, 0, parity);  // padding rows too
          graph->graph.capture_end();
          graphs_[{*it, greedy, parity}] = std::move(graph);
        } catch (const std::exception& e) {
          LogWarning("CUDA graph capture failed for batch ", *it,
                     greedy ? " (greedy)" : " (sampling)", "; that bucket runs eagerly: ",
                     e.what());
        }
      }
    }
  }
  capture_stream.synchronize();
  LogInfo("captured ", graphs_.size(), " decode graphs (batch buckets up to ",
          buckets_.back(), "), ", prefiller_->num_graphs(), " prefill graphs (up to ",
          prefiller_->buckets().back(), " tokens) and ", mixed_graphs_.size(),
          " mixed-step graphs in ",
          absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Milliseconds(1))));
}

void CudaRunner::CopyRows(const RowOutputs& rows, int64_t count, int64_t offset,
                              int parity) {
  const at::Tensor tokens = rows.tokens.narrow(0, 0, count);
  const at::Tensor logprobs = rows.logprobs.narrow(0, 0, count);
  if (mapped_tokens_[parity] != nullptr && mapped_logprobs_[parity] != nullptr &&
      PublishRowsTakes(tokens, logprobs)) {
    PublishRows(tokens, logprobs, mapped_tokens_[parity] + offset,
                mapped_logprobs_[parity] + offset);
    return;
  }
  pinned_tokens_[parity].narrow(0, offset, count).copy_(tokens, true);
  pinned_logprobs_[parity].narrow(0, offset, count).copy_(logprobs, true);
}

bool CudaRunner::SetDecodeSlots(const StepPlan& plan, int64_t bucket, int parity) {
  const auto rows = static_cast<int64_t>(plan.decodes.size());
  bool greedy = true;
  bool changed = false;
  for (int64_t i = 0; i < bucket; ++i) {
    const int64_t slot = i < rows ? plan.decodes[i].slot : scratch_slot_;
    if (i < rows && plan.decodes[i].sampling.params.temperature > 0) greedy = false;
    changed |= current_slots_[i] != slot;
    current_slots_[i] = slot;
  }
  if (changed) {
    // Refresh the graphs' static slot list only when the batch changed.
    int64_t* pinned = pinned_slots_[parity].data_ptr<int64_t>();
    std::copy_n(current_slots_.begin(), bucket, pinned);
    slots_.narrow(0, 0, bucket).copy_(pinned_slots_[parity].narrow(0, 0, bucket), true);
  }
  return greedy;
}

absl::Status CudaRunner::Launch(const StepPlan& plan) {
  if (in_flight_.size() >= 2) {
    return absl::FailedPreconditionError("two steps are already in flight");
  }
  try {
    c10::InferenceMode inference_mode;
    c10::cuda::CUDAGuard device_guard(device_);
    const int64_t index = next_step_++;
    const int parity = static_cast<int>(index % 2);
    c10::cuda::CUDAStream stream = streams_[parity];
    c10::cuda::CUDAStreamGuard stream_guard(stream);
    const Events& events = events_[index % 4];
    if (index > 0) {
      // Device-side ordering after the previous step; the host does not wait.
      CheckCuda(cudaStreamWaitEvent(stream.stream(), events_[(index - 1) % 4].end, 0),
            "cudaStreamWaitEvent");
    }
    CheckCuda(cudaEventRecord(events.start, stream.stream()), "cudaEventRecord");
    const auto row = static_cast<int64_t>(plan.prefills.size());
    const auto rows = static_cast<int64_t>(plan.decodes.size());
    const bool one_forward = row > 0 && rows > 0 && one_forward_;
    const bool separate_prefill = row > 0 && !one_forward;
    if (separate_prefill) {
      const SampledTensors prefilled = prefiller_->Run(plan.prefills, parity);
      CopyRows({prefilled.tokens, prefilled.logprobs}, row, 0, parity);
      CheckCuda(cudaEventRecord(events.mid, stream.stream()), "cudaEventRecord");
    }
    const bool profiled = rows > 0 && decode_steps_++ == profiled_decode_step_;
    if (profiled) CheckCuda(cudaProfilerStart(), "cudaProfilerStart");
    int64_t prefill_bucket = 0;
    double context_pairs = 0;
    if (one_forward) {
      bool greedy = SetDecodeSlots(plan, buckets_.back(), parity);
      bool prefill_greedy = true;
      prefill_bucket = prefiller_->BucketFor(plan.prefills, &prefill_greedy);
      for (const PrefillItem& item : plan.prefills) {
        context_pairs += static_cast<double>(item.tokens.size()) * item.start;
      }
      greedy &= prefill_greedy;
      prefiller_->Stage(plan.prefills, prefill_bucket, parity);
      auto graph = mixed_graphs_.find({prefill_bucket, greedy});
      MixedOutputs out;
      if (graph != mixed_graphs_.end()) {
        graph->second->graph.replay();
        out = graph->second->outputs;
      } else {
        out = MixedRows(plan.prefills, prefill_bucket, greedy);
      }
      CopyRows({out.prefill.tokens, out.prefill.logprobs}, row, 0, parity);
      CopyRows(out.decode, rows, row, parity);
    } else if (rows > 0) {
      const int64_t bucket = BucketFor(rows);
      const bool greedy = SetDecodeSlots(plan, bucket, parity);
      // With one_forward_ no prompt rows precede these (row is 0).
      auto graph = graphs_.find({bucket, greedy, one_forward_ ? parity : 0});
      if (graph != graphs_.end()) {
        graph->second->graph.replay();
        if (!one_forward_) CopyRows(graph->second->outputs, rows, row, parity);
      } else {
        CopyRows(DecodeRows(bucket, greedy), rows, row, parity);
      }
    }
    if (profiled) CheckCuda(cudaProfilerStop(), "cudaProfilerStop");
    CheckCuda(cudaEventRecord(events.end, stream.stream()), "cudaEventRecord");
    const bool full_bucket = row == 0 && rows > 0 && BucketFor(rows) == buckets_.back();
    in_flight_.push_back({index, static_cast<int>(plan.prefills.size()),
                          static_cast<int>(rows), plan.follows_idle, one_forward, separate_prefill,
                          full_bucket, prefill_bucket, context_pairs});
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("launching a CUDA step failed: ", e.what()));
  }
}

absl::StatusOr<StepOutput> CudaRunner::Collect() {
  if (in_flight_.empty()) return absl::FailedPreconditionError("no step in flight");
  const InFlight step = in_flight_.front();
  in_flight_.pop_front();
  try {
    const Events& events = events_[step.index % 4];
    const absl::Time wait_start = absl::Now();
    CheckCuda(cudaEventSynchronize(events.end), "cudaEventSynchronize");
    StepOutput output;
    output.timings.host_wait_seconds = absl::ToDoubleSeconds(absl::Now() - wait_start);
    output.timings.gpu_busy_seconds = ElapsedSeconds(events.start, events.end);
    if (step.one_forward) {  // split as mixed_extra_seconds_ says
      const double busy = output.timings.gpu_busy_seconds;
      const auto measured = mixed_extra_seconds_.find(step.prefill_bucket);
      output.timings.prefill_seconds =
          measured != mixed_extra_seconds_.end()
              ? std::min(measured->second + seconds_per_context_pair_ * step.context_pairs,
                         0.9 * busy)
              : busy - std::min(full_decode_seconds_, 0.9 * busy);
      output.timings.decode_seconds = busy - output.timings.prefill_seconds;
    } else if (step.separate_prefill) {
      output.timings.prefill_seconds = ElapsedSeconds(events.start, events.mid);
      output.timings.decode_seconds = ElapsedSeconds(events.mid, events.end);
    } else {
      output.timings.decode_seconds = output.timings.gpu_busy_seconds;
    }
    if (step.full_bucket) {
      full_decode_seconds_ = full_decode_seconds_ == 0
                                 ? output.timings.decode_seconds
                                 : 0.9 * full_decode_seconds_ + 0.1 * output.timings.decode_seconds;
    }
    if (step.index > 0 && !step.follows_idle) {
      output.timings.gpu_idle_seconds =
          std::max(0.0, ElapsedSeconds(events_[(step.index - 1) % 4].end, events.start));
    }
    output.timings.wall_seconds =
        output.timings.gpu_busy_seconds + output.timings.gpu_idle_seconds;
    const int parity = static_cast<int>(step.index % 2);
    const int64_t* tokens = pinned_tokens_[parity].data_ptr<int64_t>();
    const float* logprobs = pinned_logprobs_[parity].data_ptr<float>();
    const int rows = step.prefill_rows + step.decode_rows;
    for (int r = 0; r < rows; ++r) {
      const SampledToken sampled{static_cast<int32_t>(tokens[r]), logprobs[r]};
      (r < step.prefill_rows ? output.prefill_tokens : output.decode_tokens).push_back(sampled);
    }
    return output;
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("a CUDA step failed: ", e.what()));
  }
}

absl::StatusOr<StepOutput> CudaRunner::Step(const StepPlan& plan) {
  absl::Status launched = Launch(plan);
  if (!launched.ok()) return launched;
  return Collect();
}

}  // namespace tandem
