// GPU tests of the fast path: the attention kernel against the reference
// path, every engine mode against synchronous eager, slot reuse, and the
// steady decode loop running without a host synchronization.
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/engine/engine.h"
#include "core/model/cuda/cuda_support.h"
#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/decode_ops.h"
#include "core/model/cuda/gemv_kernel.h"
#include "core/model/cuda/gpt2_fused_decoder.h"
#include "core/model/gpt2/gpt2_family.h"
#include "core/model/gpt2/gpt2_model.h"
#include "core/model/cuda/llama_cuda_decoder.h"
#include "core/model/cuda/llama_ops.h"
#include "core/model/llama/llama_model.h"
#include "core/model/random_checkpoint.h"
#include "core/model/model_loader.h"
#include "core/model/prefill_pack.h"
#include "tests/core/recording_sink.h"
#include "tests/core/temp_dir.h"

namespace tandem {
namespace {

// A random float32 checkpoint of `config` in a temporary directory.
class CheckpointDir : public TempDir {
 public:
  explicit CheckpointDir(const Gpt2Config& config) : TempDir("tandem_gpu_") {
    EXPECT_TRUE(WriteRandomGpt2Checkpoint(path(), config, 5, at::kFloat).ok());
  }
};

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

// ATen's greedy log-probabilities of float logits [rows, V]: log_softmax at
// torch.argmax's token (NaN where the row has a NaN or only -inf).
at::Tensor AtenGreedyLogprobs(const at::Tensor& logits) {
  return at::log_softmax(logits, 1).gather(1, logits.argmax(1).unsqueeze(1)).squeeze(1);
}

KvCacheShape Shape(const Gpt2Config& config, int64_t slots) {
  return {config.n_layer, slots, config.n_head, 256, config.head_dim()};
}

// Prefills slots [0, count) of both models' caches with the same random
// prompt each, of length 1 + (step * s + offset) % 254; returns the lengths.
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
// depends on the device's multiprocessors): GPT-2 small's 12 heads at one row
// (the context split over a cluster), at kMaxFusedRows + 1 rows (256 threads,
// no split) and at the smallest batch that takes 128-thread blocks (GPT-2
// small N=64 on an H200), fp32 against the gather + matmul path.
TEST(DecodeKernelTest, AttentionMatchesTheReferenceAtEveryLaunchShape) {
  c10::InferenceMode inference_mode;
  Gpt2Config config = SmallConfig();
  config.n_embd = 768;
  config.n_head = 12;
  config.n_layer = 1;
  int64_t wide = 0;  // the first batch of 128-thread blocks
  for (int64_t b = kMaxFusedRows + 1; b <= 128 && wide == 0; ++b) {
    if (DecodeAttentionShapeFor(static_cast<int>(b), 12).threads == 128) wide = b;
  }
  ASSERT_GT(wide, 0) << "no batch up to 128 takes 128-thread blocks on this device";
  ASSERT_GT(DecodeAttentionShapeFor(1, 12).splits, 1);
  ASSERT_EQ(DecodeAttentionShapeFor(kMaxFusedRows + 1, 12).threads, 256);
  const Gpt2Weights weights = Gpt2Weights::Random(config, 7).To(at::kFloat, at::kCUDA);
  Gpt2FusedDecoder with_kernel(config, weights);
  Gpt2Model reference(config, weights);
  const auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  KvCache cache_a(Shape(config, wide), options);
  KvCache cache_b(Shape(config, wide), options);
  const std::vector<int64_t> lengths =
      PrefillBoth(with_kernel, &cache_a, reference, &cache_b, wide, 53, 5);
  for (int64_t batch : {int64_t{1}, int64_t{kMaxFusedRows + 1}, wide}) {
    std::vector<int64_t> slots, tokens, positions;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t slot = wide - 1 - b;
      slots.push_back(slot);
      tokens.push_back(200 + 3 * b);
      positions.push_back(lengths[slot]);
    }
    // The same token at the same position rewrites the same K/V each time.
    const at::Tensor a = with_kernel.Decode(Ids(slots), Ids(tokens), Ids(positions), 256, &cache_a);
    const at::Tensor b = reference.Decode(Ids(slots), Ids(tokens), Ids(positions), 256, &cache_b);
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
  Gpt2Config config = SmallConfig();
  config.n_embd = 768;
  config.n_head = 12;
  config.n_layer = 2;
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

// Runs `requests` through an engine in `mode` and returns each one's tokens.
// In `waves` of four, 30 ms apart, or all at once.
std::vector<std::vector<int32_t>> RunAll(const std::string& dir, bool pipelined, bool graphs,
                                         int slots, const std::vector<GenerationRequest>& requests,
                                         bool waves = true, int prefill_budget = 0,
                                         DType dtype = DType::kFloat32) {
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

TEST(EngineModesTest, EveryModeGivesTheTokensOfSynchronousEager) {
  CheckpointDir dir(SmallConfig());
  const std::vector<GenerationRequest> requests = MixedRequests();
  const auto reference = RunAll(dir.path(), false, false, 8, requests);
  ASSERT_EQ(reference.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_FALSE(reference[i].empty());
    EXPECT_LE(reference[i].size(), static_cast<size_t>(requests[i].stopping.max_tokens));
  }
  for (auto [pipelined, graphs] : {std::pair{false, true}, std::pair{true, false},
                                   std::pair{true, true}}) {
    const auto tokens = RunAll(dir.path(), pipelined, graphs, 8, requests);
    ASSERT_EQ(tokens.size(), requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      EXPECT_EQ(tokens[i], reference[i]) << "request " << i << " pipelined=" << pipelined
                                         << " graphs=" << graphs;
    }
  }
  // 12 slots, all requests at once: batches above the fused limit take the
  // cuBLAS path (bucket 12).
  const auto wide_reference = RunAll(dir.path(), false, false, 12, requests, /*waves=*/false);
  const auto wide = RunAll(dir.path(), true, true, 12, requests, /*waves=*/false);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_FALSE(wide_reference[i].empty());
    EXPECT_EQ(wide[i], wide_reference[i]) << "request " << i << " with 12 slots";
  }
}

// `slots` requests at once in as many slots: while 32 to 63 decode, GPT-2's
// steps run as two halves on two streams (Gpt2FusedDecoder::UsesHalves),
// captured in the decode graphs and in the double-buffered pipeline; every
// mode gives the tokens of synchronous eager, whose halves run eagerly (the
// same kernels in stream order, so the tokens must be identical). In fp32,
// and in bf16, where halves take the skinny kernel and one chain of 64 rows
// or more the warp-group kernel (Q/K/V at this width) and cuBLAS's nvjet
// GEMMs. nvjet never waits for its predecessor itself, so its graph edges
// must stay full dependencies: made programmatic, they let every bf16
// request's tokens differ here (docs/results/bench/2026-12-02-h200-cublas-edges/).
void ExpectBatchesGiveTheTokensOfSynchronousEager(int slots) {
  CheckpointDir dir(SmallConfig());
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < slots; ++i) {
    GenerationRequest r;
    for (int t = 0; t < 3 + (7 * i) % 40; ++t) {
      r.prompt_token_ids.push_back((89 * i + 11 * t) % 50000);
    }
    r.stopping.max_tokens = 20 + i % 7;
    r.stopping.ignore_eos = true;
    if (i % 3 == 1) {
      r.sampling.temperature = 0.8f;
      r.sampling.top_k = 40;
      r.sampling.seed = 2000 + i;
    }
    requests.push_back(r);
  }
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    const char* name = dtype == DType::kFloat32 ? "fp32" : "bf16";
    const auto reference =
        RunAll(dir.path(), false, false, slots, requests, /*waves=*/false, 0, dtype);
    ASSERT_EQ(reference.size(), requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      EXPECT_EQ(reference[i].size(), static_cast<size_t>(requests[i].stopping.max_tokens));
    }
    for (auto [pipelined, graphs] : {std::pair{false, true}, std::pair{true, true}}) {
      const auto tokens =
          RunAll(dir.path(), pipelined, graphs, slots, requests, /*waves=*/false, 0, dtype);
      ASSERT_EQ(tokens.size(), requests.size());
      for (size_t i = 0; i < requests.size(); ++i) {
        EXPECT_EQ(tokens[i], reference[i]) << name << " request " << i << " of " << slots
                                           << " pipelined=" << pipelined << " graphs=" << graphs;
      }
    }
  }
}

// Halves of up to 20 rows: the skinny kernel's in bf16.
TEST(EngineModesTest, TwoHalvesGiveTheTokensOfSynchronousEager) {
  ExpectBatchesGiveTheTokensOfSynchronousEager(40);
}

// One chain of 80 rows (the warp-group kernel and cuBLAS in bf16), then
// halves as the requests end.
TEST(EngineModesTest, WideBatchesGiveTheTokensOfSynchronousEager) {
  ExpectBatchesGiveTheTokensOfSynchronousEager(80);
}

// Packed and chunked prefill in the engine: all requests at once, prompts
// split into chunks of at most 7 tokens that share steps with decode rows,
// give every request the tokens it gets alone.
TEST(EngineModesTest, ABurstOfChunkedPromptsGivesEachRequestsTokensAlone) {
  CheckpointDir dir(SmallConfig());
  const std::vector<GenerationRequest> requests = MixedRequests();
  const auto burst = RunAll(dir.path(), true, true, 12, requests, /*waves=*/false,
                            /*prefill_budget=*/7);
  ASSERT_EQ(burst.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto alone = RunAll(dir.path(), false, false, 1, {requests[i]});
    ASSERT_EQ(alone.size(), 1u);
    EXPECT_FALSE(alone[0].empty());
    EXPECT_EQ(burst[i], alone[0]) << "request " << i;
  }
}

// max |a - b| / max |b|.
double RelativeError(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max()).item<double>();
}

