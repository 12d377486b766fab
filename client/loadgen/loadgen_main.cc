// tandem-loadgen: drives a tandem-server over gRPC (or its OpenAI API) at a fixed concurrency or
// a Poisson arrival rate and reports TTFT, TPOT, ITL, E2E latency (mean,
// p50/p90/p99), requests/s, output tokens/s and goodput, with vLLM's
// definitions. Writes one JSON line per request and a summary line.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "core/base/program_usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "client/client_credentials.h"
#include "client/loadgen/grpc_sender.h"
#include "client/loadgen/openai_sender.h"
#include "client/loadgen/request_record.h"
#include "tandem/v1/generation.grpc.pb.h"

ABSL_FLAG(std::string, server, "localhost:50051", "tandem-server address");
ABSL_FLAG(std::string, api, "grpc",
          "grpc: tandem.v1 Generate at --server; completions or chat: the OpenAI-compatible "
          "HTTP API at --http (/v1/completions or /v1/chat/completions, streamed)");
ABSL_FLAG(std::string, http, "localhost:9400", "the server's HTTP host:port (--api=completions|chat)");
ABSL_FLAG(bool, logprobs, false,
          "--api=completions|chat: ask for each token's logprob, so every token is an event "
          "of its own (without it a token whose text the server holds back, an incomplete "
          "UTF-8 character, arrives with the next one)");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM file of the CA (or the server's own certificate) to trust: gRPC over TLS and "
          "HTTPS for --api=completions|chat (each HTTPS request opens its own connection, so "
          "its TTFT includes a TLS handshake; gRPC's channels stay open)");
ABSL_FLAG(std::string, api_key_file, "",
          "file holding the server's API key, sent as 'authorization: Bearer KEY'");
ABSL_FLAG(absl::Duration, timeout, absl::ZeroDuration(),
          "a request not finished this long (D) after its start fails (gRPC: DEADLINE_EXCEEDED, "
          "at D; HTTP: timed out, at its first bytes past D or after D without any, so a "
          "stream that stalls is cut off by 2 x D at most); 0: none for gRPC, and for HTTP "
          "600 s without a byte");
ABSL_FLAG(int32_t, vocab_size, 50257,
          "--api=completions|chat: prompt token ids are drawn below this (gRPC asks the server)");
ABSL_FLAG(int32_t, channels, 1,
          "gRPC: spread the requests over this many channels, each its own TCP connection "
          "(request i on channel i mod N); real clients each hold their own connection, and "
          "vLLM's benchmark opens one per request in flight");
ABSL_FLAG(std::string, grpc_reads, "blocking",
          "gRPC: how streams are read: blocking (a thread per stream in ClientReader::Read; "
          "a token's stamp also holds that thread's wake-up) or callback (gRPC's callback "
          "API; stamped in OnReadDone as the transport delivers it)");
ABSL_FLAG(int32_t, num_requests, 100, "requests measured");
ABSL_FLAG(int32_t, warmup, 4, "requests sent (one at a time) before the measured ones");
ABSL_FLAG(int32_t, concurrency, 8, "requests in flight at once (when --request_rate is 0)");
ABSL_FLAG(double, request_rate, 0,
          "Poisson arrivals per second instead of a fixed concurrency (0: off)");
ABSL_FLAG(int32_t, max_concurrency, 256, "with --request_rate: at most this many in flight");
ABSL_FLAG(std::string, prompt_tokens, "128", "prompt length: N, or uniform:A:B");
ABSL_FLAG(std::string, output_tokens, "128", "tokens to generate: N, or uniform:A:B");
ABSL_FLAG(uint64_t, seed, 1, "seed of the lengths, prompts and arrivals");
ABSL_FLAG(std::string, slo, "", "goodput objectives, ttft:MS,tpot:MS");
ABSL_FLAG(std::string, out, "",
          "JSON lines: one per request, then the summary (the file is created, or emptied, "
          "once the server has answered, before the run)");
ABSL_FLAG(double, progress_seconds, 5, "a progress line on stderr this often (0: none)");
ABSL_FLAG(bool, token_times, false,
          "--out: also each token's arrival time (seconds since the request's start)");

