// tandem-bench: drives the engine in-process with N concurrent sequences
// (prompt P tokens, G new tokens, ignore_eos, greedy) for each engine mode,
// and prints a table and writes JSON: µs per decode step, tokens/s, GPU idle
// fraction of decode time, host wait per step, time to first token, and the
// peak device memory each mode reserves. With --prefill, it measures packed
// prefill instead: bursts of K prompts of L tokens submitted together, their
// TTFT and the prefill forward's GPU time, tokens/s and TFLOP/s. With
// --mixed, what prefilling a prompt adds to a step that decodes N rows.
// Exits 1 when a row failed (its line says "failed: why"), 2 on a bad flag.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <iterator>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "core/base/cuda_queues.h"
#include "core/base/host_allocator.h"
#include "core/base/program_usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/engine/engine.h"
#include "core/base/logging.h"
#include "core/model/model_loader.h"
#include "core/model/model_options.h"
#include "core/model/random_checkpoint.h"
#include "core/model/torch_runtime.h"

ABSL_FLAG(std::string, model, "",
          "checkpoint directory (empty: write a random one of --arch and --size)");
ABSL_FLAG(std::string, arch, "", "architecture of the random checkpoint (empty: the default)");
ABSL_FLAG(std::string, size, "", "size of the random checkpoint (empty: the default)");
ABSL_FLAG(std::string, workdir, "/tmp/tandem-bench",
          "random checkpoints are written to WORKDIR-SIZE");
ABSL_FLAG(tandem::DeviceSpec, device, tandem::DeviceSpec(), "cpu, cuda, cuda:N or auto");
ABSL_FLAG(tandem::DType, dtype, tandem::DType::kBFloat16, "float32, float16, bfloat16");
ABSL_FLAG(std::vector<std::string>, batch, std::vector<std::string>({"1", "16", "64", "256"}),
          "concurrent sequences");
// Every engine mode the bench knows; the default runs them all.
constexpr const char* kModes[] = {"sync_eager", "sync_graphs", "double_buffered_eager",
                                  "double_buffered_graphs", "naive_dynamic"};

ABSL_FLAG(std::vector<std::string>, modes,
          std::vector<std::string>(std::begin(kModes), std::end(kModes)),
          "engine modes: {sync,double_buffered}_{eager,graphs}, or naive_dynamic (a KV cache "
          "grown by concatenation, eager, a host read every step: --kv_cache=dynamic)");
ABSL_FLAG(int32_t, prompt_tokens, 64, "prompt length");
ABSL_FLAG(int32_t, new_tokens, 256, "tokens generated per sequence");
ABSL_FLAG(std::string, out, "", "JSON output file (appends one object per line)");
ABSL_FLAG(std::vector<std::string>, prefill, {},
          "packed-prefill bursts to measure instead of decode, as KxL (K prompts of L "
          "tokens submitted together, one new token each), e.g. 64x128,8x1024,1x128");
ABSL_FLAG(int32_t, prefill_repeats, 5, "bursts per --prefill entry (the table shows the median)");
ABSL_FLAG(std::vector<std::string>, mixed, {},
          "mixed steps to measure instead of decode, as NxL: N sequences decode (prompts of "
          "--prompt_tokens, 100 steps in) and a step also prefills one L-token prompt; the "
          "device time of that step against a decode-only one, e.g. 64x256,8x1000");
ABSL_FLAG(bool, one_forward_mixed_steps, true,
          "with --mixed: run a mixed step as one forward where the model can (false: its "
          "prefill, then its decode)");

namespace tandem {
namespace {

// Records every step (engine thread).
class BenchObserver : public EngineObserver {
 public:
  struct Step {
    absl::Time at;
    int decode_rows;
    int prefill_tokens;
    StepTimings timings;
  };
  void OnStep(const StepStats& stats) override {
    absl::MutexLock lock(&mu_);
    steps_.push_back({absl::Now(), stats.decode_sequences, stats.prefill_tokens, stats.timings});
  }
  std::vector<Step> steps() {
    absl::MutexLock lock(&mu_);
    return steps_;
  }

