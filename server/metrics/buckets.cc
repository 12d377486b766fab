#include "server/metrics/buckets.h"

#include <cmath>
#include <cstddef>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tandem {
namespace metrics {

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> buckets;
  if (count <= 0) return buckets;
  buckets.reserve(count);
  double bound = start;
  for (int i = 0; i < count; ++i) {
    buckets.push_back(bound);
    bound *= factor;
  }
  return buckets;
}

std::vector<double> LinearBuckets(double start, double width, int count) {
  std::vector<double> buckets;
  if (count <= 0) return buckets;
  buckets.reserve(count);
  for (int i = 0; i < count; ++i) {
    // Multiply rather than accumulate so rounding errors do not add up.
    buckets.push_back(start + i * width);
  }
  return buckets;
}

std::vector<double> DefaultBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

absl::Status ValidateBucketBoundaries(const std::vector<double>& boundaries) {
  for (std::size_t i = 0; i < boundaries.size(); ++i) {
    if (!std::isfinite(boundaries[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bucket boundary #", i, " is ", boundaries[i],
          "; boundaries must be finite (the +Inf bucket is implicit)"));
    }
    if (i > 0 && !(boundaries[i - 1] < boundaries[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bucket boundaries must be strictly increasing, but #", i - 1, " is ",
          boundaries[i - 1], " and #", i, " is ", boundaries[i]));
    }
  }
  return absl::OkStatus();
}

}  // namespace metrics
}  // namespace tandem