namespace tandem {
namespace {

// "N" or "uniform:A:B" (inclusive).
struct LengthSpec {
  int low = 0, high = 0;
  int Draw(std::mt19937_64& rng) const {
    return std::uniform_int_distribution<int>(low, high)(rng);
  }
};

bool ParseLength(const std::string& text, LengthSpec* spec) {
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  if (parts.size() == 1 && absl::SimpleAtoi(parts[0], &spec->low) && spec->low > 0) {
    spec->high = spec->low;
    return true;
  }
  return parts.size() == 3 && parts[0] == "uniform" && absl::SimpleAtoi(parts[1], &spec->low) &&
         absl::SimpleAtoi(parts[2], &spec->high) && spec->low > 0 && spec->high >= spec->low;
}

// One request, prepared before the run so its randomness does not depend on timing.
struct Planned {
  v1::GenerateRequest request;
  double arrival = 0;  // seconds after the run's start (rate mode)
};

// `rate` > 0: Poisson arrivals at that many requests per second.
std::vector<Planned> Plan(int count, int vocab, const LengthSpec& prompt,
                          const LengthSpec& output, double rate, std::mt19937_64& rng) {
  std::vector<Planned> plan(count);
  std::exponential_distribution<double> gap(rate > 0 ? rate : 1.0);
  std::uniform_int_distribution<int> token(0, vocab - 1);
  double t = 0;
  for (Planned& p : plan) {
    for (int i = prompt.Draw(rng); i > 0; --i) p.request.add_prompt_token_ids(token(rng));
    p.request.mutable_stopping()->set_max_tokens(output.Draw(rng));
    p.request.mutable_stopping()->set_ignore_eos(true);
    p.arrival = t;
    if (rate > 0) t += gap(rng);
  }
  return plan;
}

// Sends one planned request and times it.
using Sender = std::function<RequestRecord(const v1::GenerateRequest&, absl::Time run_start)>;

// Runs the plan: at a fixed concurrency, or at the planned arrival times with
// at most --max_concurrency in flight. `limit` worker threads each take the
// next request in plan order, wait for its arrival time (rate mode) and send
// it, so a request starts at its arrival or when a worker is free, whichever
// is later. A fixed pool: a thread per request kept every finished thread's
// stack mapped until the run's end.
std::vector<RequestRecord> Run(const Sender& send, const std::vector<Planned>& plan, int limit,
                               bool rate_mode) {
  std::vector<RequestRecord> records(plan.size());
  std::atomic<size_t> next{0};
  std::atomic<int> done{0};
  const absl::Time run_start = absl::Now();
  absl::Notification finished;
  std::thread progress([&] {
    const double every = absl::GetFlag(FLAGS_progress_seconds);
    if (every <= 0) return;
    while (!finished.WaitForNotificationWithTimeout(absl::Seconds(every))) {
      std::fprintf(stderr, "loadgen: %d/%zu done after %.1f s\n", done.load(), plan.size(),
                   absl::ToDoubleSeconds(absl::Now() - run_start));
    }
  });
  std::vector<std::thread> workers;
  const size_t count = std::min(static_cast<size_t>(limit), plan.size());
  for (size_t w = 0; w < count; ++w) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < plan.size(); i = next++) {
        if (rate_mode) absl::SleepFor(run_start + absl::Seconds(plan[i].arrival) - absl::Now());
        records[i] = send(plan[i].request, run_start);
        ++done;
      }
    });
  }
  for (std::thread& t : workers) t.join();
  finished.Notify();
  progress.join();
  return records;
}

nlohmann::json ToJson(const Distribution& d) {
  return {{"mean_ms", 1e3 * d.mean}, {"p50_ms", 1e3 * d.p50}, {"p90_ms", 1e3 * d.p90},
          {"p99_ms", 1e3 * d.p99},   {"max_ms", 1e3 * d.max}, {"count", d.count}};
}

void Print(const char* name, const Distribution& d) {
  std::printf("%-6s %10.2f %10.2f %10.2f %10.2f %10.2f\n", name, 1e3 * d.mean, 1e3 * d.p50,
              1e3 * d.p90, 1e3 * d.p99, 1e3 * d.max);
}

