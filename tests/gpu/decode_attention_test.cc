// GPU test of the decode attention kernel at every launch shape (context
// split over 1, 2 or 4 blocks of 128, 256 or (preloaded) 512 threads, the
// first pass's K/V loaded before the wait or after at every chunk depth; a
// cluster of 8 or 4 using as many of its blocks as the context's length
// asks) against attention computed in float64 by ATen: fp32, fp16 and bf16,
// head sizes 64 and 128, with and without grouped-query heads, contexts from
// the first position to 1,001 (on and around the edges of a block's passes),
// rows read through per-slot positions, the caches past each row's context
// NaN. With rotation (Llama's RoPE and Qwen3's Q/K norms), every shape
// against the unsplit 256-thread one: output and appended key.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "core/model/cuda/cuda_support.h"
#include "core/model/cuda/decode_kernels.h"

namespace tandem {
namespace {

struct Heads {
  int64_t heads, kv_heads, head_dim;
};

std::vector<DecodeAttentionShape> AllShapes() {
  std::vector<DecodeAttentionShape> shapes;
  for (int threads : {256, 128}) {
    for (int splits : {1, 2, 4}) {
      shapes.push_back({splits, threads, /*preload=*/true});
      // Every depth (positions a thread loads together, blocks resident).
      const std::pair<int, int> depths[] = {{4, 4}, {4, 3}, {6, 2}, {3, 4}};
      for (const auto& [ahead, blocks] : depths) {
        shapes.push_back({splits, threads, /*preload=*/false, ahead, blocks});
      }
    }
    // Splits by the context's length: positions 0-63 take one of the
    // cluster's 8 blocks, 64-127 two, ... (and 0-99 one of 4, 100-199 two).
    shapes.push_back({8, threads, /*preload=*/true, 4, 4, /*split_positions=*/64});
    shapes.push_back({4, threads, /*preload=*/false, 4, 3, /*split_positions=*/100});
  }
  // 512-thread blocks (preloaded only): 1, 2 or 4 splits, and 4 by the
  // context's length (positions 0-255 one block, 256-511 two, 512-1,023
  // four: GPT-2 small's one-row shape).
  for (int splits : {1, 2, 4}) shapes.push_back({splits, 512, /*preload=*/true});
  shapes.push_back({4, 512, /*preload=*/true, 4, 4, /*split_positions=*/256});
  return shapes;
}

struct Result {
  at::Tensor out;   // [B, H, D]
  at::Tensor k, v;  // the caches after the append
};

// One launch at `launch` on copies of the caches k0, v0 [slots, G, context, D]
// for qkv [B, H + 2G, D] (rotary null: none).
Result Launch(const DecodeAttentionShape& launch, const at::Tensor& qkv, const at::Tensor& k0,
              const at::Tensor& v0, const at::Tensor& slots, const at::Tensor& positions,
              bool by_slot, int64_t H, int64_t G, const DecodeRotary* rotary) {
  const int64_t B = qkv.size(0), D = qkv.size(2);
  Result r{at::empty({B, H, D}, qkv.options()), k0.clone(), v0.clone()};
  EXPECT_EQ(LaunchDecodeAttentionShaped(
                launch, KernelDTypeOf(qkv.scalar_type()), qkv.data_ptr(), r.k.data_ptr(),
                r.v.data_ptr(), slots.data_ptr<int64_t>(), positions.data_ptr<int64_t>(), by_slot,
                r.out.data_ptr(), B, H, G, D, k0.size(2), 1.0 / std::sqrt(static_cast<double>(D)),
                CurrentStream(), rotary),
            cudaSuccess)
      << DecodeAttentionShapeName(launch);
  return r;
}

// Positions p (the context is p + 1 long): a block's pass covers
// threads / (D / (16 / sizeof(T))) positions (8 to 32), four passes at a time.
const std::vector<int64_t> kPositions = {0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 64, 127, 128,
                                         129, 200, 517, 1000};

TEST(DecodeAttentionTest, EveryShapeMatchesFloat64Attention) {
  c10::InferenceMode inference_mode;
  at::manual_seed(3);
  const int64_t B = static_cast<int64_t>(kPositions.size()), kContext = 1025;
  for (const Heads shape : {Heads{12, 12, 64}, Heads{8, 2, 128}, Heads{32, 8, 64}}) {
    for (at::ScalarType dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
      const auto options = at::TensorOptions().dtype(dtype).device(at::kCUDA);
      const int64_t H = shape.heads, G = shape.kv_heads, D = shape.head_dim;
      const at::Tensor qkv = at::randn({B, H + 2 * G, D}, options);
      const at::Tensor k0 = at::randn({B + 1, G, kContext, D}, options);
      const at::Tensor v0 = at::randn({B + 1, G, kContext, D}, options);
      // Row b in slot B - b (slot 0 unused), its position by slot.
      const at::Tensor slots = at::arange(B, 0, -1, options.dtype(at::kLong));
      at::Tensor by_slot = at::zeros({B + 1}, at::kLong);
      for (int64_t b = 0; b < B; ++b) by_slot[B - b] = kPositions[b];
      by_slot = by_slot.to(at::kCUDA);
      // A row's cache from its position on holds NaN: the kernel must not
      // weigh (0 * NaN) what lies past the context, even in slots it loads
      // before it knows the position.
      for (int64_t b = 0; b < B; ++b) {
        const int64_t p = kPositions[b];
        k0[B - b].narrow(1, p, kContext - p).fill_(NAN);
        v0[B - b].narrow(1, p, kContext - p).fill_(NAN);
      }
      const double scale = 1.0 / std::sqrt(static_cast<double>(D));
      const double tolerance = dtype == at::kFloat ? 1e-5 : dtype == at::kHalf ? 3e-3 : 2e-2;
      for (const DecodeAttentionShape& launch : AllShapes()) {
        const std::string name = DecodeAttentionShapeName(launch);
        const auto [out, k, v] = Launch(launch, qkv, k0, v0, slots, by_slot, true, H, G, nullptr);
        for (int64_t b = 0; b < B; ++b) {
          const int64_t slot = B - b, p = kPositions[b];
          for (int64_t g = 0; g < G; ++g) {
            // The new key and value appended at p, the rest untouched.
            EXPECT_TRUE(at::equal(k[slot][g][p], qkv[b][H + g]));
            EXPECT_TRUE(at::equal(v[slot][g][p], qkv[b][H + G + g]));
          }
          at::Tensor want_k = k0[slot].to(at::kDouble), want_v = v0[slot].to(at::kDouble);
          for (int64_t g = 0; g < G; ++g) {
            want_k[g][p].copy_(qkv[b][H + g]);
            want_v[g][p].copy_(qkv[b][H + G + g]);
          }
          for (int64_t h = 0; h < H; ++h) {
            const int64_t g = h / (H / G);
            const at::Tensor keys = want_k[g].narrow(0, 0, p + 1);
            const at::Tensor scores = at::matmul(keys, qkv[b][h].to(at::kDouble)) * scale;
            const at::Tensor want =
                at::matmul(at::softmax(scores, 0), want_v[g].narrow(0, 0, p + 1));
            const at::Tensor got = out[b][h].to(at::kDouble);
            const double error = ((got - want).norm() / want.norm()).item<double>();
            EXPECT_LE(error, tolerance)
                << name << " " << c10::toString(dtype) << " H " << H << " G " << G
                << " D " << D << " position " << p << " head " << h;
          }
        }
        EXPECT_TRUE(at::equal(k.narrow(0, 0, 1), k0.narrow(0, 0, 1))) << "slot 0 untouched";
        EXPECT_TRUE(at::equal(v.narrow(0, 0, 1), v0.narrow(0, 0, 1))) << "slot 0 untouched";
      }
    }
  }
}

// With rotation every shape gives the first's output (to rounding) and
// appends the same rotated key and value; rows read by row
// (positions_by_slot off).
TEST(DecodeAttentionTest, EveryShapeRotatesAsTheSplitKernel) {
  c10::InferenceMode inference_mode;
  at::manual_seed(4);
  const int64_t B = static_cast<int64_t>(kPositions.size()), kContext = 1025;
  const int64_t H = 32, G = 8, D = 64;
  for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    for (bool norms : {false, true}) {
      const auto options = at::TensorOptions().dtype(dtype).device(at::kCUDA);
      const at::Tensor qkv = at::randn({B, H + 2 * G, D}, options);
      const at::Tensor k0 = at::randn({B, G, kContext, D}, options);
      const at::Tensor v0 = at::randn({B, G, kContext, D}, options);
      const at::Tensor slots = at::arange(B, options.dtype(at::kLong));
      const at::Tensor positions = at::tensor(kPositions, at::kLong).to(at::kCUDA);
      const at::Tensor inv_freq =
          at::pow(500000.0, -at::arange(0, D, 2, at::kDouble) / D).to(at::kFloat).to(at::kCUDA);
      const at::Tensor q_norm = at::rand({D}, options) + 0.5, k_norm = at::rand({D}, options) + 0.5;
      DecodeRotary rotary;
      rotary.inv_freq = inv_freq.data_ptr<float>();
      if (norms) {
        rotary.q_norm = q_norm.data_ptr();
        rotary.k_norm = k_norm.data_ptr();
        rotary.eps = 1e-6f;
      }
      at::Tensor want_out, want_k, want_v;
      for (const DecodeAttentionShape& launch : AllShapes()) {
        const std::string name = DecodeAttentionShapeName(launch);
        const auto [out, k, v] =
            Launch(launch, qkv, k0, v0, slots, positions, false, H, G, &rotary);
        if (want_out.defined()) {
          const double error =
              ((out.to(at::kDouble) - want_out).norm() / want_out.norm()).item<double>();
          EXPECT_LE(error, dtype == at::kFloat ? 1e-6 : 1e-2)
              << name << " " << c10::toString(dtype) << " norms " << norms;
          EXPECT_TRUE(at::equal(k, want_k)) << name << " norms " << norms;
          EXPECT_TRUE(at::equal(v, want_v)) << name << " norms " << norms;
        } else {
          want_out = out.to(at::kDouble);
          want_k = k;
          want_v = v;
          EXPECT_FALSE(at::equal(k, k0)) << "the rotated keys were appended";
        }
      }
    }
  }
}

}  // namespace
}  // namespace tandem
