// What the load generator records of one request, and the statistics over
// many: vLLM's benchmark definitions, so figures compare.
#ifndef TANDEM_CLIENT_LOADGEN_REQUEST_RECORD_H_
#define TANDEM_CLIENT_LOADGEN_REQUEST_RECORD_H_

#include <optional>
#include <string>
#include <vector>

namespace tandem {

// Times in seconds, relative to the request's start (when it was sent).
struct RequestRecord {
  double start = 0;  // since the run's start
  double start_unix = 0;  // wall clock (Unix seconds), to line up several runs
  int prompt_tokens = 0;
  // Arrival time of each output token (tokens that arrive in one message
  // share its time). Empty when no token arrived.
  std::vector<double> token_times;
  double end = 0;            // the stream's end (status received)
  bool ok = false;           // the call ended with status OK
  std::string error;         // the status, when not OK
};

// TTFT = token_times[0]; E2E = end; TPOT = (E2E - TTFT) / (n - 1) for n > 1
// output tokens; ITL = every gap between consecutive tokens.
std::optional<double> TimeToFirstToken(const RequestRecord& r);
std::optional<double> TimePerOutputToken(const RequestRecord& r);
std::vector<double> InterTokenLatencies(const RequestRecord& r);

// The p-th percentile (0..100) with linear interpolation between closest
// ranks (numpy's default); NaN for no values.
double Percentile(std::vector<double> values, double p);

struct Distribution {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  int count = 0;
};
Distribution Describe(const std::vector<double>& values);

// Service-level objectives for goodput; a request meets them when its TTFT
// and TPOT are at most these (an absent bound always holds).
struct Slo {
  std::optional<double> ttft_seconds;
  std::optional<double> tpot_seconds;
};
// Parses "ttft:MS,tpot:MS" (either part may be left out); false on errors.
bool ParseSlo(const std::string& text, Slo* slo, std::string* error);

struct RunSummary {
  int completed = 0;  // ended OK
  int failed = 0;
  double duration_seconds = 0;  // first start to last end
  double requests_per_second = 0;
  double output_tokens_per_second = 0;
  double goodput_requests_per_second = 0;  // completed requests meeting the SLO
  int64_t output_tokens = 0;
  Distribution ttft, tpot, itl, e2e;
};
RunSummary Summarize(const std::vector<RequestRecord>& records, const Slo& slo);

}  // namespace tandem

#endif  // TANDEM_CLIENT_LOADGEN_REQUEST_RECORD_H_
