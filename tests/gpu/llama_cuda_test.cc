// GPU tests of the Llama / Qwen2 / Qwen3 CUDA path: the decoder's kernels
// against LlamaModel's ATen path, the one-row projection kernel (LaunchGemv;
// Llama's RMSNorm + projections and GPT-2's residual projections) against
// ATen, and every engine mode on a Llama checkpoint against synchronous
// eager.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDAStream.h>
#include <gtest/gtest.h>

#include "core/engine/generation_request.h"
#include "core/model/causal_lm.h"
#include "core/model/cuda/cuda_support.h"
#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/decode_ops.h"
#include "core/model/cuda/gemv_kernel.h"
#include "core/model/cuda/llama_cuda_decoder.h"
#include "core/model/cuda/llama_ops.h"
#include "core/model/kv_cache.h"
#include "core/model/llama/llama_config.h"
#include "core/model/llama/llama_model.h"
#include "core/model/llama/llama_weights.h"
#include "core/model/prefill_pack.h"
#include "core/model/random_checkpoint.h"
#include "tests/core/temp_dir.h"
#include "tests/gpu/gpu_test_support.h"

namespace tandem {
namespace {

using gpu_test::Ids;
using gpu_test::MixedRequests;
using gpu_test::RelativeError;
using gpu_test::RunAll;

// Llama / Qwen2 / Qwen3 shapes the kernels take (head size 64 or 128,
// grouped-query attention), small.
LlamaConfig GpuLlamaConfig(const std::string& type) {
  LlamaConfig c = *LlamaConfig::Preset(type, "tiny");
  c.vocab_size = 1000;
  c.bos_token_id = 1;
  c.eos_token_ids = {999};
  c.hidden_size = 256, c.intermediate_size = 512, c.num_hidden_layers = 3;
  // Query heads per K/V head: 4 (Llama 3's), 7 (Qwen2.5-0.5B's), 2.
  c.num_attention_heads = type == "llama" ? 8 : type == "qwen2" ? 14 : 4;
  c.num_key_value_heads = 2;
  c.head_dim = type == "qwen3" ? 128 : 64;
  return c;
}

// The CUDA decoder's kernels (RMSNorm, Q/K norm + RoPE, GQA attention with
// the K/V append, SwiGLU; the packed-prefill kernel) against LlamaModel's
// ATen path on the same weights: a pack of mixed lengths, then decode steps
// of 12 and of 3 rows at different positions.
class LlamaCudaTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LlamaCudaTest, KernelsMatchTheAtenPath) {
  c10::InferenceMode inference_mode;
  constexpr int64_t kSlots = 12;
  const LlamaConfig config = GpuLlamaConfig(GetParam());
  for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    const LlamaWeights weights = LlamaWeights::Random(config, 4).To(dtype, at::kCUDA);
    LlamaCudaDecoder fast(config, weights);
    LlamaModel reference(config, weights);
    ASSERT_TRUE(fast.GraphablePrefill());
    const auto options = at::TensorOptions().dtype(dtype).device(at::kCUDA);
    KvCacheShape shape = reference.kv_shape();
    shape.num_slots = kSlots;
    shape.max_context = 256;
    KvCache a(shape, options), b(shape, options);
    std::vector<std::vector<int32_t>> prompts(kSlots);  // the segments' token spans
    std::vector<PrefillSegment> segments;
    for (int64_t s = 0; s < kSlots; ++s) {
      for (int64_t t = 0; t < 9 + 13 * s; ++t) {
        prompts[s].push_back((131 * s + 17 * t + 3) % 1000);
      }
      segments.push_back({s, 0, prompts[s]});
    }
    const PrefillPack pack = MakePrefillPack(segments, at::kCUDA, 1024, kSlots);
    const double tolerance = dtype == at::kFloat ? 1e-4 : 3e-2;
    const at::Tensor got = fast.PrefillPacked(pack, &a);
    const at::Tensor want = reference.PrefillPacked(pack, &b);
    EXPECT_LE(RelativeError(got.narrow(0, 0, kSlots), want.narrow(0, 0, kSlots)), tolerance)
        << c10::toString(dtype);
    std::vector<int64_t> positions(kSlots);
    for (int64_t s = 0; s < kSlots; ++s) positions[s] = 9 + 13 * s;
    at::Tensor tokens = got.narrow(0, 0, kSlots).argmax(-1);  // per slot
    // Steps cycle through every slot (more rows than the fused kernels
    // take: cuBLAS, the grouped attention kernel with the context split over
    // a cluster), three of them (the fused linear kernel, RoPE inside the
    // attention kernel) and one (LaunchGemv's projections).
    const std::vector<std::vector<int64_t>> row_sets = {
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {11, 0, 6}, {7}};
    for (int step = 0; step < 9; ++step) {
      const std::vector<int64_t>& rows = row_sets[step % 3];
      const at::Tensor slots = Ids(rows);
      std::vector<int64_t> row_positions;
      for (int64_t r : rows) row_positions.push_back(positions[r]);
      const at::Tensor row_tokens = tokens.index_select(0, slots);
      const at::Tensor fast_logits = fast.Decode(slots, row_tokens, Ids(row_positions), 0, &a);
      const at::Tensor ref_logits =
          reference.Decode(slots, row_tokens, Ids(row_positions), 256, &b);
      EXPECT_LE(RelativeError(fast_logits, ref_logits), tolerance)
          << "step " << step << " " << c10::toString(dtype);
      if (dtype == at::kFloat) {
        EXPECT_TRUE(at::equal(fast_logits.argmax(-1), ref_logits.argmax(-1))) << step;
      }
      tokens.index_copy_(0, slots, ref_logits.argmax(-1));
      for (int64_t r : rows) ++positions[r];
    }
    // DecodeSlots reads tokens and positions by slot, greedy on the device.
    const at::Tensor slot_tokens = tokens, slot_positions = Ids(positions);
    const CausalLm::SlotDecode slotted =
        fast.DecodeSlots(Ids({2, 0}), slot_tokens, slot_positions, /*greedy=*/true, &a);
    const at::Tensor expected = reference.Decode(Ids({2, 0}), tokens.index_select(0, Ids({2, 0})),
                                                 Ids({positions[2], positions[0]}), 256, &b);
    EXPECT_LE(RelativeError(slotted.logits, expected), tolerance);
    EXPECT_TRUE(at::equal(slotted.tokens, slotted.logits.argmax(-1)));
  }
}

