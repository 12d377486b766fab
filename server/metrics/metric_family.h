#ifndef TANDEM_SERVER_METRICS_METRIC_FAMILY_H_
#define TANDEM_SERVER_METRICS_METRIC_FAMILY_H_

#include <string>
#include <vector>

#include "server/metrics/client_metric.h"
#include "server/metrics/metric_type.h"

namespace tandem {
namespace metrics {

// A snapshot of a whole family: name, help, type and one ClientMetric per
// label set. Mirrors prometheus::MetricFamily. Plain value type.
struct MetricFamily {
  std::string name;
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<ClientMetric> metric;
};

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_METRIC_FAMILY_H_
