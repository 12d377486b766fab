#include "core/model/cuda/cuda_runner.h"

#include <algorithm>
#include <exception>
#include <string>

#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/model/cuda/decode_ops.h"
#include "core/model/cuda/decode_kernels.h"
#include "core/base/logging.h"
#include "core/model/prefill_pack.h"
#include "core/model/sampler.h"

namespace tandem {
namespace {

void Check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(absl::StrCat(what, ": ", cudaGetErrorString(status)));
  }
}

double ElapsedSeconds(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0;
  Check(cudaEventElapsedTime(&ms, from, to), "cudaEventElapsedTime");
  return ms / 1000.0;
}

// The largest power of two <= n (n >= 1).
int64_t PowerOfTwoBelow(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// Token counts packs are padded to: 16, 32, 64, 128, then steps of a
// quarter of the power of two below (at least 64), up to `largest`.
std::vector<int64_t> PrefillBuckets(int64_t largest) {
  std::vector<int64_t> buckets;
  for (int64_t b = 16;; b = b < 128 ? 2 * b : b + std::max<int64_t>(64, PowerOfTwoBelow(b) / 4)) {
    buckets.push_back(std::min(b, largest));
    if (b >= largest) return buckets;
  }
}

at::Tensor Pinned(int64_t n, at::ScalarType dtype) {
  return at::empty({n}, at::TensorOptions().dtype(dtype).pinned_memory(true));
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
      streams_{c10::cuda::getStreamFromPool(false, device.index()),
               c10::cuda::getStreamFromPool(false, device.index())} {
  c10::InferenceMode inference_mode;
  c10::cuda::CUDAGuard device_guard(device_);
  for (int64_t b = 1; b < description_.num_slots; b *= 2) buckets_.push_back(b);
  buckets_.push_back(description_.num_slots);
  // A pack holds at most one chunk per slot, each within the context.
  prefill_buckets_ = PrefillBuckets(std::min<int64_t>(
      std::max(options_.max_prefill_tokens, 1), description_.num_slots * cache_->max_context()));
  const auto longs = at::TensorOptions().dtype(at::kLong).device(device_);
  const auto floats = at::TensorOptions().dtype(at::kFloat).device(device_);
  const int64_t pack_longs = 3 * prefill_buckets_.back() + description_.num_slots +
                             4 * MaxPrefillTiles(prefill_buckets_.back(), description_.num_slots);
  pack_inputs_ = at::zeros({pack_longs}, longs);
  for (at::Tensor& staging : pinned_pack_) staging = Pinned(pack_longs, at::kLong);
  prefill_logits_ = at::zeros({description_.num_slots, description_.vocab_size}, floats);
  const int64_t states = description_.num_slots + 1;
  next_token_ = at::zeros({states}, longs);
  position_ = at::zeros({states}, longs);
  rng_offset_ = at::zeros({states}, longs);
  temperature_ = at::zeros({states}, floats);
  top_p_ = at::ones({states}, floats);
  min_p_ = at::zeros({states}, floats);
  top_k_ = at::zeros({states}, longs);
  seed_ = at::zeros({states}, longs);
  slots_ = at::full({buckets_.back()}, scratch_slot_, longs);
  current_slots_.assign(buckets_.back(), scratch_slot_);
  const int64_t rows = 2 * states;
  for (int p = 0; p < 2; ++p) {
    pinned_slots_[p] = Pinned(buckets_.back(), at::kLong);
    pinned_tokens_[p] = Pinned(rows, at::kLong);
    pinned_logprobs_[p] = Pinned(rows, at::kFloat);
  }
  for (Events& e : events_) {
    Check(cudaEventCreate(&e.start), "cudaEventCreate");
    Check(cudaEventCreate(&e.mid), "cudaEventCreate");
    Check(cudaEventCreate(&e.end), "cudaEventCreate");
  }
  // The state above, the weights and the KV slots were written on the
  // default stream; the step and capture streams must see them.
  c10::cuda::device_synchronize();
  if (options_.cuda_graphs) CaptureGraphs();
  WarmUpPrefill();  // through the prefill graphs where captured
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
  CausalLm::SlotDecode step =
      model_->DecodeSlots(slots, next_token_, position_, greedy, cache_.get());
  at::Tensor sampled_tokens = step.tokens, logprobs = step.logprobs;
  if (!greedy) {
    const SamplingTensors params{temperature_.index_select(0, slots),
                                 top_k_.index_select(0, slots),
                                 top_p_.index_select(0, slots),
                                 min_p_.index_select(0, slots),
                                 seed_.index_select(0, slots),
                                 rng_offset_.index_select(0, slots)};
    const SampledTensors sampled = Sampler::Sample(step.logits, params, /*all_greedy=*/false);
    sampled_tokens = sampled.tokens;
    logprobs = sampled.logprobs;
  }
  // Next token, position and RNG offset advance on the device.
  const SlotStatePointers state{next_token_.data_ptr<int64_t>(), position_.data_ptr<int64_t>(),
                                rng_offset_.data_ptr<int64_t>(), scratch_slot_};
  AdvanceSlots(state, slots, sampled_tokens);
  return {sampled_tokens, logprobs};
}

int64_t CudaRunner::PrefillBucketFor(int64_t tokens) const {
  auto it = std::lower_bound(prefill_buckets_.begin(), prefill_buckets_.end(), tokens);
  if (it != prefill_buckets_.end()) return *it;
  return (tokens + 1023) / 1024 * 1024;  // beyond the warmed sizes
}

PrefillPack CudaRunner::StaticPack(int64_t bucket) const {
  const int64_t largest = prefill_buckets_.back(), S = description_.num_slots;
  PrefillPack pack;
  pack.num_tokens = pack.padded_tokens = bucket;
  pack.num_segments = pack.padded_segments = S;
  pack.num_tiles = MaxPrefillTiles(bucket, S);
  pack.tokens = pack_inputs_.narrow(0, 0, bucket);
  pack.positions = pack_inputs_.narrow(0, largest, bucket);
  pack.slots = pack_inputs_.narrow(0, 2 * largest, bucket);
  pack.last_rows = pack_inputs_.narrow(0, 3 * largest, S);
  pack.tiles = pack_inputs_.narrow(0, 3 * largest + S, 4 * pack.num_tiles).view({pack.num_tiles, 4});
  return pack;
}

PrefillArrays CudaRunner::StagingArrays(int parity, int64_t bucket) {
  (void)bucket;  // one layout for every bucket: the largest one's
  const int64_t largest = prefill_buckets_.back(), S = description_.num_slots;
  int64_t* base = pinned_pack_[parity].data_ptr<int64_t>();
  return {base, base + largest, base + 2 * largest, base + 3 * largest, base + 3 * largest + S};
}

CudaRunner::RowOutputs CudaRunner::Prefill(const std::vector<PrefillItem>& items, int parity) {
  std::vector<PrefillSegment> segments;
  int64_t tokens = 0;
  for (const PrefillItem& item : items) {
    segments.push_back({item.slot, item.start, item.tokens});
    tokens += static_cast<int64_t>(item.tokens.size());
  }
  const auto rows = static_cast<int64_t>(items.size());
  const int64_t padded_rows = BucketFor(rows);
  const int64_t bucket = PrefillBucketFor(tokens);
  at::Tensor logits;  // [padded_rows, V]
  if (auto graph = prefill_graphs_.find(bucket); graph != prefill_graphs_.end()) {
    FillPrefillArrays(segments, bucket, description_.num_slots,
                      MaxPrefillTiles(bucket, description_.num_slots), scratch_slot_,
                      StagingArrays(parity, bucket));
    pack_inputs_.copy_(pinned_pack_[parity], /*non_blocking=*/true);
    graph->second->replay();
    logits = prefill_logits_.narrow(0, 0, padded_rows);
  } else {
    const PrefillPack pack = MakePrefillPack(std::move(segments), device_, bucket, padded_rows);
    logits = model_->PrefillPacked(pack, cache_.get());
  }
  // Per-row sampling inputs and the slot state to write, in two host
  // buffers (one copy each). Padding rows are greedy and write the scratch
  // slot, as do chunks that do not end their prompt.
  const auto pinned = [](at::ScalarType type, int64_t n) {
    return at::zeros({n}, at::TensorOptions().dtype(type).pinned_memory(true));
  };
  at::Tensor floats = pinned(at::kFloat, 3 * padded_rows);
  at::Tensor longs = pinned(at::kLong, 5 * padded_rows);
  float* f = floats.data_ptr<float>();
  int64_t* l = longs.data_ptr<int64_t>();
  bool all_greedy = true;
  for (int64_t r = 0; r < padded_rows; ++r) {
    const PrefillItem* item = r < rows ? &items[r] : nullptr;
    const SamplingParams p = item ? item->sampling.params : SamplingParams{};
    // The scratch slot's state stays at position 0 (warm-up packs use it).
    const bool sets_state = item && item->last_chunk && item->slot != scratch_slot_;
    f[r] = item ? p.temperature : 0.0f;
    f[padded_rows + r] = p.top_p;
    f[2 * padded_rows + r] = p.min_p;
    l[r] = p.top_k;
    l[padded_rows + r] = static_cast<int64_t>(p.seed);
    l[2 * padded_rows + r] = item ? item->sampling.rng_offset : 0;
    l[3 * padded_rows + r] = sets_state ? item->slot : scratch_slot_;
    l[4 * padded_rows + r] = sets_state ? item->end() : 0;
    all_greedy &= f[r] <= 0;
  }
  const at::Tensor f_dev = floats.to(device_, /*non_blocking=*/true);
  const at::Tensor l_dev = longs.to(device_, /*non_blocking=*/true);
  auto part = [padded_rows](const at::Tensor& t, int i) {
    return t.narrow(0, i * padded_rows, padded_rows);
  };
  const SamplingTensors params{part(f_dev, 0), part(l_dev, 0), part(f_dev, 1),
                               part(f_dev, 2), part(l_dev, 1), part(l_dev, 2)};
  const SampledTensors sampled = Sampler::Sample(logits, params, all_greedy);
  // The decode state of each slot whose prompt ended: its first decode
  // step feeds the sampled token at position end(), sampling offset 1.
  const at::Tensor state_slots = part(l_dev, 3);
  next_token_.index_put_({state_slots}, sampled.tokens);
  position_.index_put_({state_slots}, part(l_dev, 4));
  rng_offset_.index_fill_(0, state_slots, 1);
  temperature_.index_put_({state_slots}, params.temperature);
  top_k_.index_put_({state_slots}, params.top_k);
  top_p_.index_put_({state_slots}, params.top_p);
  min_p_.index_put_({state_slots}, params.min_p);
  seed_.index_put_({state_slots}, params.seed);
  return {sampled.tokens, sampled.logprobs};
}

void CudaRunner::WarmUpPrefill() {
  const absl::Time start = absl::Now();
  const int64_t context = cache_->max_context();
  const std::vector<int32_t> zeros(static_cast<size_t>(prefill_buckets_.back()), 0);
  auto run = [&](int64_t tokens, int64_t segments, bool greedy) {
    std::vector<PrefillItem> items(static_cast<size_t>(segments));
    int64_t offset = 0;
    for (int64_t i = 0; i < segments; ++i) {
      const int64_t length = tokens / segments + (i < tokens % segments ? 1 : 0);
      PrefillItem& item = items[i];
      item.slot = static_cast<int32_t>(scratch_slot_);
      item.tokens = absl::MakeConstSpan(zeros).subspan(offset, length);
      item.sampling.params.temperature = greedy ? 0.0f : 1.0f;
      offset += length;
    }
    Prefill(items, /*parity=*/0);
    c10::cuda::device_synchronize();  // staging 0 is reused by the next run
  };
  for (int64_t tokens : prefill_buckets_) {
    run(tokens, (tokens + context - 1) / context, /*greedy=*/true);
  }
  for (int64_t segments : buckets_) {
    for (bool greedy : {true, false}) run(segments, segments, greedy);
  }
  c10::cuda::device_synchronize();
  LogInfo("ran ", prefill_buckets_.size(), " prefill token buckets (up to ",
          prefill_buckets_.back(), " tokens) and ", buckets_.size(), " row buckets in ",
          absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Milliseconds(1))));
}