// The packed-prefill attention kernel (through Gpt2FusedDecoder) against
// the reference forward run one whole prompt at a time: mixed lengths, a
// prompt's later chunk in the same pack, padding rows and segments.
TEST(PrefillKernelTest, PackedPrefillMatchesOneAtATime) {
  c10::InferenceMode inference_mode;
  const Gpt2Config config = SmallConfig();
  for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    const Gpt2Weights weights = Gpt2Weights::Random(config, 21).To(dtype, at::kCUDA);
    Gpt2FusedDecoder fused(config, weights);
    Gpt2Model reference(config, weights);
    const auto options = at::TensorOptions().dtype(dtype).device(at::kCUDA);
    KvCache packed(Shape(config, 4), options), alone(Shape(config, 4), options);
    const std::vector<int64_t> lengths = {37, 130, 1, 200};
    std::vector<std::vector<int32_t>> prompts;
    for (int64_t s = 0; s < 4; ++s) {
      std::vector<int32_t> p;
      for (int64_t t = 0; t < lengths[s]; ++t) p.push_back((131 * s + 17 * t + 3) % 50000);
      prompts.push_back(p);
    }
    // Slot 1's first 50 tokens go in an earlier pack; its other 80 share
    // the pack with the three whole prompts.
    const absl::Span<const int32_t> second(prompts[1]);
    fused.PrefillPacked(MakePrefillPack({{1, 0, second.subspan(0, 50)}}, at::kCUDA), &packed);
    const PrefillPack pack = MakePrefillPack(
        {{0, 0, prompts[0]}, {1, 50, second.subspan(50)}, {2, 0, prompts[2]},
         {3, 0, prompts[3]}},
        at::kCUDA, /*padded_tokens=*/384, /*padded_segments=*/8);
    const at::Tensor logits = fused.PrefillPacked(pack, &packed);
    ASSERT_EQ(logits.size(0), 8);
    const double tolerance = dtype == at::kFloat ? 1e-5 : 3e-2;
    for (int64_t s = 0; s < 4; ++s) {
      std::vector<int64_t> ids(prompts[s].begin(), prompts[s].end());
      const at::Tensor expected = reference.Prefill(s, Ids(ids), &alone);
      EXPECT_LE(RelativeError(logits[s], expected[0]), tolerance)
          << "prompt " << s << " dtype " << c10::toString(dtype);
      if (dtype == at::kFloat) {
        EXPECT_EQ(logits[s].argmax().item<int64_t>(), expected[0].argmax().item<int64_t>());
      }
      for (int64_t layer = 0; layer < config.n_layer; ++layer) {
        EXPECT_LE(RelativeError(packed.keys(layer)[s].narrow(1, 0, lengths[s]),
                                alone.keys(layer)[s].narrow(1, 0, lengths[s])),
                  tolerance);
        EXPECT_LE(RelativeError(packed.values(layer)[s].narrow(1, 0, lengths[s]),
                                alone.values(layer)[s].narrow(1, 0, lengths[s])),
                  tolerance);
      }
    }
    // A pack of at most kMaxFusedRows rows (the LayerNorm kernel's one-block
    // path with the residual add): a 3-token prompt alone, unpadded.
    KvCache small(Shape(config, 4), options), small_alone(Shape(config, 4), options);
    const std::vector<int64_t> few = {11, 4242, 7};
    const at::Tensor got = fused.Prefill(3, Ids(few), &small, /*all_logits=*/true);
    const at::Tensor want = reference.Prefill(3, Ids(few), &small_alone, /*all_logits=*/true);
    ASSERT_EQ(got.size(0), 3);
    EXPECT_LE(RelativeError(got, want), tolerance) << c10::toString(dtype);
    for (int64_t layer = 0; layer < config.n_layer; ++layer) {
      EXPECT_LE(RelativeError(small.values(layer)[3].narrow(1, 0, 3),
                              small_alone.values(layer)[3].narrow(1, 0, 3)),
                tolerance);
    }
  }
}

