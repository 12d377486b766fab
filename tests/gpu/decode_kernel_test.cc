// GPU tests of GPT-2's decode kernels: the fused decode path (the fused,
// cluster, skinny and warp-group projections, the attention kernel at every
// launch shape, the greedy kernel and DecodeSlots) against the gather +
// matmul reference, the CUDA model's padded LM head against the unpadded CPU
// model, and the LM head and greedy kernel on crafted logits (ties, NaN,
// infinities, strided and misaligned rows) against ATen.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "core/model/causal_lm.h"
#include "core/model/cuda/cuda_support.h"
#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/decode_ops.h"
#include "core/model/cuda/gpt2_fused_decoder.h"
#include "core/model/gpt2/gpt2_config.h"
#include "core/model/gpt2/gpt2_model.h"
#include "core/model/gpt2/gpt2_weights.h"
#include "core/model/kv_cache.h"
#include "tests/gpu/gpu_test_support.h"

namespace tandem {
namespace {

using gpu_test::Ids;
using gpu_test::PrefillBoth;
using gpu_test::Shape;
using gpu_test::SmallConfig;

// ATen's greedy log-probabilities of float logits [rows, V]: log_softmax at
// torch.argmax's token (NaN where the row has a NaN or only -inf).
at::Tensor AtenGreedyLogprobs(const at::Tensor& logits) {
  return at::log_softmax(logits, 1).gather(1, logits.argmax(1).unsqueeze(1)).squeeze(1);
}

// SmallConfig at GPT-2 small's width: 768 channels, 12 heads of 64.
Gpt2Config Gpt2SmallWidth(int64_t layers) {
  Gpt2Config config = SmallConfig();
  config.n_embd = 768;
  config.n_head = 12;
  config.n_layer = layers;
  return config;
}

TEST(DecodeKernelTest, MatchesTheGatherMatmulPathForEveryLength) {
  c10::InferenceMode inference_mode;
  const Gpt2Config config = SmallConfig();
  for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    const Gpt2Weights weights = Gpt2Weights::Random(config, 3).To(dtype, at::kCUDA);
    Gpt2FusedDecoder with_kernel(config, weights);
    Gpt2Model reference(config, weights);  // gather + matmul attention
    const auto options = at::TensorOptions().dtype(dtype).device(at::kCUDA);
    KvCache cache_a(Shape(config, 4), options);
    KvCache cache_b(Shape(config, 4), options);
    ASSERT_TRUE(with_kernel.UsesFusedDecode(2)) << "the kernels must be what is compared";
    // Slots at lengths 1, 37, 200 and 255 (the last position of the context),
    // decoded two at a time (the fused kernels' batches).
    const std::vector<int64_t> lengths = {1, 37, 200, 255};
    for (int64_t s = 0; s < 4; ++s) {
      const at::Tensor prompt = at::randint(50000, {lengths[s]}, at::kLong).to(at::kCUDA);
      with_kernel.Prefill(s, prompt, &cache_a);
      reference.Prefill(s, prompt, &cache_b);
    }
    for (int64_t first : {0, 2}) {
      const std::vector<int64_t> slots = {first, first + 1};
      const std::vector<int64_t> tokens = {100 + first, 101 + first};
      const std::vector<int64_t> positions = {lengths[first], lengths[first + 1]};
      const at::Tensor a =
          with_kernel.Decode(Ids(slots), Ids(tokens), Ids(positions), 256, &cache_a);
      const at::Tensor b =
          reference.Decode(Ids(slots), Ids(tokens), Ids(positions), 256, &cache_b);
      const double tolerance = dtype == at::kFloat ? 1e-4 : 3e-2;
      const double error = ((a - b).norm() / b.norm()).item<double>();
      EXPECT_LT(error, tolerance) << "dtype " << c10::toString(dtype) << " slots " << first;
    }
  }
}

// The attention kernel at each launch shape it takes (DecodeAttentionShapeFor
// depends on the device's multiprocessors and the slots' positions): GPT-2
// small's 12 heads at one row (512 threads, the context split over a cluster
// of 4 in 640-position slots, and the row at 400 positions over 2 of them:
// the cluster's merge), at kMaxFusedRows + 1 rows (256 threads, no split) and
// at the smallest batch that takes 128-thread blocks (GPT-2 small N=64 on an
// H200), fp32 against the gather + matmul path.
TEST(DecodeKernelTest, AttentionMatchesTheReferenceAtEveryLaunchShape) {
  c10::InferenceMode inference_mode;
  constexpr int kContext = 640, kLongRow = 400;
  Gpt2Config config = Gpt2SmallWidth(/*layers=*/1);
  config.n_positions = kContext;
  int64_t wide = 0;  // the first batch of 128-thread blocks
  for (int64_t b = kMaxFusedRows + 1; b <= 128 && wide == 0; ++b) {
    if (DecodeAttentionShapeFor(static_cast<int>(b), 12, kContext).threads == 128) wide = b;
  }
  ASSERT_GT(wide, 0) << "no batch up to 128 takes 128-thread blocks on this device";
  ASSERT_EQ(DecodeAttentionShapeFor(1, 12, kContext).splits, 4);
  ASSERT_EQ(DecodeAttentionShapeFor(1, 12, kContext).threads, 512);
  // No more splits than the slots' positions can use: 2 of 256 at the
  // issue-15 bench's 321, none at 256.
  ASSERT_EQ(DecodeAttentionShapeFor(1, 12, 321).splits, 2);
  ASSERT_EQ(DecodeAttentionShapeFor(1, 12, 256).splits, 1);
  ASSERT_EQ(DecodeAttentionShapeFor(kMaxFusedRows + 1, 12, kContext).threads, 256);
  const Gpt2Weights weights = Gpt2Weights::Random(config, 7).To(at::kFloat, at::kCUDA);
  Gpt2FusedDecoder with_kernel(config, weights);
  Gpt2Model reference(config, weights);
  const auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  const KvCacheShape shape{config.n_layer, wide, config.n_head, kContext, config.head_dim()};
  KvCache cache_a(shape, options);
  KvCache cache_b(shape, options);
  std::vector<int64_t> lengths =
      PrefillBoth(with_kernel, &cache_a, reference, &cache_b, wide, 53, 5);
  // The one-row batch's slot (wide - 1) past 256 positions.
  const at::Tensor long_prompt = at::randint(50000, {kLongRow}, at::kLong).to(at::kCUDA);
  with_kernel.Prefill(wide - 1, long_prompt, &cache_a);
  reference.Prefill(wide - 1, long_prompt, &cache_b);
  lengths[wide - 1] = kLongRow;
  for (int64_t batch : {int64_t{1}, int64_t{kMaxFusedRows + 1}, wide}) {
    std::vector<int64_t> slots, tokens, positions;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t slot = wide - 1 - b;
      slots.push_back(slot);
      tokens.push_back(200 + 3 * b);
      positions.push_back(lengths[slot]);
    }
    // The same token at the same position rewrites the same K/V each time.
    const at::Tensor a =
        with_kernel.Decode(Ids(slots), Ids(tokens), Ids(positions), kContext, &cache_a);
    const at::Tensor b =
        reference.Decode(Ids(slots), Ids(tokens), Ids(positions), kContext, &cache_b);
    EXPECT_LT(((a - b).norm() / b.norm()).item<double>(), 1e-4) << "batch " << batch;
    EXPECT_TRUE(at::equal(a.argmax(-1), b.argmax(-1))) << "batch " << batch;
  }
}