void CudaRunner::CaptureGraphs() {
  // Captured at start-up, largest bucket first, into one shared pool. slots_
  // holds only the scratch slot, so warm-up runs touch no real sequence.
  const absl::Time start = absl::Now();
  graph_pool_ = at::cuda::graph_pool_handle();
  const auto pool = graph_pool_;
  c10::cuda::CUDAStream capture_stream = c10::cuda::getStreamFromPool(false, device_.index());
  c10::cuda::CUDAStreamGuard guard(capture_stream);
  if (model_->GraphablePrefill()) {
    for (auto it = prefill_buckets_.rbegin(); it != prefill_buckets_.rend(); ++it) {
      CapturePrefillGraph(*it, capture_stream);
    }
  }
  for (auto it = buckets_.rbegin(); it != buckets_.rend(); ++it) {
    for (bool greedy : {true, false}) {
      auto graph = std::make_unique<DecodeGraph>();
      try {
        DecodeRows(*it, greedy);  // warm-up: cuBLAS handles, allocator
        capture_stream.synchronize();
        graph->graph.capture_begin(pool);
        graph->outputs = DecodeRows(*it, greedy);
        graph->graph.capture_end();
        graphs_[{*it, greedy}] = std::move(graph);
      } catch (const std::exception& e) {
        LogWarning("CUDA graph capture failed for batch ", *it,
                   greedy ? " (greedy)" : " (sampling)", "; that bucket runs eagerly: ",
                   e.what());
      }
    }
  }
  capture_stream.synchronize();
  LogInfo("captured ", graphs_.size(), " decode graphs (batch buckets up to ",
          buckets_.back(), ") and ", prefill_graphs_.size(), " prefill graphs (up to ",
          prefill_buckets_.back(), " tokens) in ",
          absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Milliseconds(1))));
}

