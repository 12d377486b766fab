#ifndef TANDEM_SERVER_METRICS_BUCKETS_H_
#define TANDEM_SERVER_METRICS_BUCKETS_H_

#include <vector>

#include "absl/status/status.h"

namespace tandem {
namespace metrics {

// Histogram bucket layouts. A layout lists the finite upper bounds (le,
// inclusive) in strictly increasing order; the +Inf bucket is implicit and
// must not be listed.
//
// The generators never fail: nonsensical arguments (start <= 0 or
// factor <= 1 for exponential, width <= 0 for linear, NaN) produce a layout
// that ValidateBucketBoundaries() -- and therefore the registry/builder --
// rejects with a Status. count <= 0 yields an empty layout (only +Inf).

// {start, start*factor, start*factor^2, ...}, `count` entries.
std::vector<double> ExponentialBuckets(double start, double factor, int count);

// {start, start+width, start+2*width, ...}, `count` entries.
std::vector<double> LinearBuckets(double start, double width, int count);

// The Prometheus client default: {.005, .01, .025, .05, .1, .25, .5, 1, 2.5,
// 5, 10} (seconds).
std::vector<double> DefaultBuckets();

// OK iff every bound is finite and the bounds are strictly increasing.
absl::Status ValidateBucketBoundaries(const std::vector<double>& boundaries);

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_BUCKETS_H_
