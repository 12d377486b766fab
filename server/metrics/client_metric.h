#ifndef TANDEM_SERVER_METRICS_CLIENT_METRIC_H_
#define TANDEM_SERVER_METRICS_CLIENT_METRIC_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tandem {
namespace metrics {

// Label name -> label value. A std::map so that label sets compare and
// serialize in a stable (sorted) order.
using Labels = std::map<std::string, std::string>;

// A point-in-time snapshot of one child metric (one label set), produced by
// Counter/Gauge/Histogram::Collect() and consumed by TextSerializer. Mirrors
// prometheus::ClientMetric. Only the member matching the family's MetricType
// is meaningful. Plain value type; not synchronized.
struct ClientMetric {
  struct Counter {
    double value = 0.0;
  };

  struct Gauge {
    double value = 0.0;
  };

  struct Bucket {
    // Number of observations <= upper_bound (cumulative, like the exposition
    // format). The implicit +Inf bucket is not listed; its count is
    // Histogram::sample_count.
    std::uint64_t cumulative_count = 0;
    double upper_bound = 0.0;
  };

  struct Histogram {
    std::uint64_t sample_count = 0;
    double sample_sum = 0.0;
    std::vector<Bucket> bucket;
  };

  // All labels of this child, constant family labels included.
  Labels label;
  Counter counter;
  Gauge gauge;
  Histogram histogram;
};

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_CLIENT_METRIC_H_