 private:
  absl::Mutex mu_;
  std::vector<Step> steps_;
};

// Counts a request's tokens and its finish (on an engine delivery thread).
class CountingSink : public TokenSink {
 public:
  explicit CountingSink(absl::Notification* all_done, std::atomic<int>* remaining)
      : all_done_(all_done), remaining_(remaining) {}
  void OnChunk(GenerationChunk chunk) override { tokens_ += chunk.token_ids.size(); }
  void OnFinish(const GenerationSummary& summary) override {
    summary_ = summary;
    if (remaining_->fetch_sub(1) == 1) all_done_->Notify();
  }
  GenerationSummary summary_;
  size_t tokens_ = 0;

 private:
  absl::Notification* all_done_;
  std::atomic<int>* remaining_;
};

// Prompt ids are drawn from [0, 50000], or below the vocabulary's size where
// that is smaller.
std::vector<GenerationRequest> RandomRequests(int count, int prompt, int generate, uint32_t seed,
                                              int32_t vocab_size) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> token(
      0, std::max<int32_t>(0, std::min<int32_t>(50000, vocab_size - 1)));
  std::vector<GenerationRequest> requests(static_cast<size_t>(count));
  for (GenerationRequest& request : requests) {
    for (int t = 0; t < prompt; ++t) request.prompt_token_ids.push_back(token(rng));
    request.stopping.max_tokens = generate;
    request.stopping.ignore_eos = true;
  }
  return requests;
}

// Nearest-rank percentile of `values` (q in (0, 1]).
double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::max<size_t>(rank, 1) - 1];
}

std::vector<double> TtftMs(const std::vector<std::shared_ptr<CountingSink>>& sinks) {
  std::vector<double> ttft;
  for (const auto& sink : sinks) ttft.push_back(1e3 * sink->summary_.time_to_first_token_seconds);
  return ttft;
}

struct Result {
  std::string model, mode;
  int batch = 0;
  double us_per_step = 0, tokens_per_second = 0, idle_fraction = 0;
  double host_wait_us = 0, ttft_ms = 0, ttft_p50_ms = 0, ttft_p99_ms = 0, busy_us = 0;
  int64_t memory_bytes = 0;
  int64_t weight_bytes = 0;
  // The weights read per step over the step time, TB/s: a lower bound of
  // the achieved memory bandwidth (the K/V reads come on top).
  double weight_tb_per_s = 0;
  int steps = 0;
  // The per-step GPU idle before each full step, µs: median, 99th
  // percentile and largest, how many steps had any (over 1 µs), and the
  // share of all idle that came in steps idle over 100 µs (stalls of the
  // host longer than a step, against a small gap in every step).
  double idle_p50_us = 0, idle_p99_us = 0, idle_max_us = 0, idle_share_over_100us = 0;
  int idle_steps = 0;
};

