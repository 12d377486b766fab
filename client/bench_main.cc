// tandem-bench: drives the engine in-process with N concurrent sequences
// (prompt P tokens, G new tokens, ignore_eos, greedy) for each engine mode,
// and prints a table and writes JSON: µs per decode step, tokens/s, GPU idle
// fraction of decode time, host wait per step, time to first token, and the
// peak device memory each mode reserves.
#include <algorithm>
#include <atomic>
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
#include "absl/flags/usage.h"
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

namespace tandem {
namespace {

// Records every step (engine thread) and every finish.
class BenchObserver : public EngineObserver {
 public:
  struct Step {
    absl::Time at;
    int decode_rows;
    StepTimings timings;
  };
  void OnStep(const StepStats& stats) override {
    absl::MutexLock lock(&mu_);
    steps_.push_back({absl::Now(), stats.decode_sequences, stats.timings});
  }
  std::vector<Step> steps() {
    absl::MutexLock lock(&mu_);
    return steps_;
  }

 private:
  absl::Mutex mu_;
  std::vector<Step> steps_;
};

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

struct Result {
  std::string model, mode;
  int batch = 0;
  double us_per_step = 0, tokens_per_second = 0, idle_fraction = 0;
  double host_wait_us = 0, ttft_ms = 0, busy_us = 0;
  int64_t memory_bytes = 0;
  int steps = 0;
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

  std::mt19937 rng(1234);
  std::uniform_int_distribution<int32_t> token(0, 50000);
  absl::Notification all_done;
  std::atomic<int> remaining{batch};
  std::vector<std::shared_ptr<CountingSink>> sinks;
  for (int i = 0; i < batch; ++i) {
    GenerationRequest request;
    for (int t = 0; t < prompt; ++t) request.prompt_token_ids.push_back(token(rng));
    request.stopping.max_tokens = generate;
    request.stopping.ignore_eos = true;
    sinks.push_back(std::make_shared<CountingSink>(&all_done, &remaining));
    request.sink = sinks.back();
    absl::StatusOr<uint64_t> id = engine.Submit(std::move(request));
    if (!id.ok()) return id.status();
  }
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
  double idle = 0, busy = 0, wait = 0;
  for (const auto& s : full) {
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
  result.idle_fraction = idle / (idle + busy);
  result.busy_us = 1e6 * busy / full.size();
  result.host_wait_us = 1e6 * wait / full.size();
  double ttft = 0;
  for (const auto& sink : sinks) ttft += sink->summary_.time_to_first_token_seconds;
  result.ttft_ms = 1e3 * ttft / batch;
  return result;
}

int Main() {
  std::string model_dir = absl::GetFlag(FLAGS_model);
  std::string model_name = model_dir;
  if (model_dir.empty()) {
    RandomCheckpointOptions checkpoint;
    checkpoint.architecture = absl::GetFlag(FLAGS_arch);
    checkpoint.preset = absl::GetFlag(FLAGS_size);
    checkpoint.dtype = absl::GetFlag(FLAGS_dtype);
    model_name = ResolvedPreset(checkpoint);
    model_dir = absl::StrCat(absl::GetFlag(FLAGS_workdir), "-", model_name);
    const absl::Status written = WriteRandomCheckpoint(model_dir, checkpoint);
    if (!written.ok()) {
      LogError(written.ToString());
      return 1;
    }
  }
  std::FILE* json_out = nullptr;
  if (const std::string out = absl::GetFlag(FLAGS_out); !out.empty()) {
    json_out = std::fopen(out.c_str(), "a");
  }
  std::printf("%-10s %-24s %5s %10s %12s %8s %10s %9s %9s %9s\n", "model", "mode", "N",
              "us/step", "tokens/s", "idle%", "busy us", "wait us", "TTFT ms", "peak GiB");
  for (const std::string& mode : absl::GetFlag(FLAGS_modes)) {
    for (const std::string& n : absl::GetFlag(FLAGS_batch)) {
      int batch = 0;
      if (!absl::SimpleAtoi(n, &batch) || batch < 1) return 2;
      absl::StatusOr<Result> r = RunOne(model_dir, mode, batch);
      if (!r.ok()) {
        std::printf("%-10s %-24s %5d failed: %s\n", model_name.c_str(), mode.c_str(), batch,
                    std::string(r.status().message()).c_str());
        continue;
      }
      r->model = model_name;
      std::printf("%-10s %-24s %5d %10.1f %12.0f %7.2f%% %10.1f %9.1f %9.1f %9.2f\n",
                  model_name.c_str(), mode.c_str(), batch, r->us_per_step,
                  r->tokens_per_second, 100 * r->idle_fraction, r->busy_us, r->host_wait_us,
                  r->ttft_ms, r->memory_bytes / 1073741824.0);
      std::fflush(stdout);
      if (json_out != nullptr) {
        nlohmann::json j = {{"model", r->model}, {"mode", r->mode}, {"batch", r->batch},
                            {"us_per_step", r->us_per_step},
                            {"tokens_per_second", r->tokens_per_second},
                            {"gpu_idle_fraction", r->idle_fraction},
                            {"gpu_busy_us_per_step", r->busy_us},
                            {"host_wait_us_per_step", r->host_wait_us},
                            {"ttft_ms", r->ttft_ms}, {"memory_bytes", r->memory_bytes},
                            {"steps", r->steps},
                            {"dtype", AbslUnparseFlag(absl::GetFlag(FLAGS_dtype))},
                            {"prompt_tokens", absl::GetFlag(FLAGS_prompt_tokens)},
                            {"new_tokens", absl::GetFlag(FLAGS_new_tokens)}};
        std::fprintf(json_out, "%s\n", j.dump().c_str());
        std::fflush(json_out);
      }
    }
  }
  if (json_out != nullptr) std::fclose(json_out);
  return 0;
}

}  // namespace
}  // namespace tandem

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Benchmarks the engine: tandem-bench [--arch=A --size=S|--model=DIR] [--batch=1,16,64,256] "
      "[--modes=...] [--out=results.jsonl]");
  absl::ParseCommandLine(argc, argv);
  return tandem::Main();
}