// On CUDA Gpt2Model stores the LM head padded to a multiple of 128 rows
// (GPT-2's vocabulary is odd): its logits are still [B, V] and equal the
// unpadded CPU model's, and the embedding, which reads the same rows, too.
TEST(DecodeKernelTest, PaddedLmHeadGivesTheUnpaddedLogits) {
  c10::InferenceMode inference_mode;
  const Gpt2Config config = SmallConfig();
  ASSERT_NE(config.vocab_size % 128, 0) << "the padding must be exercised";
  const Gpt2Weights weights = Gpt2Weights::Random(config, 7);
  Gpt2Model cpu(config, weights);
  Gpt2Model gpu(config, weights.To(at::kFloat, at::kCUDA));
  EXPECT_EQ(gpu.weights().wte.size(0), config.vocab_size);
  KvCache cpu_cache(Shape(config, 2), at::TensorOptions().dtype(at::kFloat));
  KvCache gpu_cache(Shape(config, 2), at::TensorOptions().dtype(at::kFloat).device(at::kCUDA));
  const std::vector<int64_t> tokens = {config.vocab_size - 1, 17};  // the last row, too
  const at::Tensor slots = at::tensor({0L, 1L}), positions = at::tensor({0L, 0L});
  const at::Tensor want = cpu.Decode(slots, at::tensor(tokens), positions, 1, &cpu_cache);
  const at::Tensor got = gpu.Decode(slots.cuda(), Ids(tokens), positions.cuda(), 1, &gpu_cache);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(got.is_contiguous());
  EXPECT_LT(((got.cpu() - want).norm() / want.norm()).item<double>(), 1e-5);
}

// Row b's token in FusedAndReference::ExpectBatchMatches: first + step * b.
struct TokenRamp {
  int64_t first, step;
};

