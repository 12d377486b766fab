// Helpers shared by the GPU test binaries cuda_runner_test,
// decode_kernel_test, llama_cuda_test and fused_linear_test: a small GPT-2
// configuration and its cache shape, token ids on the device, two models
// prefilled alike, a relative error, the device's multiprocessors, and
// requests run through an engine.
// Defined in gpu_test_support.cc, which each of those binaries compiles.
#ifndef TANDEM_TESTS_GPU_GPU_TEST_SUPPORT_H_
#define TANDEM_TESTS_GPU_GPU_TEST_SUPPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "core/engine/generation_request.h"
#include "core/model/causal_lm.h"
#include "core/model/gpt2/gpt2_config.h"
#include "core/model/kv_cache.h"
#include "core/model/model_options.h"

namespace tandem {
namespace gpu_test {

// GPT-2's tiny preset at width 128 (two heads of 64, GPT-2's head size),
// three layers and 256 positions.
Gpt2Config SmallConfig();

// `ids` as an int64 tensor on the GPU.
at::Tensor Ids(std::vector<int64_t> ids);

// The KV cache shape of `config` with `slots` slots of 256 positions.
KvCacheShape Shape(const Gpt2Config& config, int64_t slots);

// Prefills slots [0, count) of both models' caches with the same random
// prompt each, of length 1 + (step * s + offset) % 254; returns the lengths.
std::vector<int64_t> PrefillBoth(const CausalLm& a, KvCache* cache_a, const CausalLm& b,
                                 KvCache* cache_b, int64_t count, int64_t step, int64_t offset);

// max |a - b| / max |b|.
double RelativeError(const at::Tensor& a, const at::Tensor& b);

// The current device's multiprocessors (0 when the query fails), for tests
// whose shapes cross the kernels' one-wave thresholds.
int MultiprocessorCount();

// Runs `requests` through an engine in `mode` and returns each one's tokens.
// In `waves` of four, 30 ms apart, or all at once.
std::vector<std::vector<int32_t>> RunAll(const std::string& dir, bool pipelined, bool graphs,
                                         int slots, const std::vector<GenerationRequest>& requests,
                                         bool waves = true, int prefill_budget = 0,
                                         DType dtype = DType::kFloat32);

// Twelve requests of 3 to 58 prompt tokens and 5 to 38 new tokens: every
// third one may stop at EOS; the odd ones sample (temperature 0.8, top-p
// 0.9, top-k 40 on every other one, seeded), the others are greedy.
std::vector<GenerationRequest> MixedRequests();

}  // namespace gpu_test
}  // namespace tandem

#endif  // TANDEM_TESTS_GPU_GPU_TEST_SUPPORT_H_
