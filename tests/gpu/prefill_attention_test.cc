// GPU test of the packed-prefill attention kernels against attention
// computed in float64 by ATen: fp16 and bf16 take the tensor-core kernel,
// fp32 the SIMT one; head sizes 64 and 128, grouped-query heads, partial
// query tiles (and a padded pack) and chunks that start deep into a long
// context.
#include <cmath>
#include <vector>

#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "core/model/cuda/prefill_attention.h"
#include "core/model/prefill_pack.h"

namespace tandem {
namespace {

struct Shape {
  int64_t heads, kv_heads, head_dim;
};

// softmax(q k^T * scale, causal from `start`) v for one segment and head, in
// float64: q [n, D], k and v [start + n, D].
at::Tensor Reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     int64_t start, double scale) {
  const int64_t n = q.size(0), keys = k.size(0);
  at::Tensor scores = at::matmul(q, k.transpose(0, 1)) * scale;
  const at::Tensor query_pos = at::arange(n, q.options().dtype(at::kLong)).unsqueeze(1) + start;
  const at::Tensor key_pos = at::arange(keys, q.options().dtype(at::kLong)).unsqueeze(0);
  scores = scores.masked_fill(key_pos > query_pos, -INFINITY);
  return at::matmul(at::softmax(scores, -1), v);
}

TEST(PrefillAttentionTest, MatchesFloat64AttentionForEveryDTypeAndHeadSize) {
  c10::InferenceMode inference_mode;
  at::manual_seed(7);
  constexpr int64_t kSlots = 4, kContext = 1100;
  // (slot, start, tokens): a short prompt, a chunk 900 positions into its
  // context (many key blocks per warp), one token, a chunk of a partial tile.
  const std::vector<std::vector<int64_t>> chunks = {
      {0, 0, 37}, {1, 900, 150}, {2, 0, 1}, {3, 5, 20}};
  std::vector<std::vector<int32_t>> ids;
  std::vector<PrefillSegment> segments;
  for (const auto& c : chunks) ids.emplace_back(c[2], 1);
  for (size_t i = 0; i < chunks.size(); ++i) {
    segments.push_back({chunks[i][0], chunks[i][1], ids[i]});
  }
  const PrefillPack pack = MakePrefillPack(segments, at::kCUDA, /*padded_tokens=*/224);
  for (const Shape shape : {Shape{12, 12, 64}, Shape{8, 2, 128}}) {
    for (at::ScalarType dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
      const auto options = at::TensorOptions().dtype(dtype).device(at::kCUDA);
      const int64_t H = shape.heads, G = shape.kv_heads, D = shape.head_dim;
      // q is a strided view, as the projection's output is: [T, 3, H, D].
      const at::Tensor qkv = at::randn({pack.padded_tokens, 3, H, D}, options);
      const at::Tensor q = qkv.select(1, 0);
      const at::Tensor k_cache = at::randn({kSlots, G, kContext, D}, options);
      const at::Tensor v_cache = at::randn({kSlots, G, kContext, D}, options);
      const double scale = 1.0 / std::sqrt(static_cast<double>(D));
      const at::Tensor out = PrefillAttention(q, k_cache, v_cache, pack, scale);
      ASSERT_EQ(out.sizes(), at::IntArrayRef({pack.num_tokens, H, D}));
      const double tolerance = dtype == at::kFloat ? 1e-5 : dtype == at::kHalf ? 3e-3 : 2e-2;
      int64_t row = 0;
      for (const auto& c : chunks) {
        const int64_t slot = c[0], start = c[1], n = c[2];
        for (int64_t h = 0; h < H; ++h) {
          const int64_t g = h / (H / G);
          const at::Tensor want = Reference(
              q.narrow(0, row, n).select(1, h).to(at::kDouble),
              k_cache[slot][g].narrow(0, 0, start + n).to(at::kDouble),
              v_cache[slot][g].narrow(0, 0, start + n).to(at::kDouble), start, scale);
          const at::Tensor got = out.narrow(0, row, n).select(1, h).to(at::kDouble);
          const double error = ((got - want).norm() / want.norm()).item<double>();
          EXPECT_LE(error, tolerance) << c10::toString(dtype) << " head_dim " << D << " slot "
                                      << slot << " head " << h;
        }
        row += n;
      }
    }
  }
}

}  // namespace
}  // namespace tandem
