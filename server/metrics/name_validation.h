#ifndef TANDEM_SERVER_METRICS_NAME_VALIDATION_H_
#define TANDEM_SERVER_METRICS_NAME_VALIDATION_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/metrics/client_metric.h"

namespace tandem {
namespace metrics {

// Checks `name` against the Prometheus metric name syntax
// [a-zA-Z_:][a-zA-Z0-9_:]*. Returns InvalidArgument naming the offender.
absl::Status ValidateMetricName(absl::string_view name);

// Checks `name` against the Prometheus label name syntax [a-zA-Z_][a-zA-Z0-9_]*
// (no colons, unlike metric names) and rejects the reserved "__" prefix.
absl::Status ValidateLabelName(absl::string_view name);

// Checks every label name with ValidateLabelName() and every label value for
// valid UTF-8 (the exposition format requires it; any UTF-8 is allowed).
absl::Status ValidateLabels(const Labels& labels);

// Returns InvalidArgument unless `text` is valid UTF-8. `what` names the text
// in the error message (e.g. "help of metric foo").
absl::Status ValidateUtf8(absl::string_view text, absl::string_view what);

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_NAME_VALIDATION_H_