absl::StatusOr<Result> RunOne(const std::string& model_dir, const std::string& mode,
                              int batch) {
  if (std::find(std::begin(kModes), std::end(kModes), mode) == std::end(kModes)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown mode ", mode));
  }
  ModelOptions options;
  options.model_dir = model_dir;
  options.device = absl::GetFlag(FLAGS_device);
  options.dtype = absl::GetFlag(FLAGS_dtype);
  options.max_slots = batch;
  const int prompt = absl::GetFlag(FLAGS_prompt_tokens);
  const int generate = absl::GetFlag(FLAGS_new_tokens);
  options.max_context = prompt + generate + 1;
  options.cuda_graphs = absl::StrContains(mode, "graphs");
  if (mode == "naive_dynamic") options.kv_cache = KvCacheMode::kDynamic;
  // What LibTorch still holds from earlier modes (e.g. cuBLAS workspaces of
  // their streams) is not this mode's: measured before loading, subtracted.
  // The first mode's device has no allocator yet, and nothing held.
  static std::string earlier_device;
  const int64_t held_before =
      earlier_device.empty() ? 0 : StartDeviceMemoryMeasurement(earlier_device);
  absl::StatusOr<LoadedModel> loaded = LoadModel(options);
  if (!loaded.ok()) return loaded.status();
  const std::string device = loaded->runner->description().device;
  const int64_t weight_bytes = loaded->runner->description().weight_bytes;
  const int32_t vocab_size = loaded->runner->description().vocab_size;
  earlier_device = device;
  // After loading, when the device's allocator exists: weights, KV slots and
  // graph pools are held from here on, load-time temporaries are released.
  StartDeviceMemoryMeasurement(device);
  BenchObserver observer;
  EngineOptions engine_options;
  engine_options.pipeline = absl::StartsWith(mode, "double_buffered") ? Pipeline::kDoubleBuffered
                                                                       : Pipeline::kSync;
  engine_options.max_queue = batch + 1;
  Engine engine(engine_options, std::move(loaded->runner), loaded->tokenizer.get(), &observer);

  absl::Notification all_done;
  std::atomic<int> remaining{batch};
  std::vector<std::shared_ptr<CountingSink>> sinks;
  std::vector<GenerationRequest> requests =
      RandomRequests(batch, prompt, generate, 1234, vocab_size);
  for (GenerationRequest& request : requests) {
    sinks.push_back(std::make_shared<CountingSink>(&all_done, &remaining));
    request.sink = sinks.back();
  }
  absl::Status submitted = engine.SubmitAll(std::move(requests)).status();
  if (!submitted.ok()) return submitted;
  all_done.WaitForNotification();
  Result result;
  result.memory_bytes = PeakDeviceMemory(device) - held_before;
  engine.Shutdown(absl::Seconds(1));

  // Steady state: steps whose decode batch is the whole batch.
  std::vector<BenchObserver::Step> full;
  for (const auto& s : observer.steps()) {
    if (s.decode_rows == batch) full.push_back(s);
  }
  if (full.size() < 3) return absl::InternalError("too few full decode steps");
  double idle = 0, busy = 0, wait = 0, idle_over_100us = 0;
  std::vector<double> idle_us;
  for (const auto& s : full) {
    idle_us.push_back(1e6 * s.timings.gpu_idle_seconds);
    if (idle_us.back() > 1) ++result.idle_steps;
    if (idle_us.back() > 100) idle_over_100us += s.timings.gpu_idle_seconds;
    idle += s.timings.gpu_idle_seconds;
    busy += s.timings.gpu_busy_seconds;
    wait += s.timings.host_wait_seconds;
  }
  const double span = absl::ToDoubleSeconds(full.back().at - full.front().at);
  result.mode = mode;
  result.batch = batch;
  result.steps = static_cast<int>(full.size());
  result.us_per_step = 1e6 * span / (full.size() - 1);
  result.tokens_per_second = batch / (span / (full.size() - 1));
  result.weight_bytes = weight_bytes;
  result.weight_tb_per_s = weight_bytes / (1e-6 * result.us_per_step) / 1e12;
  result.idle_fraction = idle / (idle + busy);
  result.idle_p50_us = Percentile(idle_us, 0.5);
  result.idle_p99_us = Percentile(idle_us, 0.99);
  result.idle_max_us = Percentile(idle_us, 1.0);
  result.idle_share_over_100us = idle > 0 ? idle_over_100us / idle : 0;
  result.busy_us = 1e6 * busy / full.size();
  result.host_wait_us = 1e6 * wait / full.size();
  const std::vector<double> ttft = TtftMs(sinks);
  double sum = 0;
  for (double t : ttft) sum += t;
  result.ttft_ms = sum / batch;
  result.ttft_p50_ms = Percentile(ttft, 0.5);
  result.ttft_p99_ms = Percentile(ttft, 0.99);
  return result;
}

struct PrefillResult {
  int prompts = 0, length = 0;
  double ttft_p50_ms = 0, ttft_p99_ms = 0, first_ttft_p99_ms = 0;
  double gpu_ms = 0, tokens_per_second = 0, tflops = 0;
  int steps = 0;  // prefilling steps per burst
};

