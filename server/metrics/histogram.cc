#include "server/metrics/histogram.h"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace tandem {
namespace metrics {

Histogram::Histogram(BucketBoundaries bucket_boundaries)
    : bucket_boundaries_(std::move(bucket_boundaries)),
      bucket_counts_(
          new std::atomic<std::uint64_t>[bucket_boundaries_.size() + 1]) {
  for (std::size_t i = 0; i <= bucket_boundaries_.size(); ++i) {
    bucket_counts_[i].store(0, std::memory_order_relaxed);
  }
}

void Histogram::Observe(double value) {
  // First bound with value <= bound. Written as partition_point on
  // !(value <= bound) so that NaN (all comparisons false) maps to +Inf.
  const auto it =
      std::partition_point(bucket_boundaries_.begin(), bucket_boundaries_.end(),
                           [value](double bound) { return !(value <= bound); });
  const std::size_t index = it - bucket_boundaries_.begin();
  bucket_counts_[index].fetch_add(1, std::memory_order_relaxed);
  sum_.Add(value);
}

ClientMetric Histogram::Collect() const {
  ClientMetric metric;
  ClientMetric::Histogram& out = metric.histogram;
  out.bucket.reserve(bucket_boundaries_.size());
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bucket_boundaries_.size(); ++i) {
    cumulative += bucket_counts_[i].load(std::memory_order_relaxed);
    ClientMetric::Bucket bucket;
    bucket.cumulative_count = cumulative;
    bucket.upper_bound = bucket_boundaries_[i];
    out.bucket.push_back(bucket);
  }
  cumulative +=
      bucket_counts_[bucket_boundaries_.size()].load(std::memory_order_relaxed);
  out.sample_count = cumulative;
  out.sample_sum = sum_.Load();
  return metric;
}

}  // namespace metrics
}  // namespace tandem
