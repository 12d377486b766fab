#ifndef TANDEM_SERVER_METRICS_BUILDER_H_
#define TANDEM_SERVER_METRICS_BUILDER_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/metrics/buckets.h"
#include "server/metrics/client_metric.h"
#include "server/metrics/counter.h"
#include "server/metrics/family.h"
#include "server/metrics/gauge.h"
#include "server/metrics/histogram.h"
#include "server/metrics/metric_type.h"
#include "server/metrics/registry.h"

namespace tandem {
namespace metrics {

// Fluent family registration, close to prometheus-cpp:
//
//   absl::StatusOr<Family<Counter>*> requests =
//       BuildCounter().Name("tandem_requests_total").Help("Requests.")
//           .Labels({{"service", "infer"}}).Register(registry);
//   if (!requests.ok()) return requests.status();
//   Counter& ok = (*requests)->Add({{"code", "OK"}});
//   ok.Increment();
//
// Unlike prometheus-cpp, Register() returns a Status instead of throwing, and
// a histogram builder carries the family's default buckets (Buckets(), else
// DefaultBuckets()).
//
// A plain value type; not thread-safe (build on one thread, Register() into a
// thread-safe Registry).
template <typename T>
class Builder {
 public:
  Builder& Name(absl::string_view name) {
    name_ = std::string(name);
    return *this;
  }

  Builder& Help(absl::string_view help) {
    help_ = std::string(help);
    return *this;
  }

  // Constant labels attached to every child of the family.
  Builder& Labels(const metrics::Labels& labels) {
    labels_ = labels;
    return *this;
  }

  // Histograms only: the default bucket layout.
  Builder& Buckets(std::vector<double> buckets) {
    static_assert(T::kMetricType == MetricType::kHistogram,
                  "Buckets() applies to histogram builders only");
    buckets_ = std::move(buckets);
    return *this;
  }

  // Registers the family; see Registry::Add*Family() for the errors. The
  // returned family is owned by `registry`.
  absl::StatusOr<Family<T>*> Register(Registry& registry) const {
    if constexpr (T::kMetricType == MetricType::kCounter) {
      return registry.AddCounterFamily(name_, help_, labels_);
    } else if constexpr (T::kMetricType == MetricType::kGauge) {
      return registry.AddGaugeFamily(name_, help_, labels_);
    } else {
      return registry.AddHistogramFamily(name_, help_, buckets_, labels_);
    }
  }

 private:
  std::string name_;
  std::string help_;
  metrics::Labels labels_;
  std::vector<double> buckets_ = DefaultBuckets();
};

inline Builder<Counter> BuildCounter() { return Builder<Counter>(); }
inline Builder<Gauge> BuildGauge() { return Builder<Gauge>(); }
inline Builder<Histogram> BuildHistogram() { return Builder<Histogram>(); }

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_BUILDER_H_