// Matmul and attention FLOPs of prefilling `prompts` x `length` tokens:
// 2 per non-embedding parameter per token, causal attention (QK and PV)
// and the LM head at each prompt's last token.
double PrefillFlops(const ModelDescription& m, int prompts, int length) {
  const double element = m.dtype == "float32" ? 4 : 2;
  const double hidden = m.hidden_size, vocab = m.vocab_size;
  const double non_embedding = m.weight_bytes / element - vocab * hidden;
  const double tokens = static_cast<double>(prompts) * length;
  const double attention =
      4.0 * hidden * m.num_layers * prompts * (length * (length + 1.0) / 2.0);
  return 2.0 * non_embedding * tokens + attention + 2.0 * prompts * vocab * hidden;
}

absl::StatusOr<PrefillResult> RunPrefill(const std::string& model_dir, int prompts,
                                         int length) {
  ModelOptions options;
  options.model_dir = model_dir;
  options.device = absl::GetFlag(FLAGS_device);
  options.dtype = absl::GetFlag(FLAGS_dtype);
  options.max_slots = prompts;
  options.max_context = length + 2;
  options.max_prefill_tokens = std::max(8192, prompts * length);
  absl::StatusOr<LoadedModel> loaded = LoadModel(options);
  if (!loaded.ok()) return loaded.status();
  const ModelDescription description = loaded->runner->description();
  BenchObserver observer;
  EngineOptions engine_options;
  engine_options.max_queue = prompts + 1;
  engine_options.max_prefill_tokens_per_step = options.max_prefill_tokens;
  Engine engine(engine_options, std::move(loaded->runner), loaded->tokenizer.get(), &observer);
  std::vector<double> p50, p99, gpu;
  PrefillResult result;
  const int repeats = std::max(1, absl::GetFlag(FLAGS_prefill_repeats));
  for (int r = 0; r < repeats; ++r) {
    absl::Notification all_done;
    std::atomic<int> remaining{prompts};
    std::vector<std::shared_ptr<CountingSink>> sinks;
    std::vector<GenerationRequest> requests =
        RandomRequests(prompts, length, /*generate=*/1, 1000 + r,
                       description.vocab_size);
    for (GenerationRequest& request : requests) {
      sinks.push_back(std::make_shared<CountingSink>(&all_done, &remaining));
      request.sink = sinks.back();
    }
    const size_t steps_before = observer.steps().size();
    absl::Status submitted = engine.SubmitAll(std::move(requests)).status();
    if (!submitted.ok()) return submitted;
    all_done.WaitForNotification();
    const std::vector<double> ttft = TtftMs(sinks);
    p50.push_back(Percentile(ttft, 0.5));
    p99.push_back(Percentile(ttft, 0.99));
    if (r == 0) result.first_ttft_p99_ms = p99.back();
    double seconds = 0;
    int steps = 0;
    const std::vector<BenchObserver::Step> all = observer.steps();
    for (size_t i = steps_before; i < all.size(); ++i) {
      if (all[i].prefill_tokens == 0) continue;
      seconds += all[i].timings.prefill_seconds;
      ++steps;
    }
    gpu.push_back(seconds);
    result.steps = steps;
  }
  engine.Shutdown(absl::Seconds(1));
  result.prompts = prompts;
  result.length = length;
  result.ttft_p50_ms = Percentile(p50, 0.5);
  result.ttft_p99_ms = Percentile(p99, 0.5);
  const double seconds = Percentile(gpu, 0.5);
  result.gpu_ms = 1e3 * seconds;
  result.tokens_per_second = seconds > 0 ? prompts * length / seconds : 0;
  result.tflops = seconds > 0 ? PrefillFlops(description, prompts, length) / seconds / 1e12 : 0;
  return result;
}

// "AxB" with positive integers A and B.
bool ParseCountByLength(const std::string& spec, int* count, int* length) {
  std::vector<std::string> parts = absl::StrSplit(spec, 'x');
  return parts.size() == 2 && absl::SimpleAtoi(parts[0], count) &&
         absl::SimpleAtoi(parts[1], length) && *count >= 1 && *length >= 1;
}

