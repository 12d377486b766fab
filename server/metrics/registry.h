#ifndef TANDEM_SERVER_METRICS_REGISTRY_H_
#define TANDEM_SERVER_METRICS_REGISTRY_H_

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/metrics/client_metric.h"
#include "server/metrics/collectable.h"
#include "server/metrics/counter.h"
#include "server/metrics/family.h"
#include "server/metrics/gauge.h"
#include "server/metrics/histogram.h"
#include "server/metrics/metric_family.h"

namespace tandem {
namespace metrics {

// Owns metric families and snapshots them for scraping. Mirrors
// prometheus::Registry; families are usually added through BuildCounter() /
// BuildGauge() / BuildHistogram() (see builder.h) or the Add*Family() methods.
//
// Ownership: the registry owns every family (and through them every child
// metric). Pointers/references handed out stay valid until the registry is
// destroyed; it must outlive every user, including MetricsHttpServer.
//
// Thread-safety: all methods may be called concurrently. Registration and
// Collect() take the registry mutex; metric updates never do.
class Registry : public Collectable {
 public:
  Registry() = default;
  ~Registry() override = default;

  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registers a family. Errors: InvalidArgument for a bad metric name, bad
  // constant label names/values, help text that is not UTF-8, or (histograms)
  // invalid `buckets` or a constant "le" label; AlreadyExists if the name --
  // or, for a histogram, one of name_bucket/name_sum/name_count -- collides
  // with a series name of an existing family.
  absl::StatusOr<Family<Counter>*> AddCounterFamily(
      absl::string_view name, absl::string_view help,
      const Labels& constant_labels = {}) ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<Family<Gauge>*> AddGaugeFamily(
      absl::string_view name, absl::string_view help,
      const Labels& constant_labels = {}) ABSL_LOCKS_EXCLUDED(mu_);

  // `buckets` are the family's default layout, used by Add(labels) without
  // explicit boundaries.
  absl::StatusOr<Family<Histogram>*> AddHistogramFamily(
      absl::string_view name, absl::string_view help,
      std::vector<double> buckets, const Labels& constant_labels = {})
      ABSL_LOCKS_EXCLUDED(mu_);

  // Snapshots of all non-empty families, in registration order.
  std::vector<MetricFamily> Collect() const override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  template <typename T>
  absl::StatusOr<Family<T>*> AddFamily(absl::string_view name,
                                       absl::string_view help,
                                       const Labels& constant_labels,
                                       std::vector<double> buckets)
      ABSL_LOCKS_EXCLUDED(mu_);

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Collectable>> families_ ABSL_GUARDED_BY(mu_);
  // Every series name the families expose (histograms expose four).
  std::set<std::string, std::less<>> series_names_ ABSL_GUARDED_BY(mu_);
};

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_REGISTRY_H_
