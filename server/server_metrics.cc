#include "server/server_metrics.h"

#include <cmath>
#include <utility>

namespace tandem {
namespace {

using prometheus::Histogram;

// start, start * factor, ... (count bounds), as the dashboard's buckets.
Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count) {
  Histogram::BucketBoundaries bounds;
  for (int i = 0; i < count; ++i) bounds.push_back(start * std::pow(factor, i));
  return bounds;
}

// Step-scale buckets: 10 µs .. ~40 s, x2 per bucket.
Histogram::BucketBoundaries StepBuckets() { return ExponentialBuckets(1e-5, 2, 22); }
// Request-scale buckets: 1 ms .. ~9 min.
Histogram::BucketBoundaries RequestBuckets() { return ExponentialBuckets(1e-3, 2, 20); }

}  // namespace

ServerMetrics::ServerMetrics(BuildInfo build)
    : build_(std::move(build)), registry_(std::make_shared<prometheus::Registry>()) {
  prometheus::Registry& r = *registry_;
  auto& requests =
      prometheus::BuildCounter()
          .Name("tandem_requests_total")
          .Help("Requests by how they ended (rejected: refused before queueing).")
          .Register(r);
  for (FinishReason reason : {FinishReason::kStop, FinishReason::kLength,
                              FinishReason::kCancelled, FinishReason::kDeadline,
                              FinishReason::kShutdown, FinishReason::kError}) {
    finished_[static_cast<int>(reason)] =
        &requests.Add({{"finish_reason", std::string(FinishReasonName(reason))}});
  }
  rejected_ = &requests.Add({{"finish_reason", "rejected"}});
  auto histogram = [&](const char* name, const char* help, Histogram::BucketBoundaries buckets) {
    return &prometheus::BuildHistogram().Name(name).Help(help).Register(r).Add({}, buckets);
  };
  auto counter = [&](const char* name, const char* help) {
    return &prometheus::BuildCounter().Name(name).Help(help).Register(r).Add({});
  };
  auto gauge = [&](const char* name, const char* help) {
    return &prometheus::BuildGauge().Name(name).Help(help).Register(r).Add({});
  };
  queue_seconds_ = histogram("tandem_request_queue_seconds",
                             "Time from arrival to the start of prefill.", RequestBuckets());
  ttft_seconds_ = histogram("tandem_time_to_first_token_seconds",
                            "Time from arrival to the first generated token.", RequestBuckets());
  inter_token_seconds_ = histogram("tandem_inter_token_latency_seconds",
                                   "Time between consecutive tokens of a sequence.", StepBuckets());
  request_seconds_ = histogram("tandem_request_duration_seconds",
                               "Time from arrival to the last token.", RequestBuckets());
  prompt_tokens_ = counter("tandem_prompt_tokens_total", "Prompt tokens prefilled.");
  generation_tokens_ = counter("tandem_generation_tokens_total", "Tokens generated.");
  running_ = gauge("tandem_requests_running", "Requests holding a KV slot.");
  waiting_ = gauge("tandem_requests_waiting", "Requests waiting for a KV slot.");
  slots_used_ = gauge("tandem_kv_slots_used", "KV slots in use.");
  kv_usage_ = gauge("tandem_kv_cache_usage_ratio",
                    "Fraction of the KV cache in use (0 to 1): KV slots in use over KV slots "
                    "allocated, slots being static. For load balancers' endpoint pickers.");
  slots_total_ = gauge("tandem_kv_slots_capacity",
                       "KV slots allocated (named _capacity, not _total: promtool reserves "
                       "_total for counters).");
  auto& step_duration =
      prometheus::BuildHistogram()
          .Name("tandem_step_duration_seconds")
          .Help("Wall time of the prefill and decode parts of engine steps.")
          .Register(r);
  prefill_step_seconds_ = &step_duration.Add({{"phase", "prefill"}}, StepBuckets());
  decode_step_seconds_ = &step_duration.Add({{"phase", "decode"}}, StepBuckets());
  step_batch_size_ = histogram("tandem_step_batch_size", "Sequences in each decode step.",
                               ExponentialBuckets(1, 2, 11));
  step_prefill_tokens_ = histogram("tandem_step_prefill_tokens",
                                   "Prompt tokens prefilled in each step that prefilled.",
                                   ExponentialBuckets(16, 2, 12));
  prefill_partial_chunks_ = counter(
      "tandem_prefill_partial_chunks_total",
      "Prompt chunks prefilled that did not end their prompt (prompts split across steps).");
  mixed_steps_ = counter("tandem_mixed_steps_total",
                         "Steps that prefilled prompt tokens and decoded running sequences.");
  prefill_budget_ = gauge("tandem_prefill_budget_tokens",
                          "Prompt tokens a step may prefill while sequences decode (adapted "
                          "to the measured cost, see --prefill_stall_ratio).");
  step_gpu_idle_seconds_ = histogram(
      "tandem_step_gpu_idle_seconds",
      "GPU idle time between the end of the previous step and the start of this one "
      "(0 on the CPU).", StepBuckets());
  gpu_idle_seconds_total_ =
      counter("tandem_gpu_idle_seconds_total", "Sum of GPU idle time before steps.");
  gpu_busy_seconds_total_ = counter("tandem_gpu_busy_seconds_total",
                                    "Sum of GPU busy time in steps (on the CPU: step wall time).");
  step_host_wait_seconds_ = histogram(
      "tandem_step_host_wait_seconds",
      "Time the engine thread blocked waiting for the device in each step.", StepBuckets());
  step_busy_seconds_ = histogram(
      "tandem_step_busy_seconds",
      "Device time of each engine step, prefill and decode together (on the CPU: its wall "
      "time); buckets 25 % apart, to set the longest steps against the median one.",
      ExponentialBuckets(5e-5, 1.25, 60));  // 50 us .. 26 s: long prefills stay below +Inf
  build_info_ = &prometheus::BuildGauge()
                     .Name("tandem_build_info")
                     .Help("Build and model information; value 1.")
                     .Register(r);
}