// Decode rows and a pack in one forward (the runner's mixed steps) against
// the pack's PrefillPacked and the rows' DecodeSlots run one after the
// other: the pack holds a later chunk of a prompt and two whole prompts; the
// decode rows include a padding row on the scratch slot.
TEST(PrefillKernelTest, OneMixedForwardMatchesPrefillThenDecode) {
  c10::InferenceMode inference_mode;
  const Gpt2Config config = SmallConfig();
  const Gpt2Weights weights = Gpt2Weights::Random(config, 23).To(at::kFloat, at::kCUDA);
  Gpt2FusedDecoder fused(config, weights);
  ASSERT_TRUE(fused.FusesMixedSteps());
  const auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  KvCache mixed(Shape(config, 8), options), apart(Shape(config, 8), options);
  // Slots 0-3 hold prompts of 6, 43, 80 and 117 tokens.
  std::vector<int64_t> lengths = PrefillBoth(fused, &mixed, fused, &apart, 4, 37, 5);
  const int64_t scratch = 7;
  const at::Tensor slots = Ids({0, 1, 2, scratch});
  const at::Tensor slot_tokens = Ids({11, 222, 3333, 44, 0, 0, 0, 0});
  const at::Tensor slot_positions = Ids({lengths[0], lengths[1], lengths[2], 0, 0, 0, 0, 0});
  std::vector<std::vector<int32_t>> prompts;
  for (int64_t length : {20, 33, 64}) {
    std::vector<int32_t> p;
    for (int64_t t = 0; t < length; ++t) p.push_back((71 * length + 13 * t) % 50000);
    prompts.push_back(p);
  }
  const PrefillPack pack =
      MakePrefillPack({{3, lengths[3], prompts[0]}, {4, 0, prompts[1]}, {5, 0, prompts[2]}},
                      at::kCUDA, /*padded_tokens=*/128, /*padded_segments=*/8);
  for (bool greedy : {false, true}) {
    const CausalLm::MixedDecode got =
        fused.DecodeSlotsWithPrefill(pack, slots, slot_tokens, slot_positions, greedy, &mixed);
    const at::Tensor prefill_logits = fused.PrefillPacked(pack, &apart);
    const CausalLm::SlotDecode decode =
        fused.DecodeSlots(slots, slot_tokens, slot_positions, greedy, &apart);
    ASSERT_EQ(got.prefill.logits.size(0), 8);
    ASSERT_EQ(got.decode.logits.size(0), 4);
    for (int64_t r = 0; r < 3; ++r) {
      EXPECT_LE(RelativeError(got.prefill.logits[r], prefill_logits[r]), 1e-4) << "segment " << r;
      EXPECT_LE(RelativeError(got.decode.logits[r], decode.logits[r]), 1e-4) << "row " << r;
      EXPECT_EQ(got.decode.logits[r].argmax().item<int64_t>(),
                decode.logits[r].argmax().item<int64_t>());
    }
    if (greedy) {  // the head's greedy kernel chose the pack's tokens too
      ASSERT_TRUE(got.prefill.tokens.defined());
      EXPECT_TRUE(at::equal(got.prefill.tokens.narrow(0, 0, 3),
                            prefill_logits.narrow(0, 0, 3).argmax(-1)));
      EXPECT_TRUE(at::equal(got.decode.tokens.narrow(0, 0, 3), decode.tokens.narrow(0, 0, 3)));
      EXPECT_LE(RelativeError(got.decode.logprobs.narrow(0, 0, 3),
                              decode.logprobs.narrow(0, 0, 3)),
                1e-4);
    }
    // Every slot's K/V up to its new length: the decode rows' appended
    // position, the chunk after slot 3's earlier tokens, the new prompts.
    const std::vector<int64_t> ends = {lengths[0] + 1, lengths[1] + 1, lengths[2] + 1,
                                       lengths[3] + 20, 33, 64};
    for (int64_t layer = 0; layer < config.n_layer; ++layer) {
      for (int64_t s = 0; s < 6; ++s) {
        EXPECT_LE(RelativeError(mixed.keys(layer)[s].narrow(1, 0, ends[s]),
                                apart.keys(layer)[s].narrow(1, 0, ends[s])),
                  1e-5)
            << "slot " << s << " layer " << layer;
        EXPECT_LE(RelativeError(mixed.values(layer)[s].narrow(1, 0, ends[s]),
                                apart.values(layer)[s].narrow(1, 0, ends[s])),
                  1e-5)
            << "slot " << s << " layer " << layer;
      }
    }
  }
}