INSTANTIATE_TEST_SUITE_P(Families, LlamaCudaTest, ::testing::Values("llama", "qwen2", "qwen3"));

// LaunchGemv's one-row projections against ATen (LlamaRMSNorm as
// transformers computes it, linear, SwiGLU, the residual add) at sizes
// whose column groups outnumber three per multiprocessor, so each block
// loops over groups loading the next ahead, at a small size (one block per
// group), and at 2.5 blocks a multiprocessor (bf16: one block per group,
// compiled without the loop, since the looping kernel's 86-87 registers a
// thread hold two blocks a multiprocessor; fp32's 2,048 columns take two
// vectors a thread, so more groups, and loop); K up to 8192 (four or eight
// vectors per thread).
TEST(GemvKernelTest, OneRowProjectionsMatchAten) {
  c10::InferenceMode inference_mode;
  for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    const auto options = at::TensorOptions().dtype(dtype).device(at::kCUDA);
    const double tolerance = dtype == at::kFloat ? 1e-5 : 2e-2;
    for (const auto& [hidden, inner] : {std::pair<int64_t, int64_t>{2048, 8192}, {256, 512}}) {
      at::manual_seed(hidden);
      const at::Tensor x = at::randn({1, hidden}, options);
      const at::Tensor norm = at::rand({hidden}, options) + 0.5;
      const at::Tensor qkv_weight = at::randn({3 * hidden, hidden}, options) * 0.05;
      const at::Tensor bias = at::randn({3 * hidden}, options);
      const at::Tensor gate_up_weight = at::randn({2 * inner, hidden}, options) * 0.05;
      const at::Tensor down_weight = at::randn({hidden, inner}, options) * 0.05;
      const double eps = 1e-5;
      const at::Tensor x32 = x.to(at::kFloat);
      const at::Tensor h =
          norm * (x32 * at::rsqrt(x32.pow(2).mean(-1, true) + eps)).to(dtype);  // LlamaRMSNorm
      const std::string where = c10::toString(dtype) + std::string(" hidden ") +
                                std::to_string(hidden);

      EXPECT_LE(RelativeError(NormProjection(x, norm, eps, qkv_weight, bias),
                              at::linear(h, qkv_weight, bias)),
                tolerance)
          << where;
      const at::Tensor act = NormSwiGluProjection(x, norm, eps, gate_up_weight);
      const std::vector<at::Tensor> gate_up = at::linear(h, gate_up_weight).chunk(2, -1);
      EXPECT_LE(RelativeError(act, at::silu(gate_up[0]) * gate_up[1]), tolerance) << where;
      at::Tensor residual = x.clone();
      ProjectionAddResidual(act, down_weight, residual);
      EXPECT_LE(RelativeError(residual, x + at::linear(act, down_weight)), tolerance) << where;
      // Grids of 2.5 blocks a multiprocessor at 8 columns a block: a block per
      // group (the kernel without the next group's registers, kOneGroup)
      // where the looping kernel holds two blocks a multiprocessor.
      const int multiprocessors = gpu_test::MultiprocessorCount();
      ASSERT_GT(multiprocessors, 0);
      const int64_t wide = 8 * (5 * multiprocessors / 2);
      const at::Tensor wide_weight = at::randn({wide, hidden}, options) * 0.05;
      const at::Tensor wide_bias = at::randn({wide}, options);
      EXPECT_LE(RelativeError(NormProjection(x, norm, eps, wide_weight, wide_bias),
                              at::linear(h, wide_weight, wide_bias)),
                tolerance)
          << where << " wide";
      const at::Tensor wide_start = at::randn({1, wide}, options);
      at::Tensor wide_residual = wide_start.clone();
      ProjectionAddResidual(x, wide_weight, wide_residual);
      EXPECT_LE(RelativeError(wide_residual, wide_start + at::linear(x, wide_weight)), tolerance)
          << where << " wide";
    }
  }
}