// `config`'s random weights (`seed`) in `dtype` on the GPU, run by the fused
// decoder and by the gather + matmul reference, each with its own cache of
// `slots` slots prefilled alike (PrefillBoth: step, offset).
struct FusedAndReference {
  FusedAndReference(const Gpt2Config& config, at::ScalarType dtype, uint64_t seed, int64_t slots,
                    int64_t step, int64_t offset)
      : weights(Gpt2Weights::Random(config, seed).To(dtype, at::kCUDA)),
        fused(config, weights),
        reference(config, weights),
        cache_a(Shape(config, slots), at::TensorOptions().dtype(dtype).device(at::kCUDA)),
        cache_b(Shape(config, slots), at::TensorOptions().dtype(dtype).device(at::kCUDA)),
        lengths(PrefillBoth(fused, &cache_a, reference, &cache_b, slots, step, offset)) {}

  // Decodes rows b < batch (slot S - 1 - b of the S slots: rows and slots in
  // different orders; token ramp.first + ramp.step * b at the slot's length)
  // with both and expects the logits within `tolerance` (|a - b| / |b|), the
  // greedy kernel to give argmax and log_softmax, and DecodeSlots (tokens
  // and positions read from per-slot state) the same rows as Decode.
  // Decoding the same token at the same position rewrites the same K/V, so
  // every batch size sees the same cache.
  void ExpectBatchMatches(int64_t batch, TokenRamp ramp, double tolerance,
                          const std::string& what) {
    const int64_t slots_total = static_cast<int64_t>(lengths.size());
    std::vector<int64_t> slots, tokens, positions;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t slot = slots_total - 1 - b;
      slots.push_back(slot);
      tokens.push_back(ramp.first + ramp.step * b);
      positions.push_back(lengths[slot]);
    }
    const at::Tensor a = fused.Decode(Ids(slots), Ids(tokens), Ids(positions), 256, &cache_a);
    const at::Tensor b = reference.Decode(Ids(slots), Ids(tokens), Ids(positions), 256, &cache_b);
    EXPECT_LT(((a - b).norm() / b.norm()).item<double>(), tolerance) << what;

    const auto [greedy, logprobs] = GreedyTokens(a);
    EXPECT_TRUE(greedy.equal(a.argmax(-1))) << what;
    const at::Tensor expected = at::log_softmax(a, -1).gather(1, greedy.unsqueeze(1)).squeeze(1);
    EXPECT_TRUE(at::allclose(logprobs, expected, 1e-5, 1e-4)) << what;

    at::Tensor slot_tokens = at::full({slots_total}, -1, at::kLong);
    at::Tensor slot_positions = at::full({slots_total}, -1, at::kLong);
    for (int64_t r = 0; r < batch; ++r) {
      slot_tokens[slots[r]] = tokens[r];
      slot_positions[slots[r]] = positions[r];
    }
    const CausalLm::SlotDecode step = fused.DecodeSlots(
        Ids(slots), slot_tokens.to(at::kCUDA), slot_positions.to(at::kCUDA), true, &cache_a);
    // Greedy: the head's own output (the padded cuBLAS head's, in the model's
    // dtype, above kMaxGpt2FusedRows rows).
    EXPECT_TRUE(step.logits.to(at::kFloat).equal(a)) << what;
    EXPECT_TRUE(step.tokens.equal(greedy)) << what;
    EXPECT_TRUE(at::allclose(step.logprobs, expected, 1e-5, 1e-4)) << what;
  }

  Gpt2Weights weights;
  Gpt2FusedDecoder fused;
  Gpt2Model reference;
  KvCache cache_a, cache_b;
  std::vector<int64_t> lengths;  // per slot
};

// The fused decode path (fused or cluster projections, attention kernel)
// against the gather + matmul reference, in every dtype, for every batch size
// up to kMaxFusedRows + 1, then the batch buckets 16, 32, 64 and one past
// each (the skinny kernel's path; from 32 to 63 rows the two halves on two
// streams, even and odd; from 64 one chain, whose Q/K/V projection takes the
// warp-group kernel at this width: Gpt2SmallWidthBatchesMatchTheReference
// has the others); the greedy kernel
// against argmax and log_softmax; and DecodeSlots, which reads tokens and
// positions by slot, against Decode.
TEST(DecodeKernelTest, FusedDecodeMatchesTheReferenceForEveryBatchSize) {
  c10::InferenceMode inference_mode;
  const Gpt2Config config = SmallConfig();
  const int64_t slots_total = kMaxClusterLinearRows + 1;
  std::vector<int64_t> batches;
  for (int64_t batch = 1; batch <= kMaxFusedRows + 1; ++batch) batches.push_back(batch);
  for (int64_t batch : {16, 17, 32, 33, 64, 65}) batches.push_back(batch);
  for (at::ScalarType dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
    FusedAndReference models(config, dtype, 11, slots_total, 37, 11);
    const Gpt2FusedDecoder& fused = models.fused;
    for (int64_t batch : batches) {
      // fp16 / bf16 take the cluster kernel's layers up to kMaxGpt2ClusterRows.
      const int64_t fused_rows = dtype == at::kFloat ? kMaxGpt2FusedRows : kMaxGpt2ClusterRows;
      EXPECT_EQ(fused.UsesFusedDecode(batch), batch <= fused_rows) << c10::toString(dtype);
      EXPECT_EQ(fused.UsesHalves(batch),
                batch >= kMinGpt2HalvesRows && batch <= kMaxGpt2HalvesRows)
          << c10::toString(dtype);
      models.ExpectBatchMatches(batch, {300, 7}, dtype == at::kFloat ? 1e-4 : 3e-2,
                                std::string(c10::toString(dtype)) + " batch " +
                                    std::to_string(batch));
    }
  }
}