void CudaRunner::CapturePrefillGraph(int64_t bucket, c10::cuda::CUDAStream stream) {
  // Inputs: all padding (the scratch slot), so the warm-up run and the
  // capture touch no sequence. Staging 0 is free: no step has run yet.
  FillPrefillArrays({}, bucket, description_.num_slots,
                    MaxPrefillTiles(bucket, description_.num_slots), scratch_slot_,
                    StagingArrays(0, bucket));
  pack_inputs_.copy_(pinned_pack_[0], /*non_blocking=*/true);
  const PrefillPack pack = StaticPack(bucket);
  try {
    model_->PrefillPacked(pack, cache_.get());  // warm-up: cuBLAS plans, allocator
    stream.synchronize();
    auto graph = std::make_unique<at::cuda::CUDAGraph>();
    graph->capture_begin(graph_pool_);
    prefill_logits_.copy_(model_->PrefillPacked(pack, cache_.get()));
    graph->capture_end();
    prefill_graphs_[bucket] = std::move(graph);
  } catch (const std::exception& e) {
    LogWarning("CUDA graph capture failed for prefill bucket ", bucket,
               " tokens; it runs eagerly: ", e.what());
  }
}

void CudaRunner::CopyRows(const RowOutputs& rows, int64_t count, int64_t offset,
                              int parity) {
  pinned_tokens_[parity].narrow(0, offset, count).copy_(rows.tokens.narrow(0, 0, count), true);
  pinned_logprobs_[parity].narrow(0, offset, count).copy_(rows.logprobs.narrow(0, 0, count), true);
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
      Check(cudaStreamWaitEvent(stream.stream(), events_[(index - 1) % 4].end, 0),
            "cudaStreamWaitEvent");
    }
    Check(cudaEventRecord(events.start, stream.stream()), "cudaEventRecord");
    const auto row = static_cast<int64_t>(plan.prefills.size());
    if (row > 0) CopyRows(Prefill(plan.prefills, parity), row, 0, parity);
    Check(cudaEventRecord(events.mid, stream.stream()), "cudaEventRecord");
    const auto rows = static_cast<int64_t>(plan.decodes.size());
    if (rows > 0) {
      const int64_t bucket = BucketFor(rows);
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
      auto graph = graphs_.find({bucket, greedy});
      if (graph != graphs_.end()) {
        graph->second->graph.replay();
        CopyRows(graph->second->outputs, rows, row, parity);
      } else {
        CopyRows(DecodeRows(bucket, greedy), rows, row, parity);
      }
    }
    Check(cudaEventRecord(events.end, stream.stream()), "cudaEventRecord");
    in_flight_.push_back({index, static_cast<int>(plan.prefills.size()),
                          static_cast<int>(rows), plan.follows_idle});
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
    Check(cudaEventSynchronize(events.end), "cudaEventSynchronize");
    StepOutput output;
    output.timings.host_wait_seconds = absl::ToDoubleSeconds(absl::Now() - wait_start);
    output.timings.prefill_seconds = ElapsedSeconds(events.start, events.mid);
    output.timings.decode_seconds = ElapsedSeconds(events.mid, events.end);
    output.timings.gpu_busy_seconds = ElapsedSeconds(events.start, events.end);
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
