#ifndef TANDEM_SERVER_METRICS_HISTOGRAM_H_
#define TANDEM_SERVER_METRICS_HISTOGRAM_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "server/metrics/atomic_double.h"
#include "server/metrics/client_metric.h"
#include "server/metrics/metric_type.h"

namespace tandem {
namespace metrics {

// Counts observations into buckets with inclusive upper bounds ("le") and
// tracks their sum and count (latencies, sizes).
//
// Normally owned by a Family<Histogram> (obtain one with Family::Add()),
// which validates the bucket layout first and keeps the histogram alive and
// at a fixed address for the registry's lifetime.
//
// Thread-safety: Observe() is lock-free (one relaxed fetch_add on a bucket
// counter plus a CAS loop on the sum), never allocates, and may be called
// from any number of threads concurrently with Collect(). A snapshot taken
// during concurrent Observe() calls is always self-consistent for the counts
// (the +Inf bucket equals sample_count because the count is derived from the
// buckets); the sum may lag or lead the counts by in-flight observations.
class Histogram {
 public:
  using BucketBoundaries = std::vector<double>;

  static constexpr MetricType kMetricType = MetricType::kHistogram;

  // `bucket_boundaries` should satisfy ValidateBucketBoundaries() (finite,
  // strictly increasing); Family::Add() checks that. If it does not, the
  // histogram still behaves safely but the bucket semantics are meaningless.
  explicit Histogram(BucketBoundaries bucket_boundaries);

  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Records one observation: it lands in the first bucket whose upper bound
  // is >= `value` (le is inclusive), else in +Inf. NaN lands in +Inf and
  // makes the sum NaN, as in the Go client.
  void Observe(double value);

  // Snapshot for serialization; only `histogram` is filled in. Bucket counts
  // are cumulative and exclude the implicit +Inf bucket.
  ClientMetric Collect() const;

  const BucketBoundaries& bucket_boundaries() const {
    return bucket_boundaries_;
  }

 private:
  const BucketBoundaries bucket_boundaries_;
  // Non-cumulative per-bucket counts; index bucket_boundaries_.size() is the
  // +Inf bucket. Allocated once in the constructor.
  const std::unique_ptr<std::atomic<std::uint64_t>[]> bucket_counts_;
  AtomicDouble sum_;
};

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_HISTOGRAM_H_