void ServerMetrics::OnModelLoaded(const std::string& device, const std::string& model,
                                  const std::string& dtype, int kv_slots) {
  build_info_
      ->Add({{"version", build_.version}, {"torch", build_.torch}, {"cuda", build_.cuda},
             {"device", device}, {"model", model}, {"dtype", dtype}})
      .Set(1);
  slots_total_->Set(kv_slots);
  kv_slots_.store(kv_slots);
}

void ServerMetrics::OnStep(const StepStats& stats) {
  const StepTimings& t = stats.timings;
  if (stats.prefill_sequences > 0) {
    prefill_step_seconds_->Observe(t.prefill_seconds);
    prompt_tokens_->Increment(stats.prefill_tokens);
    step_prefill_tokens_->Observe(stats.prefill_tokens);
    prefill_partial_chunks_->Increment(stats.prefill_partial_chunks);
    if (stats.decode_sequences > 0) mixed_steps_->Increment();
  }
  prefill_budget_->Set(stats.prefill_budget);
  if (stats.decode_sequences > 0) {
    decode_step_seconds_->Observe(t.decode_seconds);
    step_batch_size_->Observe(stats.decode_sequences);
  }
  generation_tokens_->Increment(stats.generated_tokens);
  step_gpu_idle_seconds_->Observe(t.gpu_idle_seconds);
  gpu_idle_seconds_total_->Increment(t.gpu_idle_seconds);
  gpu_busy_seconds_total_->Increment(t.gpu_busy_seconds);
  step_host_wait_seconds_->Observe(t.host_wait_seconds);
  step_busy_seconds_->Observe(t.gpu_busy_seconds);
}

void ServerMetrics::OnLoad(const EngineLoad& load) {
  running_->Set(load.running);
  waiting_->Set(load.waiting);
  slots_used_->Set(load.running);
  const int slots = kv_slots_.load();
  kv_usage_->Set(slots > 0 ? static_cast<double>(load.running) / slots : 0.0);
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

void ServerMetrics::OnEndedBeforeStart(FinishReason reason) {
  if (reason == FinishReason::kDeadline || reason == FinishReason::kCancelled) {
    finished_[static_cast<int>(reason)]->Increment();
  } else {
    rejected_->Increment();
  }
}

}  // namespace tandem
