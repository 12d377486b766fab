#ifndef TANDEM_SERVER_METRICS_TEXT_SERIALIZER_H_
#define TANDEM_SERVER_METRICS_TEXT_SERIALIZER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/metrics/metric_family.h"

namespace tandem {
namespace metrics {

// Renders metric family snapshots in the Prometheus text exposition format
// 0.0.4 (Content-Type "text/plain; version=0.0.4; charset=utf-8"):
//
//   # HELP <name> <help, with \ and newline escaped>
//   # TYPE <name> counter|gauge|histogram
//   <name>{<label>="<value, with \ " and newline escaped>",...} <value>
//
// Histograms expose <name>_bucket{...,le="<bound>"} with cumulative counts
// (ending with le="+Inf" equal to _count), then <name>_sum and <name>_count.
// Labels appear in sorted order, children in the order given. Floats use the
// shortest representation that round-trips, and +Inf/-Inf/NaN as Prometheus
// spells them. Mirrors prometheus::TextSerializer.
//
// Usage: TextSerializer().Serialize(registry.Collect()).
//
// Stateless; thread-safe.
class TextSerializer {
 public:
  std::string Serialize(const std::vector<MetricFamily>& families) const;

  // Formats one sample value or bucket bound: the shortest decimal that
  // parses back to exactly `value`, or "+Inf", "-Inf", "NaN".
  static std::string FormatValue(double value);

  // Escapes `\` and newline (for # HELP lines).
  static std::string EscapeHelp(absl::string_view help);

  // Escapes `\`, `"` and newline (for label values).
  static std::string EscapeLabelValue(absl::string_view value);
};

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_TEXT_SERIALIZER_H_
