#ifndef TANDEM_SERVER_METRICS_METRIC_TYPE_H_
#define TANDEM_SERVER_METRICS_METRIC_TYPE_H_

namespace tandem {
namespace metrics {

// The Prometheus metric types this library implements.
enum class MetricType {
  kCounter,
  kGauge,
  kHistogram,
};

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_METRIC_TYPE_H_