// The batched layer at GPT-2 small's width (768; two layers), where the
// warp-group kernel takes the projections SmallConfig's width never gives
// it: attention-out, fc with its GELU, and fc2 split over 8-block clusters
// (WgmmaLinearConfigFor; cuBLAS runs fc above 64 rows, fc2 above 128). In
// fp16 and bf16 at 33 rows (halves), 64, 65, 128, 129 and 256 (one chain),
// against the gather + matmul reference; the greedy tokens against argmax,
// and DecodeSlots against Decode bit for bit.
TEST(DecodeKernelTest, Gpt2SmallWidthBatchesMatchTheReference) {
  c10::InferenceMode inference_mode;
  const Gpt2Config config = Gpt2SmallWidth(/*layers=*/2);
  const int64_t slots_total = 257;
  if (WgmmaLinearSupports(KernelDType::kBFloat16, 64, 3072, 768, 0)) {
    // What this test is for: every projection of a 64-row batch on the kernel.
    for (auto [K, N] : {std::pair{768, 2304}, std::pair{768, 768}, std::pair{768, 3072}}) {
      EXPECT_GE(WgmmaLinearConfigFor(64, K, N, 0), 0) << K << " x " << N;
    }
  } else {
    std::printf("no sm_90 GPU with 128 multiprocessors: the batches run on cuBLAS here\n");
  }
  for (at::ScalarType dtype : {at::kHalf, at::kBFloat16}) {
    FusedAndReference models(config, dtype, 13, slots_total, 29, 3);
    for (int64_t batch : {33, 64, 65, 128, 129, 256}) {
      const std::string what = std::string(c10::toString(dtype)) + " batch " + std::to_string(batch);
      EXPECT_EQ(models.fused.UsesHalves(batch), batch <= kMaxGpt2HalvesRows) << what;
      models.ExpectBatchMatches(batch, {500, 11}, 3e-2, what);
    }
  }
}

// The LM head and the greedy kernel on logits built to be hard: the maximum
// tied between an early and a late column, then a NaN, which torch.argmax
// takes as the maximum. With x = e_0 the logits are column 0 of the weight.
TEST(DecodeKernelTest, GreedyTakesTheFirstMaximumOfTheLmHeadsLogits) {
  c10::InferenceMode inference_mode;
  const int64_t vocab = 50257, K = 8;
  at::Tensor values = at::randn({vocab}, at::kFloat);
  values[40000] = 9.0;
  values[37] = 9.0;
  at::Tensor weight = at::zeros({vocab, K}, at::kFloat);
  weight.select(1, 0).copy_(values);
  for (int64_t rows : {1, 3, kMaxFusedRows}) {
    at::Tensor x = at::zeros({rows, K}, at::kFloat);
    x.select(1, 0).fill_(1.0);
    for (bool with_nan : {false, true}) {
      at::Tensor w = weight.clone();
      if (with_nan) w[12345][0] = NAN;
      const at::Tensor logits = LmHeadLogits(x.to(at::kCUDA), w.to(at::kCUDA));
      const at::Tensor expected_logits = w.select(1, 0).expand({rows, vocab});
      EXPECT_TRUE(at::allclose(logits.cpu(), expected_logits, 0, 0, /*equal_nan=*/true));
      const auto [tokens, logprobs] = GreedyTokens(logits);
      const int64_t expected_token = with_nan ? 12345 : 37;
      EXPECT_TRUE(tokens.cpu().eq(expected_token).all().item<bool>())
          << "rows " << rows << " nan " << with_nan << ": " << tokens.cpu();
      if (with_nan) {
        EXPECT_TRUE(logprobs.cpu().isnan().all().item<bool>()) << logprobs.cpu();
      } else {
        const float expected = at::log_softmax(values, 0)[37].item<float>();
        for (int64_t m = 0; m < rows; ++m) {
          EXPECT_NEAR(logprobs.cpu()[m].item<float>(), expected, 1e-5);
        }
      }
    }
  }
}

