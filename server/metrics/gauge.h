#ifndef TANDEM_SERVER_METRICS_GAUGE_H_
#define TANDEM_SERVER_METRICS_GAUGE_H_

#include "server/metrics/atomic_double.h"
#include "server/metrics/client_metric.h"
#include "server/metrics/metric_type.h"

namespace tandem {
namespace metrics {

// A value that can go up and down (queue depth, bytes in use, temperature).
//
// Normally owned by a Family<Gauge> (obtain one with Family::Add()), which
// keeps it alive and at a fixed address for the registry's lifetime.
//
// Thread-safety: all mutators and Value() are lock-free, never allocate, and
// may be called from any number of threads concurrently with Collect().
class Gauge {
 public:
  static constexpr MetricType kMetricType = MetricType::kGauge;

  Gauge() = default;
  explicit Gauge(double value) : value_(value) {}

  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Increment() { value_.Add(1.0); }
  void Increment(double value) { value_.Add(value); }
  void Decrement() { value_.Add(-1.0); }
  void Decrement(double value) { value_.Add(-value); }
  void Set(double value) { value_.Store(value); }

  // Sets the gauge to the current Unix time in seconds.
  void SetToCurrentTime();

  double Value() const { return value_.Load(); }

  // Snapshot for serialization; only `gauge` is filled in.
  ClientMetric Collect() const;

 private:
  AtomicDouble value_;
};

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_GAUGE_H_
