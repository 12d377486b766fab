#include "server/metrics/text_serializer.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/metrics/client_metric.h"
#include "server/metrics/metric_type.h"

namespace tandem {
namespace metrics {
namespace {

void AppendValue(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append("NaN");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "+Inf" : "-Inf");
  } else {
    // Shortest round-trip representation (e.g. "0.1", "42", "1e+21").
    char buffer[64];
    const std::to_chars_result result =
        std::to_chars(buffer, buffer + sizeof(buffer), value);
    out->append(buffer, result.ptr);
  }
}

void AppendEscaped(absl::string_view text, bool escape_quote,
                   std::string* out) {
  for (char c : text) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '"':
        if (escape_quote) {
          out->append("\\\"");
        } else {
          out->push_back(c);
        }
        break;
      default:
        out->push_back(c);
    }
  }
}

absl::string_view TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// Writes `name{labels[,le="bound"]} ` (braces omitted when there are no
// labels at all).
void AppendSeries(absl::string_view name, absl::string_view suffix,
                  const Labels& labels, const double* le, std::string* out) {
  out->append(name.data(), name.size());
  out->append(suffix.data(), suffix.size());
  if (!labels.empty() || le != nullptr) {
    out->push_back('{');
    bool first = true;
    for (const auto& [label_name, label_value] : labels) {
      if (!first) out->push_back(',');
      first = false;
      out->append(label_name);
      out->append("=\"");
      AppendEscaped(label_value, /*escape_quote=*/true, out);
      out->push_back('"');
    }
    if (le != nullptr) {
      if (!first) out->push_back(',');
      out->append("le=\"");
      AppendValue(*le, out);
      out->push_back('"');
    }
    out->push_back('}');
  }
  out->push_back(' ');
}

void AppendCount(std::uint64_t count, std::string* out) {
  absl::StrAppend(out, count);
}

}  // namespace

std::string TextSerializer::Serialize(
    const std::vector<MetricFamily>& families) const {
  std::string out;
  for (const MetricFamily& family : families) {
    absl::StrAppend(&out, "# HELP ", family.name, " ");
    AppendEscaped(family.help, /*escape_quote=*/false, &out);
    absl::StrAppend(&out, "\n# TYPE ", family.name, " ", TypeName(family.type),
                    "\n");
    for (const ClientMetric& metric : family.metric) {
      switch (family.type) {
        case MetricType::kCounter:
          AppendSeries(family.name, "", metric.label, nullptr, &out);
          AppendValue(metric.counter.value, &out);
          out.push_back('\n');
          break;
        case MetricType::kGauge:
          AppendSeries(family.name, "", metric.label, nullptr, &out);
          AppendValue(metric.gauge.value, &out);
          out.push_back('\n');
          break;
        case MetricType::kHistogram: {
          const ClientMetric::Histogram& histogram = metric.histogram;
          for (const ClientMetric::Bucket& bucket : histogram.bucket) {
            AppendSeries(family.name, "_bucket", metric.label,
                         &bucket.upper_bound, &out);
            AppendCount(bucket.cumulative_count, &out);
            out.push_back('\n');
          }
          const double inf = INFINITY;
          AppendSeries(family.name, "_bucket", metric.label, &inf, &out);
          AppendCount(histogram.sample_count, &out);
          out.push_back('\n');
          AppendSeries(family.name, "_sum", metric.label, nullptr, &out);
          AppendValue(histogram.sample_sum, &out);
          out.push_back('\n');
          AppendSeries(family.name, "_count", metric.label, nullptr, &out);
          AppendCount(histogram.sample_count, &out);
          out.push_back('\n');
          break;
        }
      }
    }
  }
  return out;
}

std::string TextSerializer::FormatValue(double value) {
  std::string out;
  AppendValue(value, &out);
  return out;
}

std::string TextSerializer::EscapeHelp(absl::string_view help) {
  std::string out;
  AppendEscaped(help, /*escape_quote=*/false, &out);
  return out;
}

std::string TextSerializer::EscapeLabelValue(absl::string_view value) {
  std::string out;
  AppendEscaped(value, /*escape_quote=*/true, &out);
  return out;
}

}  // namespace metrics
}  // namespace tandem