// GreedyDecode on a bf16 LM head's output whose rows are strided (a padded
// head narrowed to V columns, as GPT-2's above kMaxFusedRows rows): the same
// tie and NaN cases (and a tie inside one 16-byte vector), and the float32
// logits it writes on the way equal the conversion ATen does; at batches
// that split a row over 8, 4, 2 and 1 blocks (on an H200's 132
// multiprocessors; 264 blocks at once), with rows that start on a
// 16-byte boundary (padding 47) and rows that mostly do not (padding 3);
// and without the conversion (convert = false), the same tokens and
// log-probabilities.
TEST(DecodeKernelTest, GreedyDecodeConvertsStridedLowPrecisionLogits) {
  c10::InferenceMode inference_mode;
  const int64_t vocab = 50257;
  for (int64_t padding : {47, 3}) {
    for (int64_t rows : {1, 9, 66, 100, 600}) {
      for (bool with_nan : {false, true}) {
        at::Tensor values = at::randn({rows, vocab}, at::kFloat);
        values.select(1, 40000).fill_(9.0);
        values.select(1, 39).fill_(9.0);
        values.select(1, 37).fill_(9.0);
        if (with_nan) values.select(1, 12345).fill_(NAN);
        const at::Tensor padded = at::zeros(
            {rows, vocab + padding}, at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA));
        padded.narrow(1, 0, vocab).copy_(values);
        const CausalLm::SlotDecode out = GreedyDecode(padded.narrow(1, 0, vocab));
        const at::Tensor want = values.to(at::kBFloat16).to(at::kFloat);
        ASSERT_TRUE(out.logits.is_contiguous());
        ASSERT_EQ(out.logits.scalar_type(), at::kFloat);
        EXPECT_TRUE(at::equal(out.logits.cpu().nan_to_num(0), want.nan_to_num(0)))
            << "padding " << padding << " rows " << rows;
        // Without the conversion: the same choice, the logits left as given.
        const CausalLm::SlotDecode kept =
            GreedyDecode(padded.narrow(1, 0, vocab), /*convert=*/false);
        EXPECT_EQ(kept.logits.data_ptr(), padded.data_ptr());
        EXPECT_TRUE(kept.tokens.equal(out.tokens)) << "padding " << padding << " rows " << rows;
        EXPECT_TRUE(at::equal(kept.logprobs.nan_to_num(0), out.logprobs.nan_to_num(0)));
        const int64_t expected_token = with_nan ? 12345 : 37;
        EXPECT_TRUE(out.tokens.cpu().eq(expected_token).all().item<bool>())
            << "padding " << padding << " rows " << rows << " nan " << with_nan << ": "
            << out.tokens.cpu();
        if (with_nan) {
          EXPECT_TRUE(out.logprobs.cpu().isnan().all().item<bool>()) << out.logprobs.cpu();
        } else {
          const at::Tensor expected = at::log_softmax(want, 1).select(1, 37);
          EXPECT_TRUE(at::allclose(out.logprobs.cpu(), expected, 1e-5, 1e-5)) << out.logprobs.cpu();
        }
      }
    }
  }
}

// The greedy kernel on short rows that start off a 16-byte boundary (a
// tensor narrowed past its first column), where most logits are read one by
// one: token = torch.argmax, log-probability = log_softmax's, the float32
// copy = ATen's conversion; float32 and bf16.
TEST(DecodeKernelTest, GreedyDecodeOnShortMisalignedRows) {
  c10::InferenceMode inference_mode;
  for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    for (int64_t vocab : {1, 5, 13, 17, 100, 1001}) {
      for (int64_t rows : {1, 3}) {
        const at::Tensor values = at::randn({rows, vocab + 2}, at::kFloat).to(dtype);
        const at::Tensor logits = values.to(at::kCUDA).narrow(1, 1, vocab);
        const CausalLm::SlotDecode out = GreedyDecode(logits);
        const at::Tensor want = values.narrow(1, 1, vocab).to(at::kFloat);
        const std::string where = std::string(c10::toString(dtype)) + " vocab " +
                                  std::to_string(vocab) + " rows " + std::to_string(rows);
        EXPECT_TRUE(at::equal(out.logits.cpu(), want)) << where;
        EXPECT_TRUE(out.tokens.cpu().equal(want.argmax(1))) << where << ": " << out.tokens.cpu();
        const at::Tensor expected = AtenGreedyLogprobs(want);
        EXPECT_TRUE(at::allclose(out.logprobs.cpu(), expected, 1e-5, 1e-5)) << where;
      }
    }
  }
}

