#include "server/metrics/registry.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/metrics/buckets.h"
#include "server/metrics/name_validation.h"

namespace tandem {
namespace metrics {

template <typename T>
absl::StatusOr<Family<T>*> Registry::AddFamily(absl::string_view name,
                                               absl::string_view help,
                                               const Labels& constant_labels,
                                               std::vector<double> buckets) {
  if (absl::Status status = ValidateMetricName(name); !status.ok()) {
    return status;
  }
  if (absl::Status status =
          ValidateUtf8(help, absl::StrCat("help of metric ", name));
      !status.ok()) {
    return status;
  }
  if (absl::Status status = ValidateLabels(constant_labels); !status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat("metric ", name, ": ", status.message()));
  }
  std::vector<std::string> series{std::string(name)};
  if constexpr (T::kMetricType == MetricType::kHistogram) {
    if (constant_labels.count("le") > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metric ", name, ": label \"le\" is reserved for histograms"));
    }
    if (absl::Status status = ValidateBucketBoundaries(buckets); !status.ok()) {
      return absl::Status(
          status.code(), absl::StrCat("metric ", name, ": ", status.message()));
    }
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      series.push_back(absl::StrCat(name, suffix));
    }
  }

  absl::MutexLock lock(&mu_);
  for (const std::string& series_name : series) {
    if (series_names_.count(series_name) > 0) {
      return absl::AlreadyExistsError(
          absl::StrCat("metric ", name, ": series name \"", series_name,
                       "\" is already registered"));
    }
  }
  series_names_.insert(series.begin(), series.end());
  // Family's constructor is private (Registry is a friend), so no make_unique.
  auto family = std::unique_ptr<Family<T>>(
      new Family<T>(std::string(name), std::string(help), constant_labels,
                    std::move(buckets)));
  Family<T>* result = family.get();
  families_.push_back(std::move(family));
  return result;
}

absl::StatusOr<Family<Counter>*> Registry::AddCounterFamily(
    absl::string_view name, absl::string_view help,
    const Labels& constant_labels) {
  return AddFamily<Counter>(name, help, constant_labels, {});
}

absl::StatusOr<Family<Gauge>*> Registry::AddGaugeFamily(
    absl::string_view name, absl::string_view help,
    const Labels& constant_labels) {
  return AddFamily<Gauge>(name, help, constant_labels, {});
}

absl::StatusOr<Family<Histogram>*> Registry::AddHistogramFamily(
    absl::string_view name, absl::string_view help, std::vector<double> buckets,
    const Labels& constant_labels) {
  return AddFamily<Histogram>(name, help, constant_labels, std::move(buckets));
}

std::vector<MetricFamily> Registry::Collect() const {
  // Families are never removed, so the pointers stay valid after unlocking;
  // collecting outside the lock keeps registration unblocked during scrapes.
  std::vector<const Collectable*> families;
  {
    absl::MutexLock lock(&mu_);
    families.reserve(families_.size());
    for (const auto& family : families_) families.push_back(family.get());
  }
  std::vector<MetricFamily> result;
  result.reserve(families.size());
  for (const Collectable* family : families) {
    std::vector<MetricFamily> collected = family->Collect();
    for (MetricFamily& f : collected) result.push_back(std::move(f));
  }
  return result;
}

}  // namespace metrics
}  // namespace tandem
