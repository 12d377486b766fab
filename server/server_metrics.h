// Tandem's Prometheus metrics: the engine's observer, filling a registry that
// the HTTP endpoint serves.
#ifndef TANDEM_SERVER_SERVER_METRICS_H_
#define TANDEM_SERVER_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <string>

#include <memory>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "core/engine/engine_observer.h"
#include "core/engine/finish_reason.h"

namespace tandem {

struct BuildInfo {
  std::string version, torch, cuda;
};

// Owns (shares) the prometheus-cpp registry and every tandem_* family.
// Threading: the EngineObserver methods run on the engine thread, OnRejected
// on gRPC threads, Collect on HTTP threads; prometheus-cpp's metrics are
// thread-safe. Every child is looked up once, at construction, so the hot
// path does not search families (counters and gauges are atomics; a
// histogram observation takes its own short mutex).
class ServerMetrics : public EngineObserver {
 public:
  explicit ServerMetrics(BuildInfo build);

  // Completes tandem_build_info and tandem_kv_slots_capacity once the model
  // is loaded (the endpoint is up before, answering /readyz with 503).
  void OnModelLoaded(const std::string& device, const std::string& model,
                     const std::string& dtype, int kv_slots);

  void OnStep(const StepStats& stats) override;
  void OnLoad(const EngineLoad& load) override;
  void OnRequestFinished(const GenerationSummary& summary) override;
  void OnInterTokenLatency(double seconds) override;
  // A request refused before it was queued (invalid, queue full, shutting
  // down, unauthenticated): finish_reason="rejected".
  void OnRejected();
  // A call that ended before it could be queued: its deadline passed
  // (kDeadline) or the client gave up (kCancelled); any other reason counts
  // as "rejected".
  void OnEndedBeforeStart(FinishReason reason);

  // Shared with the HTTP /metrics route.
  std::shared_ptr<const prometheus::Registry> registry() const { return registry_; }

 private:
  const BuildInfo build_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Gauge>* build_info_;
  // tandem_requests_total, by FinishReason (indexed by its value), + rejected.
  std::array<prometheus::Counter*, 6> finished_{};
  prometheus::Counter* rejected_;
  prometheus::Histogram* queue_seconds_;
  prometheus::Histogram* ttft_seconds_;
  prometheus::Histogram* inter_token_seconds_;
  prometheus::Histogram* request_seconds_;
  prometheus::Counter* prompt_tokens_;
  prometheus::Counter* generation_tokens_;
  prometheus::Gauge* running_;
  prometheus::Gauge* waiting_;
  prometheus::Gauge* slots_used_;
  prometheus::Gauge* slots_total_;
  prometheus::Gauge* kv_usage_;
  // Set once the model is loaded (main thread), read by OnLoad (engine thread).
  std::atomic<int> kv_slots_{0};
  prometheus::Histogram* prefill_step_seconds_;
  prometheus::Histogram* decode_step_seconds_;
  prometheus::Histogram* step_batch_size_;
  prometheus::Histogram* step_prefill_tokens_;
  prometheus::Counter* prefill_partial_chunks_;
  prometheus::Counter* mixed_steps_;
  prometheus::Gauge* prefill_budget_;
  prometheus::Histogram* step_gpu_idle_seconds_;
  prometheus::Counter* gpu_idle_seconds_total_;
  prometheus::Counter* gpu_busy_seconds_total_;
  prometheus::Histogram* step_host_wait_seconds_;
  prometheus::Histogram* step_busy_seconds_;
};

}  // namespace tandem

#endif  // TANDEM_SERVER_SERVER_METRICS_H_