// GPT-2's attention-out and fc2 projections of one row (LinearAddResidual
// takes LaunchGemv there): out = T(out + T(x w^T + bias)), at GPT-2 small's
// and medium's shapes in every dtype, against ATen; and through
// LinearAddResidual, the same values as the fused linear kernel at one row
// of a two-row batch.
TEST(GemvKernelTest, Gpt2ResidualProjectionsMatchAten) {
  c10::InferenceMode inference_mode;
  for (at::ScalarType dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
    const auto options = at::TensorOptions().dtype(dtype).device(at::kCUDA);
    const double tolerance = dtype == at::kFloat ? 1e-5 : 2e-2;
    for (const auto& [C, I] : {std::pair<int64_t, int64_t>{768, 3072}, {1024, 4096}}) {
      for (int64_t K : {C, I}) {
        at::manual_seed(K);
        const at::Tensor x = at::randn({1, K}, options);
        const at::Tensor weight = at::randn({C, K}, options) * 0.05;
        const at::Tensor bias = at::randn({C}, options);
        const at::Tensor start = at::randn({1, C}, options) * 4.0;
        const std::string where = c10::toString(dtype) + std::string(" K ") + std::to_string(K);
        at::Tensor residual = start.clone();
        ASSERT_EQ(LaunchGemv(KernelDTypeOf(dtype), GemvInput::kPlain,
                             LinearEpilogue::kBiasResidual, x.data_ptr(), nullptr, 0.0f,
                             weight.data_ptr(), bias.data_ptr(), residual.data_ptr(),
                             static_cast<int>(K), static_cast<int>(C),
                             c10::cuda::getCurrentCUDAStream()),
                  cudaSuccess);
        EXPECT_LE(RelativeError(residual, start + at::linear(x, weight, bias)), tolerance)
            << where;
        at::Tensor one = start.clone();
        LinearAddResidual(x, weight, bias, /*cluster=*/false, one);
        EXPECT_TRUE(at::equal(one, residual)) << where;
        at::Tensor two = at::cat({start, start});  // two rows: the fused linear kernel
        LinearAddResidual(at::cat({x, x}), weight, bias, /*cluster=*/false, two);
        EXPECT_LE(RelativeError(two[0], residual[0]), dtype == at::kFloat ? 1e-6 : 1e-2)
            << where;
      }
    }
  }
}

// Every engine mode on a Llama checkpoint (written by the family, with the
// real Llama 3 tokenizer) gives the tokens of synchronous eager.
TEST(EngineModesTest, LlamaEveryModeGivesTheTokensOfSynchronousEager) {
  TempDir dir("tandem_gpu_llama_");
  RandomCheckpointOptions options;
  options.architecture = "llama";
  options.preset = "tiny";
  options.overrides.hidden_size = 256;
  options.overrides.num_heads = 4;  // head size 64, 2 K/V heads
  options.overrides.max_positions = 256;
  ASSERT_TRUE(WriteRandomCheckpoint(dir.path(), options).ok());
  const std::vector<GenerationRequest> requests = MixedRequests();
  const auto reference = RunAll(dir.path(), false, false, 8, requests);
  for (auto [pipelined, graphs] : {std::pair{true, true}, std::pair{false, true}}) {
    const auto tokens = RunAll(dir.path(), pipelined, graphs, 8, requests);
    ASSERT_EQ(tokens.size(), requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      EXPECT_FALSE(reference[i].empty());
      EXPECT_EQ(tokens[i], reference[i]) << "request " << i << " pipelined=" << pipelined;
    }
  }
}

}  // namespace
}  // namespace tandem
