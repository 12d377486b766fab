// Tandem's Prometheus metrics: the engine's observer, filling a registry that
// the HTTP endpoint serves.
#ifndef TANDEM_SERVER_SERVER_METRICS_H_
#define TANDEM_SERVER_SERVER_METRICS_H_

#include <array>
#include <string>

#include "core/engine/engine_observer.h"
#include "core/engine/finish_reason.h"
#include "server/metrics/counter.h"
#include "server/metrics/gauge.h"
#include "server/metrics/histogram.h"
#include "server/metrics/registry.h"

namespace tandem {

struct BuildInfo {
  std::string version, torch, cuda;
};

// Owns the registry and every tandem_* family. Threading: the EngineObserver
// methods run on the engine thread, OnRejected on gRPC threads; every update
// is a lock-free atomic on a child looked up once, at construction, so the
// hot path neither locks nor allocates.
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
  // A request refused before it was queued (invalid, queue full, shutting down).
  void OnRejected();

  const metrics::Registry& registry() const { return registry_; }

 private:
  const BuildInfo build_;
  metrics::Registry registry_;
  metrics::Family<metrics::Gauge>* build_info_;
  // tandem_requests_total, by FinishReason (indexed by its value), + rejected.
  std::array<metrics::Counter*, 6> finished_{};
  metrics::Counter* rejected_;
  metrics::Histogram* queue_seconds_;
  metrics::Histogram* ttft_seconds_;
  metrics::Histogram* inter_token_seconds_;
  metrics::Histogram* request_seconds_;
  metrics::Counter* prompt_tokens_;
  metrics::Counter* generation_tokens_;
  metrics::Gauge* running_;
  metrics::Gauge* waiting_;
  metrics::Gauge* slots_used_;
  metrics::Gauge* slots_total_;
  metrics::Histogram* prefill_step_seconds_;
  metrics::Histogram* decode_step_seconds_;
  metrics::Histogram* step_batch_size_;
  metrics::Histogram* step_gpu_idle_seconds_;
  metrics::Counter* gpu_idle_seconds_total_;
  metrics::Counter* gpu_busy_seconds_total_;
  metrics::Histogram* step_host_wait_seconds_;
};

}  // namespace tandem

#endif  // TANDEM_SERVER_SERVER_METRICS_H_
