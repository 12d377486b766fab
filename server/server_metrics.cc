#include "server/server_metrics.h"

#include "server/metrics/buckets.h"
#include "server/metrics/family.h"

namespace tandem {
namespace {

// Families are registered once with fixed, valid names; a failure here is a
// programming error caught by the tests, so the result is unwrapped.
template <typename T>
metrics::Family<T>* Must(absl::StatusOr<metrics::Family<T>*> family) {
  return family.ok() ? *family : nullptr;
}

// Step-scale buckets: 10 µs .. ~40 s, x2 per bucket.
std::vector<double> StepBuckets() { return metrics::ExponentialBuckets(1e-5, 2, 22); }
// Request-scale buckets: 1 ms .. ~9 min.
std::vector<double> RequestBuckets() { return metrics::ExponentialBuckets(1e-3, 2, 20); }

}  // namespace

ServerMetrics::ServerMetrics(BuildInfo build) : build_(std::move(build)) {
  metrics::Registry& r = registry_;
  auto* requests = Must(r.AddCounterFamily(
      "tandem_requests_total", "Requests by how they ended (rejected: refused before queueing)."));
  for (FinishReason reason : {FinishReason::kStop, FinishReason::kLength,
                              FinishReason::kCancelled, FinishReason::kDeadline,
                              FinishReason::kShutdown, FinishReason::kError}) {
    finished_[static_cast<int>(reason)] =
        &requests->Add({{"finish_reason", std::string(FinishReasonName(reason))}});
  }
  rejected_ = &requests->Add({{"finish_reason", "rejected"}});
  auto histogram = [&](const char* name, const char* help, std::vector<double> buckets) {
    return &Must(r.AddHistogramFamily(name, help, std::move(buckets)))->Add({});
  };
  queue_seconds_ = histogram("tandem_request_queue_seconds",
                             "Time from arrival to the start of prefill.", RequestBuckets());
  ttft_seconds_ = histogram("tandem_time_to_first_token_seconds",
                            "Time from arrival to the first generated token.", RequestBuckets());
  inter_token_seconds_ = histogram("tandem_inter_token_latency_seconds",
                                   "Time between consecutive tokens of a sequence.", StepBuckets());
  request_seconds_ = histogram("tandem_request_duration_seconds",
                               "Time from arrival to the last token.", RequestBuckets());
  prompt_tokens_ = &Must(r.AddCounterFamily("tandem_prompt_tokens_total",
                                            "Prompt tokens prefilled."))->Add({});
  generation_tokens_ = &Must(r.AddCounterFamily("tandem_generation_tokens_total",
                                                "Tokens generated."))->Add({});
  auto gauge = [&](const char* name, const char* help) {
    return &Must(r.AddGaugeFamily(name, help))->Add({});
  };
  running_ = gauge("tandem_requests_running", "Requests holding a KV slot.");
  waiting_ = gauge("tandem_requests_waiting", "Requests waiting for a KV slot.");
  slots_used_ = gauge("tandem_kv_slots_used", "KV slots in use.");
  slots_total_ = gauge("tandem_kv_slots_capacity", "KV slots allocated (named _capacity, not _total: promtool reserves _total for counters).");
  auto* step_duration = Must(r.AddHistogramFamily(
      "tandem_step_duration_seconds", "Wall time of the prefill and decode parts of engine steps.",
      StepBuckets()));
  prefill_step_seconds_ = &step_duration->Add({{"phase", "prefill"}});
  decode_step_seconds_ = &step_duration->Add({{"phase", "decode"}});
  step_batch_size_ = histogram("tandem_step_batch_size", "Sequences in each decode step.",
                               metrics::ExponentialBuckets(1, 2, 11));
  step_gpu_idle_seconds_ = histogram(
      "tandem_step_gpu_idle_seconds",
      "GPU idle time between the end of the previous step and the start of this one "
      "(0 on the CPU).", StepBuckets());
  gpu_idle_seconds_total_ = &Must(r.AddCounterFamily(
      "tandem_gpu_idle_seconds_total", "Sum of GPU idle time before steps."))->Add({});
  gpu_busy_seconds_total_ = &Must(r.AddCounterFamily(
      "tandem_gpu_busy_seconds_total",
      "Sum of GPU busy time in steps (on the CPU: step wall time)."))->Add({});
  step_host_wait_seconds_ = histogram(
      "tandem_step_host_wait_seconds",
      "Time the engine thread blocked waiting for the device in each step.", StepBuckets());
  build_info_ = Must(r.AddGaugeFamily("tandem_build_info", "Build and model information; value 1."));
}

void ServerMetrics::OnModelLoaded(const std::string& device, const std::string& model,
                                  const std::string& dtype, int kv_slots) {
  build_info_
      ->Add({{"version", build_.version}, {"torch", build_.torch}, {"cuda", build_.cuda},
             {"device", device}, {"model", model}, {"dtype", dtype}})
      .Set(1);
  slots_total_->Set(kv_slots);
}

void ServerMetrics::OnStep(const StepStats& stats) {
  const StepTimings& t = stats.timings;
  if (stats.prefill_sequences > 0) {
    prefill_step_seconds_->Observe(t.prefill_seconds);
    prompt_tokens_->Increment(stats.prefill_tokens);
  }
  if (stats.decode_sequences > 0) {
    decode_step_seconds_->Observe(t.decode_seconds);
    step_batch_size_->Observe(stats.decode_sequences);
  }
  generation_tokens_->Increment(stats.generated_tokens);
  step_gpu_idle_seconds_->Observe(t.gpu_idle_seconds);
  gpu_idle_seconds_total_->Increment(t.gpu_idle_seconds);
  gpu_busy_seconds_total_->Increment(t.gpu_busy_seconds);
  step_host_wait_seconds_->Observe(t.host_wait_seconds);
}

void ServerMetrics::OnLoad(const EngineLoad& load) {
  running_->Set(load.running);
  waiting_->Set(load.waiting);
  slots_used_->Set(load.running);
}

void ServerMetrics::OnRequestFinished(const GenerationSummary& summary) {
  finished_[static_cast<int>(summary.reason)]->Increment();
  queue_seconds_->Observe(summary.queue_seconds);
  if (summary.completion_tokens > 0) {
    ttft_seconds_->Observe(summary.time_to_first_token_seconds);
  }
  request_seconds_->Observe(summary.total_seconds);
}

void ServerMetrics::OnInterTokenLatency(double seconds) {
  inter_token_seconds_->Observe(seconds);
}

void ServerMetrics::OnRejected() { rejected_->Increment(); }

}  // namespace tandem