// The greedy kernel on rows with infinite logits: -inf before, between and
// after the finite ones (a masked vocabulary), rows of -inf only (ATen:
// token 0, log-probability NaN; one whose first logits are read one by one,
// one whose row starts on a 16-byte boundary) and a row with two +inf (the
// first, NaN), at batches that split a row over 8 and 1 blocks: token =
// torch.argmax, log-probability = log_softmax's.
TEST(DecodeKernelTest, GreedyDecodeSkipsMinusInfinityLogits) {
  c10::InferenceMode inference_mode;
  const int64_t vocab = 50257;
  for (int64_t rows : {4, 600}) {
    at::Tensor values = at::randn({rows, vocab}, at::kFloat);
    values.narrow(1, 0, 30000).fill_(-INFINITY);    // the first blocks' slices
    values.narrow(1, 40000, 100).fill_(-INFINITY);  // inside a slice
    values.narrow(1, vocab - 5, 5).fill_(-INFINITY);
    values[1].fill_(-INFINITY);
    // Row 8 starts on a 16-byte boundary: its only scalar is the last logit.
    if (rows > 8) values[8].fill_(-INFINITY);
    values[2][31000] = 8.0;
    values[3][35000] = INFINITY;
    values[3][45000] = INFINITY;
    const at::Tensor want = values.to(at::kBFloat16).to(at::kFloat);
    const CausalLm::SlotDecode out = GreedyDecode(want.to(at::kBFloat16).to(at::kCUDA));
    EXPECT_TRUE(out.tokens.cpu().equal(want.argmax(1))) << "rows " << rows;
    const at::Tensor expected = AtenGreedyLogprobs(want);
    EXPECT_TRUE(at::allclose(out.logprobs.cpu(), expected, 1e-5, 1e-5, /*equal_nan=*/true))
        << "rows " << rows << ": " << out.logprobs.cpu().narrow(0, 0, 4);
    EXPECT_TRUE(std::isnan(expected[1].item<float>())) << "ATen: a row of -inf has no softmax";
    EXPECT_EQ(out.tokens.cpu()[3].item<int64_t>(), 35000);
  }
}

// The greedy kernel on rows built to break its shortcuts, in fp32, fp16 and
// bf16, each row starting off a 16-byte boundary (so its first and last
// logits are read one by one, after the vectors): an ascending ramp -100 ..
// 100 (the exp-sum's shift follows the maximum); the maximum tied at index 0
// (a leading scalar) and later; tied at the last index (a trailing scalar)
// and earlier; a +inf, then NaNs in two later blocks (the first NaN wins); a
// NaN in a leading scalar and a later one; the lowest finite logit
// everywhere but 100; and in fp32 / bf16 logits around 3e9 and -1e10 (the
// shifted sum leaves the float range). At batches that split a row over 8
// and 1 blocks: token = torch.argmax, log-probability = log_softmax's.
TEST(DecodeKernelTest, GreedyDecodeMatchesAtenOnHardRows) {
  c10::InferenceMode inference_mode;
  const int64_t vocab = 50257;
  for (at::ScalarType dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
    for (int64_t rows : {8, 600}) {
      const bool wide = dtype != at::kHalf;  // fp16 holds neither 3e9 nor -3e38
      at::Tensor values = at::randn({rows, vocab + 1}, at::kFloat);
      at::Tensor body = values.narrow(1, 1, vocab);
      body[0].copy_(at::linspace(-100.0, 100.0, vocab));
      body[1][0] = 9.0;
      body[1][25000] = 9.0;
      body[2][vocab - 1] = 9.0;
      body[2][20000] = 9.0;
      body[3][30000] = INFINITY;
      body[3][40000] = NAN;
      body[3][45000] = NAN;
      body[4][2] = NAN;
      body[4][30000] = NAN;
      body[5].fill_(wide ? -3.0e38 : -65504.0);
      body[5].narrow(0, 30000, 100).normal_();
      if (wide) {
        body[6].mul_(300.0).add_(3.0e9);
        body[7].mul_(1000.0).add_(-1.0e10);
      }
      const at::Tensor typed = values.to(dtype);
      const at::Tensor want = typed.narrow(1, 1, vocab).to(at::kFloat);
      const CausalLm::SlotDecode out = GreedyDecode(typed.to(at::kCUDA).narrow(1, 1, vocab));
      const std::string where =
          std::string(c10::toString(dtype)) + " rows " + std::to_string(rows);
      const at::Tensor tokens = out.tokens.cpu(), logprobs = out.logprobs.cpu();
      EXPECT_TRUE(tokens.equal(want.argmax(1))) << where << ": " << tokens.narrow(0, 0, 8);
      const at::Tensor expected = AtenGreedyLogprobs(want);
      EXPECT_TRUE(at::allclose(logprobs, expected, 1e-5, 1e-5, /*equal_nan=*/true))
          << where << ": " << logprobs.narrow(0, 0, 8) << expected.narrow(0, 0, 8);
      EXPECT_EQ(tokens[1].item<int64_t>(), 0) << where;
      EXPECT_EQ(tokens[2].item<int64_t>(), 20000) << where;
      EXPECT_EQ(tokens[3].item<int64_t>(), 40000) << where;
      EXPECT_EQ(tokens[4].item<int64_t>(), 2) << where;
    }
  }
}