int Main() {
  LengthSpec prompt, output;
  Slo slo;
  std::string error;
  if (!ParseLength(absl::GetFlag(FLAGS_prompt_tokens), &prompt)) {
    std::fprintf(stderr, "error: --prompt_tokens is N or uniform:A:B (N, A >= 1)\n");
    return 2;
  }
  if (!ParseLength(absl::GetFlag(FLAGS_output_tokens), &output)) {
    std::fprintf(stderr, "error: --output_tokens is N or uniform:A:B (N, A >= 1)\n");
    return 2;
  }
  if (!ParseSlo(absl::GetFlag(FLAGS_slo), &slo, &error)) {
    std::fprintf(stderr, "error: --slo: %s\n", error.c_str());
    return 2;
  }
  const double rate = absl::GetFlag(FLAGS_request_rate);
  const bool rate_mode = rate > 0;
  const char* limit_flag = rate_mode ? "--max_concurrency" : "--concurrency";
  const int limit = rate_mode ? absl::GetFlag(FLAGS_max_concurrency) : absl::GetFlag(FLAGS_concurrency);
  if (limit < 1) {
    std::fprintf(stderr, "error: %s must be at least 1, not %d\n", limit_flag, limit);
    return 2;
  }
  if (absl::GetFlag(FLAGS_num_requests) < 0 || absl::GetFlag(FLAGS_warmup) < 0) {
    std::fprintf(stderr, "error: --num_requests and --warmup must be 0 or more\n");
    return 2;
  }
  if (!std::isfinite(rate) || rate < 0) {
    std::fprintf(stderr, "error: --request_rate must be a finite number, 0 or more\n");
    return 2;
  }
  const absl::Duration timeout = absl::GetFlag(FLAGS_timeout);
  if (timeout < absl::ZeroDuration()) {
    std::fprintf(stderr, "error: --timeout must be 0 (none) or more\n");
    return 2;
  }
  std::string api_key;
  if (const std::string key_file = absl::GetFlag(FLAGS_api_key_file); !key_file.empty()) {
    absl::StatusOr<std::string> key = ReadApiKey(key_file);
    if (!key.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(key.status().message()).c_str());
      return 2;
    }
    api_key = *std::move(key);
  }
  // Checked for both APIs; gRPC's channels use it.
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ChannelCredentialsFor(absl::GetFlag(FLAGS_tls_ca));
  if (!credentials.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(credentials.status().message()).c_str());
    return 2;
  }
  const std::string api = absl::GetFlag(FLAGS_api);
  Sender send;
  int vocab = absl::GetFlag(FLAGS_vocab_size);
  std::shared_ptr<v1::Generation::Stub> stub;
  if (api == "grpc") {
    if (absl::GetFlag(FLAGS_channels) < 1) {
      std::fprintf(stderr, "error: --channels must be at least 1\n");
      return 2;
    }
    // A local subchannel pool per channel: channels to one address would
    // otherwise share one connection.
    std::vector<std::shared_ptr<v1::Generation::Stub>> stubs;
    for (int i = 0; i < absl::GetFlag(FLAGS_channels); ++i) {
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
      stubs.push_back(v1::Generation::NewStub(grpc::CreateCustomChannel(
          absl::GetFlag(FLAGS_server), *credentials, args)));
    }
    stub = stubs[0];
    v1::ModelInfo info;
    grpc::ClientContext info_context;
    info_context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    AddApiKey(api_key, &info_context);
    if (grpc::Status s = stub->GetModelInfo(&info_context, v1::GetModelInfoRequest(), &info);
        !s.ok()) {
      std::fprintf(stderr, "error: %s: %s\n", absl::GetFlag(FLAGS_server).c_str(),
                   DescribeStatus(s).c_str());
      return 1;
    }
    vocab = info.vocab_size();
    auto next = std::make_shared<std::atomic<size_t>>(0);
    const std::string reads_flag = absl::GetFlag(FLAGS_grpc_reads);
    if (reads_flag != "callback" && reads_flag != "blocking") {
      std::fprintf(stderr, "error: --grpc_reads is callback or blocking, not %s\n",
                   reads_flag.c_str());
      return 2;
    }
    GrpcCallOptions call;
    call.reads = reads_flag == "callback" ? GrpcReads::kCallback : GrpcReads::kBlocking;
    call.api_key = api_key;
    if (timeout > absl::ZeroDuration()) call.timeout = timeout;
    send = [stubs, next, call](const v1::GenerateRequest& request, absl::Time run_start) {
      return SendGenerate(*stubs[next->fetch_add(1) % stubs.size()], request, run_start, call);
    };
  } else if (api == "completions" || api == "chat") {
    if (vocab < 1) {
      std::fprintf(stderr, "error: --vocab_size must be at least 1, not %d\n", vocab);
      return 2;
    }
    OpenAiSenderOptions options;
    options.address = absl::GetFlag(FLAGS_http);
    options.chat = api == "chat";
    options.logprobs = absl::GetFlag(FLAGS_logprobs);
    options.tls_ca_file = absl::GetFlag(FLAGS_tls_ca);
    options.api_key = api_key;
    if (timeout > absl::ZeroDuration()) options.timeout = timeout;
    absl::StatusOr<OpenAiSender> sender = OpenAiSender::Connect(std::move(options));
    if (!sender.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(sender.status().message()).c_str());
      return 1;
    }
    send = [sender = *sender](const v1::GenerateRequest& request, absl::Time run_start) {
      const std::vector<int32_t> prompt(request.prompt_token_ids().begin(),
                                        request.prompt_token_ids().end());
      return sender.Send(prompt, request.stopping().max_tokens(), run_start);
    };
  } else {
    std::fprintf(stderr, "error: --api is grpc, completions or chat, not %s\n", api.c_str());
    return 2;
  }
  // Opened (emptied) once every flag is checked and the server answered, and
  // before the run, so that a path that cannot be written fails now and a
  // run that never starts leaves the file as it was.
  std::ofstream out_file;
  if (const std::string out = absl::GetFlag(FLAGS_out); !out.empty()) {
    out_file.open(out);
    if (!out_file) {
      std::fprintf(stderr, "error: --out: cannot write %s\n", out.c_str());
      return 2;
    }
  }
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
  for (const Planned& p : Plan(absl::GetFlag(FLAGS_warmup), vocab, prompt, output, rate, rng)) {
    send(p.request, absl::Now());
  }
  const std::vector<RequestRecord> records =
      Run(send, Plan(absl::GetFlag(FLAGS_num_requests), vocab, prompt, output, rate, rng), limit,
          rate_mode);
  const RunSummary s = Summarize(records, slo);
  if (s.failed > 0) {
    const auto failed = std::find_if(records.begin(), records.end(),
                                     [](const RequestRecord& r) { return !r.ok; });
    std::fprintf(stderr, "loadgen: %d requests failed; the first: %s\n", s.failed,
                 failed->error.c_str());
  }
  std::printf("requests %d ok, %d failed in %.2f s: %.2f req/s, %.0f output tokens/s, goodput %.2f req/s\n",
              s.completed, s.failed, s.duration_seconds, s.requests_per_second,
              s.output_tokens_per_second, s.goodput_requests_per_second);
  std::printf("%-6s %10s %10s %10s %10s %10s\n", "ms", "mean", "p50", "p90", "p99", "max");
  Print("TTFT", s.ttft);
  Print("TPOT", s.tpot);
  Print("ITL", s.itl);
  Print("E2E", s.e2e);
  if (out_file.is_open()) {
    for (const RequestRecord& r : records) {
      nlohmann::json line = {{"start_s", r.start}, {"prompt_tokens", r.prompt_tokens},
                             {"output_tokens", r.token_times.size()}, {"e2e_s", r.end},
                             {"ok", r.ok}, {"error", r.error}};
      if (auto t = TimeToFirstToken(r)) line["ttft_s"] = *t;
      if (auto t = TimePerOutputToken(r)) line["tpot_s"] = *t;
      line["start_unix_s"] = r.start_unix;
      if (absl::GetFlag(FLAGS_token_times)) line["token_times_s"] = r.token_times;
      // The longest gap between tokens, and when it ended (since the start).
      for (size_t i = 1; i < r.token_times.size(); ++i) {
        const double gap = r.token_times[i] - r.token_times[i - 1];
        if (!line.contains("max_itl_s") || gap > line["max_itl_s"].get<double>()) {
          line["max_itl_s"] = gap;
          line["max_itl_end_s"] = r.token_times[i];
        }
      }
      out_file << line.dump() << "\n";
    }
    out_file << nlohmann::json{{"summary", true}, {"completed", s.completed}, {"failed", s.failed},
                           {"duration_s", s.duration_seconds},
                           {"requests_per_s", s.requests_per_second},
                           {"output_tokens", s.output_tokens},
                           {"output_tokens_per_s", s.output_tokens_per_second},
                           {"goodput_requests_per_s", s.goodput_requests_per_second},
                           {"ttft", ToJson(s.ttft)}, {"tpot", ToJson(s.tpot)},
                           {"itl", ToJson(s.itl)}, {"e2e", ToJson(s.e2e)}}
                .dump()
         << "\n";
  }
  return s.failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tandem

int main(int argc, char** argv) {
  tandem::SetProgramUsage(
      "Load generator for tandem-server (gRPC, or the OpenAI API with --api): "
      "tandem-loadgen --server=HOST:PORT [--api=grpc|completions|chat --http=HOST:PORT] "
      "[--tls_ca=PEM --api_key_file=FILE] "
      "[--concurrency=N | --request_rate=R] [--num_requests=N] [--prompt_tokens=N|uniform:A:B] "
      "[--output_tokens=...] [--slo=ttft:MS,tpot:MS] [--out=run.jsonl]");
  absl::ParseCommandLine(argc, argv);
  return tandem::Main();
}