int PrefillMain(const std::string& model_dir, const std::string& model_name,
                std::FILE* json_out) {
  std::printf("%-10s %5s %6s %9s %9s %12s %9s %12s %8s %6s\n", "model", "K", "L",
              "TTFT p50", "TTFT p99", "1st TTFT p99", "GPU ms", "tokens/s", "TFLOP/s", "steps");
  int status = 0;  // 1 once a row failed
  for (const std::string& spec : absl::GetFlag(FLAGS_prefill)) {
    int prompts = 0, length = 0;
    if (!ParseCountByLength(spec, &prompts, &length)) {
      LogError("--prefill entries are KxL, e.g. 64x128; got ", spec);
      return 2;
    }
    absl::StatusOr<PrefillResult> r = RunPrefill(model_dir, prompts, length);
    if (!r.ok()) {
      std::printf("%-10s %5d %6d failed: %s\n", model_name.c_str(), prompts, length,
                  std::string(r.status().message()).c_str());
      status = 1;
      continue;
    }
    std::printf("%-10s %5d %6d %9.2f %9.2f %12.2f %9.3f %12.0f %8.1f %6d\n",
                model_name.c_str(), prompts, length, r->ttft_p50_ms, r->ttft_p99_ms,
                r->first_ttft_p99_ms, r->gpu_ms, r->tokens_per_second, r->tflops, r->steps);
    std::fflush(stdout);
    if (json_out != nullptr) {
      nlohmann::json j = {{"model", model_name}, {"kind", "prefill"}, {"prompts", prompts},
                          {"prompt_tokens", length}, {"ttft_p50_ms", r->ttft_p50_ms},
                          {"ttft_p99_ms", r->ttft_p99_ms},
                          {"first_burst_ttft_p99_ms", r->first_ttft_p99_ms},
                          {"prefill_gpu_ms", r->gpu_ms},
                          {"prefill_tokens_per_second", r->tokens_per_second},
                          {"tflops", r->tflops}, {"prefill_steps", r->steps},
                          {"repeats", absl::GetFlag(FLAGS_prefill_repeats)},
                          {"dtype", AbslUnparseFlag(absl::GetFlag(FLAGS_dtype))}};
      std::fprintf(json_out, "%s\n", j.dump().c_str());
      std::fflush(json_out);
    }
  }
  return status;
}

struct MixedResult {
  double decode_us = 0, mixed_us = 0;  // medians of device busy time per step
};

// N sequences decode; then, 20 times, a decode-only step and a step that
// also prefills an L-token prompt into slot N, each launched while the
// step before it runs (so its busy time holds no host latency).
absl::StatusOr<MixedResult> RunMixed(const std::string& model_dir, int rows, int length) {
  ModelOptions options;
  options.model_dir = model_dir;
  options.device = absl::GetFlag(FLAGS_device);
  options.dtype = absl::GetFlag(FLAGS_dtype);
  options.max_slots = rows + 1;
  options.max_context = std::max(absl::GetFlag(FLAGS_prompt_tokens) + 200, length + 1);
  options.one_forward_mixed_steps = absl::GetFlag(FLAGS_one_forward_mixed_steps);
  absl::StatusOr<LoadedModel> loaded = LoadModel(options);
  if (!loaded.ok()) return loaded.status();
  ModelRunner& runner = *loaded->runner;
  const int32_t vocab_size = runner.description().vocab_size;
  const std::vector<GenerationRequest> prompts =
      RandomRequests(rows, absl::GetFlag(FLAGS_prompt_tokens), 1, 7, vocab_size);
  const std::vector<GenerationRequest> arriving = RandomRequests(1, length, 1, 8, vocab_size);
  StepPlan prefill, decode;
  for (int r = 0; r < rows; ++r) {
    PrefillItem item;
    item.slot = r;
    item.tokens = prompts[r].prompt_token_ids;
    prefill.prefills.push_back(item);
    DecodeItem row;
    row.slot = r;
    decode.decodes.push_back(row);
  }
  StepPlan mixed = decode;
  PrefillItem item;
  item.slot = rows;
  item.tokens = arriving[0].prompt_token_ids;
  mixed.prefills.push_back(item);
  if (absl::StatusOr<StepOutput> out = runner.Step(prefill); !out.ok()) return out.status();
  for (int i = 0; i < 100; ++i) {
    if (absl::StatusOr<StepOutput> out = runner.Step(decode); !out.ok()) return out.status();
  }
  std::vector<double> decode_us, mixed_us;
  for (int i = 0; i < 20; ++i) {
    for (const StepPlan* second : {&decode, &mixed}) {
      if (absl::Status s = runner.Launch(decode); !s.ok()) return s;
      if (absl::Status s = runner.Launch(*second); !s.ok()) return s;
      absl::StatusOr<StepOutput> first = runner.Collect();
      absl::StatusOr<StepOutput> out = runner.Collect();
      if (!first.ok()) return first.status();
      if (!out.ok()) return out.status();
      (second == &decode ? decode_us : mixed_us).push_back(1e6 * out->timings.gpu_busy_seconds);
    }
  }
  return MixedResult{Percentile(decode_us, 0.5), Percentile(mixed_us, 0.5)};
}

