#include "client/loadgen/request_record.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace tandem {

std::optional<double> TimeToFirstToken(const RequestRecord& r) {
  if (r.token_times.empty()) return std::nullopt;
  return r.token_times.front();
}

std::optional<double> TimePerOutputToken(const RequestRecord& r) {
  if (r.token_times.size() < 2) return std::nullopt;
  return (r.end - r.token_times.front()) / static_cast<double>(r.token_times.size() - 1);
}

std::vector<double> InterTokenLatencies(const RequestRecord& r) {
  std::vector<double> gaps;
  for (size_t i = 1; i < r.token_times.size(); ++i) {
    gaps.push_back(r.token_times[i] - r.token_times[i - 1]);
  }
  return gaps;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (rank - static_cast<double>(below)) * (values[above] - values[below]);
}

Distribution Describe(const std::vector<double>& values) {
  Distribution d;
  d.count = static_cast<int>(values.size());
  if (values.empty()) return d;
  double sum = 0;
  for (double v : values) sum += v;
  d.mean = sum / static_cast<double>(values.size());
  d.p50 = Percentile(values, 50);
  d.p90 = Percentile(values, 90);
  d.p99 = Percentile(values, 99);
  d.max = *std::max_element(values.begin(), values.end());
  return d;
}

bool ParseSlo(const std::string& text, Slo* slo, std::string* error) {
  *slo = Slo();
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv = absl::StrSplit(part, ':');
    double ms = 0;
    if (kv.size() != 2 || !absl::SimpleAtod(kv[1], &ms) || !std::isfinite(ms) || ms < 0) {
      *error = "expected ttft:MS,tpot:MS";
      return false;
    }
    if (kv[0] == "ttft") {
      slo->ttft_seconds = ms / 1000;
    } else if (kv[0] == "tpot") {
      slo->tpot_seconds = ms / 1000;
    } else {
      *error = "expected ttft:MS,tpot:MS";
      return false;
    }
  }
  return true;
}

namespace {

bool MeetsSlo(const RequestRecord& r, const Slo& slo) {
  const std::optional<double> ttft = TimeToFirstToken(r);
  const std::optional<double> tpot = TimePerOutputToken(r);
  if (slo.ttft_seconds && (!ttft || *ttft > *slo.ttft_seconds)) return false;
  if (slo.tpot_seconds && tpot && *tpot > *slo.tpot_seconds) return false;
  return true;
}

}  // namespace

RunSummary Summarize(const std::vector<RequestRecord>& records, const Slo& slo) {
  RunSummary s;
  std::vector<double> ttft, tpot, itl, e2e;
  double first = std::numeric_limits<double>::infinity(), last = 0;
  int good = 0;
  for (const RequestRecord& r : records) {
    first = std::min(first, r.start);
    last = std::max(last, r.start + r.end);
    if (!r.ok) {
      ++s.failed;
      continue;
    }
    ++s.completed;
    s.output_tokens += static_cast<int64_t>(r.token_times.size());
    if (auto t = TimeToFirstToken(r)) ttft.push_back(*t);
    if (auto t = TimePerOutputToken(r)) tpot.push_back(*t);
    for (double gap : InterTokenLatencies(r)) itl.push_back(gap);
    e2e.push_back(r.end);
    if (MeetsSlo(r, slo)) ++good;
  }
  s.duration_seconds = records.empty() ? 0 : last - first;
  if (s.duration_seconds > 0) {
    s.requests_per_second = s.completed / s.duration_seconds;
    s.output_tokens_per_second = static_cast<double>(s.output_tokens) / s.duration_seconds;
    s.goodput_requests_per_second = good / s.duration_seconds;
  }
  s.ttft = Describe(ttft);
  s.tpot = Describe(tpot);
  s.itl = Describe(itl);
  s.e2e = Describe(e2e);
  return s;
}

}  // namespace tandem