TEST(EngineModesTest, AReusedSlotNeverSeesTheOldSequence) {
  CheckpointDir dir(SmallConfig());
  std::vector<GenerationRequest> requests = MixedRequests();
  GenerationRequest long_one = requests[11];  // 58-token prompt, 38 tokens
  GenerationRequest short_one = requests[2];  // 13-token prompt
  const auto alone = RunAll(dir.path(), true, true, 1, {short_one});
  const auto after = RunAll(dir.path(), true, true, 1, {long_one, short_one});
  ASSERT_EQ(alone.size(), 1u);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_FALSE(alone[0].empty());
  EXPECT_EQ(after[1], alone[0]);
}

TEST(CudaRunnerTest, SteadyDecodeNeverSynchronizes) {
  CheckpointDir dir(SmallConfig());
  ModelOptions options;
  options.model_dir = dir.path();
  options.device.kind = DeviceSpec::Kind::kCuda;
  options.max_slots = 4;
  absl::StatusOr<LoadedModel> loaded = LoadModel(options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ModelRunner& runner = *loaded->runner;
  ASSERT_TRUE(runner.reads_tokens_on_device());
  const std::vector<int32_t> prompt = {1, 2, 3, 4, 5};
  StepPlan prefill;
  for (int slot = 0; slot < 2; ++slot) {
    PrefillItem item;
    item.slot = slot;
    item.tokens = prompt;
    prefill.prefills.push_back(item);
  }
  absl::StatusOr<StepOutput> first = runner.Step(prefill);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->prefill_tokens.size(), 2u);
  StepPlan decode;
  for (int slot = 0; slot < 2; ++slot) {
    DecodeItem item;
    item.slot = slot;
    decode.decodes.push_back(item);
  }
  // From here on any synchronizing Torch call (.item(), a pageable copy)
  // throws, and Launch reports it.
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  ASSERT_TRUE(runner.Launch(decode).ok());
  ASSERT_TRUE(runner.Launch(decode).ok());  // launched before the first is read
  absl::StatusOr<StepOutput> second = runner.Collect();
  ASSERT_TRUE(runner.Launch(decode).ok());
  absl::StatusOr<StepOutput> third = runner.Collect();
  absl::StatusOr<StepOutput> fourth = runner.Collect();
  // A mixed step: slots 0 and 1 decode while slot 2's prompt is prefilled in
  // two chunks, still without a synchronization.
  StepPlan mixed = decode;
  PrefillItem chunk;
  chunk.slot = 2;
  chunk.tokens = absl::MakeConstSpan(prompt).subspan(0, 3);
  chunk.last_chunk = false;
  mixed.prefills.push_back(chunk);
  ASSERT_TRUE(runner.Launch(mixed).ok());
  chunk.tokens = absl::MakeConstSpan(prompt).subspan(3);
  chunk.start = 3;
  chunk.last_chunk = true;
  mixed.prefills[0] = chunk;
  ASSERT_TRUE(runner.Launch(mixed).ok());
  absl::StatusOr<StepOutput> fifth = runner.Collect();
  absl::StatusOr<StepOutput> sixth = runner.Collect();
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
  ASSERT_TRUE(fifth.ok()) << fifth.status();
  ASSERT_TRUE(sixth.ok()) << sixth.status();
  EXPECT_EQ(sixth->prefill_tokens.size(), 1u);
  EXPECT_EQ(sixth->decode_tokens.size(), 2u);
  // Slot 2's first token is the one slots 0 and 1 got from the same prompt.
  EXPECT_EQ(sixth->prefill_tokens[0].token, first->prefill_tokens[0].token);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(third.ok()) << third.status();
  ASSERT_TRUE(fourth.ok()) << fourth.status();
  for (const auto* step : {&second, &third, &fourth}) {
    EXPECT_EQ((*step)->decode_tokens.size(), 2u);
  }
  EXPECT_GT(third->timings.gpu_busy_seconds, 0);
  EXPECT_GE(third->timings.gpu_idle_seconds, 0);
}

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
// loops over groups loading the next ahead, and at a small size (one block
// per group); K up to 8192 (four or eight vectors per thread).
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