int MixedMain(const std::string& model_dir, const std::string& model_name,
              std::FILE* json_out) {
  const bool one_forward = absl::GetFlag(FLAGS_one_forward_mixed_steps);
  std::printf("%-10s %-11s %5s %6s %10s %10s %10s %7s\n", "model", "mixed", "N", "L",
              "decode us", "mixed us", "extra us", "ratio");
  int status = 0;  // 1 once a row failed
  for (const std::string& spec : absl::GetFlag(FLAGS_mixed)) {
    int rows = 0, length = 0;
    if (!ParseCountByLength(spec, &rows, &length)) {
      LogError("--mixed entries are NxL, e.g. 64x256; got ", spec);
      return 2;
    }
    const char* kind = one_forward ? "one_forward" : "separate";
    absl::StatusOr<MixedResult> r = RunMixed(model_dir, rows, length);
    if (!r.ok()) {
      std::printf("%-10s %-11s %5d %6d failed: %s\n", model_name.c_str(), kind, rows, length,
                  std::string(r.status().message()).c_str());
      status = 1;
      continue;
    }
    std::printf("%-10s %-11s %5d %6d %10.1f %10.1f %10.1f %7.2f\n", model_name.c_str(), kind,
                rows, length, r->decode_us, r->mixed_us, r->mixed_us - r->decode_us,
                r->mixed_us / r->decode_us);
    std::fflush(stdout);
    if (json_out != nullptr) {
      nlohmann::json j = {{"model", model_name}, {"kind", "mixed"}, {"mixed_steps", kind},
                          {"decode_rows", rows}, {"prompt_tokens", length},
                          {"decode_step_us", r->decode_us}, {"mixed_step_us", r->mixed_us},
                          {"dtype", AbslUnparseFlag(absl::GetFlag(FLAGS_dtype))}};
      std::fprintf(json_out, "%s\n", j.dump().c_str());
      std::fflush(json_out);
    }
  }
  return status;
}