// The one-row head (NormRowHead: final LayerNorm, LM head and greedy choice
// in one kernel) against the three kernels it folds, LayerNorm, LmHeadLogits
// and GreedyTokens: the same logits bit for bit, the same token, the
// log-probability to rounding, and the logits near ATen's. At K from 8 to
// the most one chunk takes (fp32 512, fp16 / bf16 1,024; fp16 / bf16 K of
// 256 to 1,024 by 256 take the kernel with K compiled in), and N from fewer
// columns than one block's warps to more than the wave's (GPT-2's 50,257).
// Each case runs twice on one workspace: the kernel leaves its ticket ready.
TEST(DecodeKernelTest, RowHeadMatchesTheLayerNormLmHeadAndGreedyKernels) {
  c10::InferenceMode inference_mode;
  at::manual_seed(7);
  const at::Tensor workspace = RowHeadWorkspace(at::Device(at::kCUDA));
  for (at::ScalarType dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
    const int64_t widest = dtype == at::kFloat ? 512 : 1024;
    for (int64_t K : {int64_t{8}, int64_t{128}, int64_t{256}, int64_t{512}, int64_t{768},
                      widest}) {
      if (K > widest) continue;
      for (int64_t N : {5, 8 * 3 + 1, 20000, 50257}) {
        const at::TensorOptions on = at::TensorOptions().dtype(dtype).device(at::kCUDA);
        const at::Tensor x = (at::randn({1, K}) * 3 + 1).to(on);
        const at::Tensor weight = (at::randn({K}) * 0.2 + 1).to(on);
        const at::Tensor bias = (at::randn({K}) * 0.1).to(on);
        const at::Tensor head = (at::randn({N, K}) / std::sqrt(static_cast<double>(K))).to(on);
        const FusedNorm norm{weight, bias, 1e-5};
        const std::string where = std::string(c10::toString(dtype)) + " K " + std::to_string(K) +
                                  " N " + std::to_string(N);
        ASSERT_TRUE(RowHeadFolds(x)) << where;
        const at::Tensor want_logits = LmHeadLogits(LayerNorm(x, norm), head);
        const auto [want_tokens, want_logprobs] = GreedyTokens(want_logits);
        std::vector<CausalLm::SlotDecode> outs;  // kept: each round writes fresh memory
        for (int round = 0; round < 2; ++round) {
          // Parts that a merge reading stale ones would pick: NaN maxima.
          workspace.narrow(0, 16, workspace.numel() - 16).fill_(255);
          outs.push_back(NormRowHead(x, norm, head, /*greedy=*/true, workspace));
          const CausalLm::SlotDecode& out = outs.back();
          EXPECT_TRUE(out.logits.equal(want_logits)) << where << " round " << round;
          EXPECT_TRUE(out.tokens.equal(want_tokens))
              << where << " round " << round << ": " << out.tokens.cpu() << want_tokens.cpu();
          EXPECT_TRUE(at::allclose(out.logprobs, want_logprobs, 1e-5, 1e-5)) << where;
          // The ticket is back at 0 for the next launch.
          EXPECT_EQ(workspace.narrow(0, 0, 4).cpu().nonzero().numel(), 0) << where;
        }
        const CausalLm::SlotDecode logits_only =
            NormRowHead(x, norm, head, /*greedy=*/false, workspace);
        EXPECT_TRUE(logits_only.logits.equal(want_logits)) << where;
        EXPECT_FALSE(logits_only.tokens.defined()) << where;
        const at::Tensor aten = at::matmul(
            at::layer_norm(x.to(at::kFloat), {K}, weight.to(at::kFloat), bias.to(at::kFloat),
                           1e-5),
            head.to(at::kFloat).t());
        EXPECT_LT(gpu_test::RelativeError(want_logits, aten), dtype == at::kFloat ? 1e-5 : 3e-2)
            << where;
      }
    }
  }
  EXPECT_FALSE(RowHeadFolds(at::zeros({2, 128}, at::TensorOptions().dtype(at::kHalf))));
  EXPECT_FALSE(RowHeadFolds(at::zeros({1, 1032}, at::TensorOptions().dtype(at::kHalf))));
}

