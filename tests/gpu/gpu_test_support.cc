// The helpers gpu_test_support.h declares.
#include "tests/gpu/gpu_test_support.h"

#include <memory>
#include <utility>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/engine/engine.h"
#include "core/engine/pipeline.h"
#include "core/model/model_loader.h"
#include "tests/core/recording_sink.h"

namespace tandem {
namespace gpu_test {

Gpt2Config SmallConfig() {
  Gpt2Config config = *Gpt2Config::Preset("tiny");
  config.n_embd = 128;
  config.n_head = 2;  // head_dim 64, as in every GPT-2 size
  config.n_layer = 3;
  config.n_positions = 256;
  return config;
}

at::Tensor Ids(std::vector<int64_t> ids) {
  return at::tensor(ids, at::kLong).to(at::kCUDA);
}

KvCacheShape Shape(const Gpt2Config& config, int64_t slots) {
  return {config.n_layer, slots, config.n_head, 256, config.head_dim()};
}

std::vector<int64_t> PrefillBoth(const CausalLm& a, KvCache* cache_a, const CausalLm& b,
                                 KvCache* cache_b, int64_t count, int64_t step, int64_t offset) {
  std::vector<int64_t> lengths;
  for (int64_t s = 0; s < count; ++s) {
    lengths.push_back(1 + (step * s + offset) % 254);
    const at::Tensor prompt = at::randint(50000, {lengths[s]}, at::kLong).to(at::kCUDA);
    a.Prefill(s, prompt, cache_a);
    b.Prefill(s, prompt, cache_b);
  }
  return lengths;
}

double RelativeError(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max()).item<double>();
}

int MultiprocessorCount() {
  int device = 0, count = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return 0;
  }
  return count;
}

std::vector<std::vector<int32_t>> RunAll(const std::string& dir, bool pipelined, bool graphs,
                                         int slots, const std::vector<GenerationRequest>& requests,
                                         bool waves, int prefill_budget, DType dtype) {
  ModelOptions options;
  options.model_dir = dir;
  options.device.kind = DeviceSpec::Kind::kCuda;
  options.dtype = dtype;
  options.max_slots = slots;
  options.cuda_graphs = graphs;
  absl::StatusOr<LoadedModel> loaded = LoadModel(options);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return std::vector<std::vector<int32_t>>(requests.size());
  EngineOptions engine_options;
  engine_options.pipeline = pipelined ? Pipeline::kDoubleBuffered : Pipeline::kSync;
  if (prefill_budget > 0) {
    engine_options.max_prefill_tokens_per_step = 2 * prefill_budget;
    engine_options.prefill_tokens_while_decoding = prefill_budget;
  }
  Engine engine(engine_options, std::move(loaded->runner), loaded->tokenizer.get(), nullptr);
  EXPECT_EQ(engine.pipelined(), pipelined);
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  // Three waves: later requests join a batch that is already decoding.
  for (size_t i = 0; i < requests.size(); ++i) {
    GenerationRequest request = requests[i];
    sinks.push_back(std::make_shared<RecordingSink>());
    request.sink = sinks.back();
    EXPECT_TRUE(engine.Submit(std::move(request)).ok());
    if (waves && i % 4 == 3) absl::SleepFor(absl::Milliseconds(30));
  }
  std::vector<std::vector<int32_t>> tokens;
  for (auto& sink : sinks) {
    EXPECT_TRUE(sink->WaitFinished(absl::Seconds(120)));
    tokens.push_back(sink->ids());
  }
  return tokens;
}

std::vector<GenerationRequest> MixedRequests() {
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < 12; ++i) {
    GenerationRequest r;
    for (int t = 0; t < 3 + 5 * i; ++t) r.prompt_token_ids.push_back((97 * i + 13 * t) % 50000);
    r.stopping.max_tokens = 5 + 3 * i;
    r.stopping.ignore_eos = i % 3 != 0;
    if (i % 2 == 1) {
      r.sampling.temperature = 0.8f;
      r.sampling.top_p = 0.9f;
      r.sampling.top_k = i % 4 == 1 ? 40 : 0;
      r.sampling.seed = 1000 + i;
    }
    requests.push_back(r);
  }
  return requests;
}

}  // namespace gpu_test
}  // namespace tandem