int Main() {
  // Every --batch entry is checked before the checkpoint is written and the
  // first row runs.
  std::vector<int> batches;
  for (const std::string& n : absl::GetFlag(FLAGS_batch)) {
    if (!absl::SimpleAtoi(n, &batches.emplace_back()) || batches.back() < 1) {
      LogError("--batch entries are numbers of sequences, 1 or more; got ", n);
      return 2;
    }
  }
  std::string model_dir = absl::GetFlag(FLAGS_model);
  std::string model_name = model_dir;
  if (model_dir.empty()) {
    RandomCheckpointOptions checkpoint;
    checkpoint.architecture = absl::GetFlag(FLAGS_arch);
    checkpoint.preset = absl::GetFlag(FLAGS_size);
    checkpoint.dtype = absl::GetFlag(FLAGS_dtype);
    model_name = ResolvedPreset(checkpoint);
    model_dir = absl::StrCat(absl::GetFlag(FLAGS_workdir), "-",
                             checkpoint.architecture.empty() ? "" : checkpoint.architecture + "-",
                             model_name);
    const absl::Status written = WriteRandomCheckpoint(model_dir, checkpoint);
    if (!written.ok()) {
      LogError(written.ToString());
      return 1;
    }
  }
  std::FILE* json_out = nullptr;
  if (const std::string out = absl::GetFlag(FLAGS_out); !out.empty()) {
    json_out = std::fopen(out.c_str(), "a");
    if (json_out == nullptr) {
      LogError("--out: cannot append to ", out);
      return 2;
    }
  }
  if (!absl::GetFlag(FLAGS_mixed).empty()) {
    const int status = MixedMain(model_dir, model_name, json_out);
    if (json_out != nullptr) std::fclose(json_out);
    return status;
  }
  if (!absl::GetFlag(FLAGS_prefill).empty()) {
    const int status = PrefillMain(model_dir, model_name, json_out);
    if (json_out != nullptr) std::fclose(json_out);
    return status;
  }
  std::printf("%-10s %-24s %5s %10s %12s %8s %10s %9s %9s %9s %9s %8s\n", "model", "mode", "N",
              "us/step", "tokens/s", "idle%", "busy us", "wait us", "TTFT p50", "TTFT p99",
              "peak GiB", "wt TB/s");
  int status = 0;  // 1 once a row failed
  for (const std::string& mode : absl::GetFlag(FLAGS_modes)) {
    for (const int batch : batches) {
      absl::StatusOr<Result> r = RunOne(model_dir, mode, batch);
      if (!r.ok()) {
        std::printf("%-10s %-24s %5d failed: %s\n", model_name.c_str(), mode.c_str(), batch,
                    std::string(r.status().message()).c_str());
        status = 1;
        continue;
      }
      r->model = model_name;
      std::printf(
          "%-10s %-24s %5d %10.1f %12.0f %7.2f%% %10.1f %9.1f %9.2f %9.2f %9.2f %8.2f\n",
          model_name.c_str(), mode.c_str(), batch, r->us_per_step, r->tokens_per_second,
          100 * r->idle_fraction, r->busy_us, r->host_wait_us, r->ttft_p50_ms, r->ttft_p99_ms,
          r->memory_bytes / 1073741824.0, r->weight_tb_per_s);
      std::fflush(stdout);
      if (json_out != nullptr) {
        nlohmann::json j = {{"model", r->model}, {"mode", r->mode}, {"batch", r->batch},
                            {"us_per_step", r->us_per_step},
                            {"tokens_per_second", r->tokens_per_second},
                            {"gpu_idle_fraction", r->idle_fraction},
                            {"gpu_busy_us_per_step", r->busy_us},
                            {"host_wait_us_per_step", r->host_wait_us},
                            {"ttft_ms", r->ttft_ms}, {"ttft_p50_ms", r->ttft_p50_ms},
                            {"ttft_p99_ms", r->ttft_p99_ms}, {"memory_bytes", r->memory_bytes},
                            {"weight_bytes", r->weight_bytes},
                            {"weight_read_tb_per_s", r->weight_tb_per_s},
                            {"steps", r->steps},
                            {"idle_steps", r->idle_steps},
                            {"idle_p50_us", r->idle_p50_us},
                            {"idle_p99_us", r->idle_p99_us},
                            {"idle_max_us", r->idle_max_us},
                            {"idle_share_over_100us", r->idle_share_over_100us},
                            {"dtype", AbslUnparseFlag(absl::GetFlag(FLAGS_dtype))},
                            {"prompt_tokens", absl::GetFlag(FLAGS_prompt_tokens)},
                            {"new_tokens", absl::GetFlag(FLAGS_new_tokens)}};
        std::fprintf(json_out, "%s\n", j.dump().c_str());
        std::fflush(json_out);
      }
    }
  }
  if (json_out != nullptr) std::fclose(json_out);
  return status;
}

}  // namespace
}  // namespace tandem

int main(int argc, char** argv) {
  tandem::SetProgramUsage(
      "Benchmarks the engine: tandem-bench [--arch=A --size=S|--model=DIR] [--batch=1,16,64,256] "
      "[--modes=...] [--out=results.jsonl]");
  absl::ParseCommandLine(argc, argv);
  tandem::UseOneCudaHardwareQueue();  // before any CUDA call
  tandem::KeepFreedHostMemory();  // before any tensor
  return tandem::Main();
}
