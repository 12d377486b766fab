#ifndef TANDEM_SERVER_METRICS_FAMILY_H_
#define TANDEM_SERVER_METRICS_FAMILY_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/metrics/buckets.h"
#include "server/metrics/client_metric.h"
#include "server/metrics/collectable.h"
#include "server/metrics/metric_family.h"
#include "server/metrics/metric_type.h"
#include "server/metrics/name_validation.h"

namespace tandem {
namespace metrics {

class Registry;

// All children of one metric name: label set -> metric of type T (Counter,
// Gauge or Histogram). Mirrors prometheus::Family<T>.
//
// Ownership: created and owned by a Registry (see Registry::Add*Family() and
// Builder); never destroyed before it. The family owns its children; a
// reference returned by Add() stays valid (same address) for the registry's
// lifetime -- children are never removed.
//
// Thread-safety: all methods may be called concurrently. A mutex guards only
// the label -> child map, so it is taken by Add()/Has()/Collect() but never by
// updates on a child (Increment/Set/Observe), which stay lock-free. Hold on to
// the returned reference instead of calling Add() on the hot path.
template <typename T>
class Family : public Collectable {
 public:
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  // Returns the child with exactly `labels` (constant family labels are added
  // implicitly), creating it from `args` (T's constructor arguments, e.g. the
  // bucket boundaries of a Histogram) if it does not exist yet. For an
  // existing child `args` are ignored. A Histogram family's Add(labels) with
  // no arguments uses the buckets given when the family was registered.
  //
  // Errors (InvalidArgument): a bad label name, a label value that is not
  // UTF-8, a label that repeats a constant label, "le" on a histogram, or
  // invalid histogram buckets.
  template <typename... Args>
  absl::StatusOr<T*> TryAdd(const Labels& labels, Args&&... args)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Like TryAdd(), for callers that treat misuse as a programming error but
  // must not crash: on error it returns a detached child that is never
  // exported (shared by all failed Add() calls of this family) and counts the
  // failure in rejected_adds().
  template <typename... Args>
  T& Add(const Labels& labels, Args&&... args) ABSL_LOCKS_EXCLUDED(mu_);

  // True if a child with exactly `labels` exists.
  bool Has(const Labels& labels) const ABSL_LOCKS_EXCLUDED(mu_);

  // Number of Add() calls that failed validation.
  int rejected_adds() const ABSL_LOCKS_EXCLUDED(mu_);

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const Labels& constant_labels() const { return constant_labels_; }

  // Returns one MetricFamily with a snapshot of every child, ordered by label
  // set, or nothing if the family has no children yet (like the Go client).
  std::vector<MetricFamily> Collect() const override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  friend class Registry;

  // Arguments are validated by the Registry. `default_buckets` is used only
  // by histogram families.
  Family(std::string name, std::string help, Labels constant_labels,
         std::vector<double> default_buckets)
      : name_(std::move(name)),
        help_(std::move(help)),
        constant_labels_(std::move(constant_labels)),
        default_buckets_(std::move(default_buckets)) {}

  absl::Status ValidateChildLabels(const Labels& labels) const;

  const std::string name_;
  const std::string help_;
  const Labels constant_labels_;
  const std::vector<double> default_buckets_;

  mutable absl::Mutex mu_;
  // Keyed by the caller's labels (constant labels excluded).
  std::map<Labels, std::unique_ptr<T>> children_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<T> rejected_child_ ABSL_GUARDED_BY(mu_);
  int rejected_adds_ ABSL_GUARDED_BY(mu_) = 0;
};

// Implementation.

template <typename T>
absl::Status Family<T>::ValidateChildLabels(const Labels& labels) const {
  if (absl::Status status = ValidateLabels(labels); !status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat("metric ", name_, ": ", status.message()));
  }
  for (const auto& entry : labels) {
    if (constant_labels_.count(entry.first) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("metric ", name_, ": label \"", entry.first,
                       "\" is already a constant label of the family"));
    }
    if (T::kMetricType == MetricType::kHistogram && entry.first == "le") {
      return absl::InvalidArgumentError(absl::StrCat(
          "metric ", name_, ": label \"le\" is reserved for histograms"));
    }
  }
  return absl::OkStatus();
}

template <typename T>
template <typename... Args>
absl::StatusOr<T*> Family<T>::TryAdd(const Labels& labels, Args&&... args) {
  absl::MutexLock lock(&mu_);
  if (auto it = children_.find(labels); it != children_.end()) {
    return it->second.get();
  }
  if (absl::Status status = ValidateChildLabels(labels); !status.ok()) {
    return status;
  }
  std::unique_ptr<T> child;
  if constexpr (T::kMetricType == MetricType::kHistogram &&
                sizeof...(Args) == 0) {
    child = std::make_unique<T>(default_buckets_);
  } else {
    if constexpr (T::kMetricType == MetricType::kHistogram) {
      if (absl::Status status = ValidateBucketBoundaries(args...);
          !status.ok()) {
        return absl::Status(status.code(), absl::StrCat("metric ", name_, ": ",
                                                        status.message()));
      }
    }
    child = std::make_unique<T>(std::forward<Args>(args)...);
  }
  T* result = child.get();
  children_.emplace(labels, std::move(child));
  return result;
}

template <typename T>
template <typename... Args>
T& Family<T>::Add(const Labels& labels, Args&&... args) {
  // TryAdd() only consumes `args` when it succeeds, so they are intact on the
  // error path below (which does not use them anyway).
  absl::StatusOr<T*> child = TryAdd(labels, std::forward<Args>(args)...);
  if (child.ok()) return **child;
  absl::MutexLock lock(&mu_);
  ++rejected_adds_;
  if (rejected_child_ == nullptr) {
    if constexpr (T::kMetricType == MetricType::kHistogram) {
      rejected_child_ = std::make_unique<T>(std::vector<double>());
    } else {
      rejected_child_ = std::make_unique<T>();
    }
  }
  return *rejected_child_;
}

template <typename T>
bool Family<T>::Has(const Labels& labels) const {
  absl::MutexLock lock(&mu_);
  return children_.count(labels) > 0;
}

template <typename T>
int Family<T>::rejected_adds() const {
  absl::MutexLock lock(&mu_);
  return rejected_adds_;
}

template <typename T>
std::vector<MetricFamily> Family<T>::Collect() const {
  MetricFamily family;
  {
    absl::MutexLock lock(&mu_);
    if (children_.empty()) return {};
    family.metric.reserve(children_.size());
    // Reading a child is a handful of relaxed atomic loads, so the lock is
    // held only briefly; updaters never take it.
    for (const auto& [labels, child] : children_) {
      ClientMetric metric = child->Collect();
      metric.label = labels;
      family.metric.push_back(std::move(metric));
    }
  }
  family.name = name_;
  family.help = help_;
  family.type = T::kMetricType;
  if (!constant_labels_.empty()) {
    for (ClientMetric& metric : family.metric) {
      metric.label.insert(constant_labels_.begin(), constant_labels_.end());
    }
  }
  std::vector<MetricFamily> result;
  result.push_back(std::move(family));
  return result;
}

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_FAMILY_H_