// The one-row head's greedy choice on crafted logits (no LayerNorm: x = e_0,
// so the logits are the head's column 0), one row a case: the maximum tied
// early and late; a +inf, then NaNs (the first NaN wins); a NaN at index 2
// and a later one; the lowest finite logit everywhere but 100 columns; and
// in fp32 / bf16 logits around 3e9 and -1e10 (the shifted sum leaves the
// float range). Token = torch.argmax, log-probability = log_softmax's.
TEST(DecodeKernelTest, RowHeadGreedyMatchesAtenOnHardRows) {
  c10::InferenceMode inference_mode;
  at::manual_seed(11);
  const int64_t vocab = 50257, K = 8;
  const at::Tensor workspace = RowHeadWorkspace(at::Device(at::kCUDA));
  for (at::ScalarType dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
    const bool wide = dtype != at::kHalf;  // fp16 holds neither 3e9 nor -3e38
    for (int row = 0; row < (wide ? 7 : 5); ++row) {
      at::Tensor values = at::randn({vocab}, at::kFloat);
      if (row == 0) {
        values[25000] = 9.0;
        values[3] = 9.0;
      } else if (row == 1) {
        values[vocab - 1] = 9.0;
        values[20000] = 9.0;
      } else if (row == 2) {
        values[30000] = INFINITY;
        values[40000] = NAN;
        values[45000] = NAN;
      } else if (row == 3) {
        values[2] = NAN;
        values[30000] = NAN;
      } else if (row == 4) {
        values.fill_(wide ? -3.0e38 : -65504.0);
        values.narrow(0, 30000, 100).normal_();
      } else if (row == 5) {
        values.mul_(300.0).add_(3.0e9);
      } else {
        values.mul_(1000.0).add_(-1.0e10);
      }
      at::Tensor head = at::zeros({vocab, K}, at::kFloat);
      head.select(1, 0).copy_(values);
      const at::Tensor typed_head = head.to(dtype).to(at::kCUDA);
      at::Tensor x = at::zeros({1, K}, at::kFloat);
      x[0][0] = 1.0;
      const at::Tensor want = typed_head.select(1, 0).to(at::kFloat).cpu().unsqueeze(0);
      at::Tensor logits = at::empty({1, vocab}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA));
      at::Tensor tokens = at::empty({1}, at::TensorOptions().dtype(at::kLong).device(at::kCUDA));
      at::Tensor logprobs = at::empty({1}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA));
      const at::Tensor typed_x = x.to(dtype).to(at::kCUDA);
      const RowLmHeadGreedy greedy{tokens.data_ptr<int64_t>(), logprobs.data_ptr<float>(),
                                   workspace.data_ptr()};
      ASSERT_EQ(LaunchRowLmHead(KernelDTypeOf(dtype), typed_x.data_ptr(), RowLmHeadNorm{},
                                typed_head.data_ptr(), logits.data_ptr<float>(), K, vocab, greedy,
                                nullptr),
                cudaSuccess);
      const std::string where = std::string(c10::toString(dtype)) + " row " + std::to_string(row);
      EXPECT_TRUE(at::allclose(logits.cpu(), want, 0, 0, /*equal_nan=*/true)) << where;
      // The same kernel without the greedy choice (logits only).
      at::Tensor plain = at::empty_like(logits);
      ASSERT_EQ(LaunchRowLmHead(KernelDTypeOf(dtype), typed_x.data_ptr(), RowLmHeadNorm{},
                                typed_head.data_ptr(), plain.data_ptr<float>(), K, vocab,
                                RowLmHeadGreedy{}, nullptr),
                cudaSuccess);
      EXPECT_TRUE(at::allclose(plain.cpu(), want, 0, 0, /*equal_nan=*/true)) << where;
      EXPECT_EQ(tokens.cpu().item<int64_t>(), want.argmax(1).item<int64_t>()) << where;
      EXPECT_TRUE(at::allclose(logprobs.cpu(), AtenGreedyLogprobs(want), 1e-5, 1e-5,
                               /*equal_nan=*/true))
          << where << ": " << logprobs.cpu() << AtenGreedyLogprobs(want);
      const int64_t expected[] = {3, 20000, 40000, 2};
      if (row < 4) EXPECT_EQ(tokens.cpu().item<int64_t>(), expected[row]) << where;
    }
  }
}

// PublishRows writes a step's tokens and log-probabilities into pinned host
// memory through its device pointers, at an offset, as the copies did.
TEST(DecodeKernelTest, PublishRowsWritesPinnedHostMemory) {
  c10::InferenceMode inference_mode;
  const at::Tensor host_tokens = PinnedBuffer(8, at::kLong);
  const at::Tensor host_logprobs = PinnedBuffer(8, at::kFloat);
  auto* mapped_tokens = static_cast<int64_t*>(MappedHostPointer(host_tokens));
  auto* mapped_logprobs = static_cast<float*>(MappedHostPointer(host_logprobs));
  ASSERT_NE(mapped_tokens, nullptr);
  ASSERT_NE(mapped_logprobs, nullptr);
  const at::Tensor tokens = at::arange(101, 106, at::TensorOptions().dtype(at::kLong));
  const at::Tensor logprobs = -at::arange(1, 6, at::TensorOptions().dtype(at::kFloat)) / 8;
  PublishRows(tokens.to(at::kCUDA), logprobs.to(at::kCUDA), mapped_tokens + 2,
              mapped_logprobs + 2);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(host_tokens.narrow(0, 2, 5).equal(tokens)) << host_tokens;
  EXPECT_TRUE(host_logprobs.narrow(0, 2, 5).equal(logprobs)) << host_logprobs;
  EXPECT_EQ(host_tokens[1].item<int64_t>(), 0);  // the rows around them untouched
  EXPECT_EQ(host_tokens[7].item<int64_t>(), 0);
}

}  // namespace
}  // namespace tandem
