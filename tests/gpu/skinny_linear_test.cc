// GPU test of the skinny tensor-core projection kernel (LaunchSkinnyLinear)
// against the same projection computed in float64 by ATen, for fp16 and
// bf16, every row count tile (1-64 rows, partial tiles), GPT-2 small's four
// projection shapes (which take 1, 2 and 4 K splits on an H200), GPT-2
// medium's MLP projection (8 splits) and a small one, with and without GELU
// (tanh).
#include <cmath>
#include <string>

#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "core/model/cuda/cuda_support.h"
#include "core/model/cuda/decode_kernels.h"

namespace tandem {
namespace {

struct Shape {
  int K, N;
};

TEST(SkinnyLinearTest, MatchesFloat64ProjectionsForEveryRowCountAndShape) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  c10::InferenceMode inference_mode;
  at::manual_seed(7);
  const at::TensorOptions cuda = at::TensorOptions().device(at::kCUDA);
  int checked = 0;
  for (at::ScalarType dtype : {at::kBFloat16, at::kHalf}) {
    // GPT-2 medium's MLP projection (K 4096, N 1024) takes 8 K splits.
    for (Shape s : {Shape{768, 2304}, Shape{768, 768}, Shape{768, 3072}, Shape{3072, 768},
                    Shape{4096, 1024}, Shape{64, 32}}) {
      const at::Tensor weight = (at::randn({s.N, s.K}, cuda) / std::sqrt(s.K)).to(dtype);
      const at::Tensor bias = (at::randn({s.N}, cuda) * 0.1).to(dtype);
      for (int rows : {1, 5, 16, 17, 40, 63, 64}) {
        for (bool gelu : {false, true}) {
          const at::Tensor x = at::randn({rows, s.K}, cuda).to(dtype);
          at::Tensor out = at::full({rows, s.N}, 1e4, cuda.dtype(dtype));
          const std::string what = std::string(c10::toString(dtype)) + " K " +
                                   std::to_string(s.K) + " N " + std::to_string(s.N) +
                                   " rows " + std::to_string(rows) + (gelu ? " gelu" : "");
          ASSERT_TRUE(SkinnyLinearSupports(KernelDTypeOf(dtype), rows, s.K, s.N)) << what;
          ASSERT_EQ(LaunchSkinnyLinear(KernelDTypeOf(dtype), gelu, x.data_ptr(),
                                       weight.data_ptr(), bias.data_ptr(), out.data_ptr(), rows,
                                       s.K, s.N, CurrentStream()),
                    cudaSuccess)
              << what;
          at::Tensor expected = at::addmm(bias.to(at::kDouble), x.to(at::kDouble),
                                          weight.to(at::kDouble).t());
          if (gelu) expected = at::gelu(expected, "tanh");
          // One rounding to the output type, plus fp32 accumulation.
          const double eps = dtype == at::kBFloat16 ? 1.0 / 128 : 1.0 / 1024;
          const at::Tensor error = (out.to(at::kDouble) - expected).abs();
          const at::Tensor bound = expected.abs() * eps + 1e-3;
          EXPECT_TRUE((error <= bound).all().item<bool>())
              << what << ": max error " << error.max().item<double>();
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 6 * 7 * 2);
  // Out of range: more rows than the kernel takes, fp32, N not a multiple of 32.
  EXPECT_FALSE(SkinnyLinearSupports(KernelDType::kBFloat16, kMaxSkinnyRows + 1, 768, 768));
  EXPECT_FALSE(SkinnyLinearSupports(KernelDType::kFloat32, 8, 768, 768));
  EXPECT_FALSE(SkinnyLinearSupports(KernelDType::kBFloat16, 8, 768, 50257));
}

}  // namespace
}  // namespace tandem
