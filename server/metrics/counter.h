#ifndef TANDEM_SERVER_METRICS_COUNTER_H_
#define TANDEM_SERVER_METRICS_COUNTER_H_

#include "server/metrics/atomic_double.h"
#include "server/metrics/client_metric.h"
#include "server/metrics/metric_type.h"

namespace tandem {
namespace metrics {

// A monotonically increasing value (requests served, errors, bytes sent).
// Name counter families with a `_total` suffix and base units.
//
// Normally owned by a Family<Counter> (obtain one with Family::Add()), which
// keeps it alive and at a fixed address for the registry's lifetime.
//
// Thread-safety: Increment() and Value() are lock-free, never allocate, and
// may be called from any number of threads concurrently with Collect().
class Counter {
 public:
  static constexpr MetricType kMetricType = MetricType::kCounter;

  Counter() = default;

  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  // Adds 1.
  void Increment() { value_.Add(1.0); }

  // Adds `value`. Negative and NaN increments would break monotonicity and
  // are ignored (as in prometheus-cpp).
  void Increment(double value) {
    if (!(value >= 0.0)) return;
    value_.Add(value);
  }

  double Value() const { return value_.Load(); }

  // Snapshot for serialization; only `counter` is filled in.
  ClientMetric Collect() const;

 private:
  AtomicDouble value_;
};

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_COUNTER_H_
