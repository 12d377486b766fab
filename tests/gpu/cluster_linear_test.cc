// GPU test of the cluster projection kernel (LaunchClusterLinear) against
// the same projection computed by ATen in float64: fp16 and bf16; every
// epilogue, with and without the fused LayerNorm; 1-64 rows (partial mma
// tiles, a row half with no rows); GPT-2 small's, medium's and XL's
// projection shapes (8- and 4-way K splits, 64- and 128-column tiles on a
// 132-multiprocessor GPU), the GPU tests' small model's, a K split 2 ways and
// a K that takes no split (no cluster). Also:
// rows past `rows` are left alone, two runs give the same bits, and the
// shapes the kernel does not take are refused.
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

struct Case {
  LinearEpilogue epilogue;
  bool norm;
  const char* name;
};

TEST(ClusterLinearTest, MatchesFloat64ProjectionsForEveryEpilogueRowCountAndShape) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  c10::InferenceMode inference_mode;
  at::manual_seed(11);
  const at::TensorOptions cuda = at::TensorOptions().device(at::kCUDA);
  const Case cases[] = {{LinearEpilogue::kBias, true, "norm+bias"},
                        {LinearEpilogue::kBiasGelu, true, "norm+bias+gelu"},
                        {LinearEpilogue::kBias, false, "bias"},
                        {LinearEpilogue::kBiasGelu, false, "bias+gelu"},
                        {LinearEpilogue::kBiasResidual, false, "bias+residual"}};
  const Shape shapes[] = {{768, 2304},  {768, 768},   {768, 3072},  {3072, 768},
                          {1024, 4096}, {4096, 1024}, {1600, 4800}, {6400, 1600},
                          {128, 384},   {512, 128},   {96, 128},    {48, 64}};
  int checked = 0;
  for (at::ScalarType dtype : {at::kBFloat16, at::kHalf}) {
    const KernelDType kernel_dtype = KernelDTypeOf(dtype);
    // One rounding of the output (two with the residual add) and of the
    // normalized input, plus fp32 accumulation in another order.
    const double eps = dtype == at::kBFloat16 ? 1.0 / 128 : 1.0 / 1024;
    for (Shape s : shapes) {
      const at::Tensor weight = (at::randn({s.N, s.K}, cuda) / std::sqrt(s.K)).to(dtype);
      const at::Tensor bias = (at::randn({s.N}, cuda) * 0.1).to(dtype);
      const at::Tensor gamma = (1.0 + at::randn({s.K}, cuda) * 0.2).to(dtype);
      const at::Tensor beta = (at::randn({s.K}, cuda) * 0.2).to(dtype);
      for (int rows : {1, 3, 16, 17, 33, 48, 64}) {
        // A shifted, scaled residual stream, as the LayerNorm sees it.
        const at::Tensor x = (at::randn({rows, s.K}, cuda) * 3.0 + 1.5).to(dtype);
        const at::Tensor start = (at::randn({rows + 1, s.N}, cuda) * 4.0).to(dtype);
        for (const Case& c : cases) {
          const std::string what = std::string(c10::toString(dtype)) + " " + c.name + " K " +
                                   std::to_string(s.K) + " N " + std::to_string(s.N) +
                                   " rows " + std::to_string(rows);
          ASSERT_TRUE(ClusterLinearSupports(kernel_dtype, c.epilogue, rows, s.K, s.N)) << what;
          const bool residual = c.epilogue == LinearEpilogue::kBiasResidual;
          // One row more than the kernel is given: it must stay as it was.
          at::Tensor out =
              residual ? start.clone() : at::full({rows + 1, s.N}, 1e4, cuda.dtype(dtype));
          const at::Tensor before = out.clone();
          auto launch = [&](at::Tensor& target) {
            return LaunchClusterLinear(kernel_dtype, c.epilogue, x.data_ptr(),
                                       c.norm ? gamma.data_ptr() : nullptr,
                                       c.norm ? beta.data_ptr() : nullptr, 1e-5f,
                                       weight.data_ptr(), bias.data_ptr(), target.data_ptr(),
                                       rows, s.K, s.N, CurrentStream());
          };
          ASSERT_EQ(launch(out), cudaSuccess) << what;
          at::Tensor input = x.to(at::kDouble);
          if (c.norm) {
            // ATen's layer_norm in float64, rounded to T as the kernel (and
            // ATen's own layer_norm in T) leave it.
            input = at::layer_norm(input, {s.K}, gamma.to(at::kDouble), beta.to(at::kDouble),
                                   1e-5)
                        .to(dtype)
                        .to(at::kDouble);
          }
          const at::Tensor product = at::addmm(bias.to(at::kDouble), input,
                                               weight.to(at::kDouble).t());
          at::Tensor expected = product;
          if (c.epilogue == LinearEpilogue::kBiasGelu) expected = at::gelu(product, "tanh");
          const at::Tensor got = out.narrow(0, 0, rows).to(at::kDouble);
          at::Tensor bound = expected.abs() * eps + 2e-3;
          if (residual) {
            expected = expected + before.narrow(0, 0, rows).to(at::kDouble);
            bound = (expected.abs() + product.abs()) * eps + 2e-3;
          }
          const at::Tensor error = (got - expected).abs();
          EXPECT_TRUE((error <= bound).all().item<bool>())
              << what << ": max error " << error.max().item<double>() << ", worst excess "
              << (error - bound).max().item<double>();
          EXPECT_TRUE(at::equal(out[rows], before[rows])) << what << ": wrote past `rows`";
          at::Tensor again = before.clone();
          ASSERT_EQ(launch(again), cudaSuccess) << what;
          EXPECT_TRUE(at::equal(again, out)) << what << ": not the same bits twice";
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 12 * 7 * 5);
  // Refused: fp32, more rows than a tile, an odd N, a K slice over shared
  // memory's size, SwiGLU, the residual add with a norm, half a norm.
  const float* none = nullptr;
  const at::Tensor norm_weight = at::ones({768}, cuda.dtype(at::kBFloat16));
  EXPECT_FALSE(ClusterLinearSupports(KernelDType::kFloat32, LinearEpilogue::kBias, 8, 768, 768));
  EXPECT_FALSE(ClusterLinearSupports(KernelDType::kBFloat16, LinearEpilogue::kBias,
                                     kMaxClusterLinearRows + 1, 768, 768));
  EXPECT_FALSE(ClusterLinearSupports(KernelDType::kBFloat16, LinearEpilogue::kBias, 8, 768,
                                     50257));
  EXPECT_FALSE(ClusterLinearSupports(KernelDType::kBFloat16, LinearEpilogue::kBias, 8, 16384,
                                     768));
  EXPECT_FALSE(ClusterLinearSupports(KernelDType::kBFloat16, LinearEpilogue::kSwiGlu, 8, 768,
                                     768));
  EXPECT_EQ(LaunchClusterLinear(KernelDType::kBFloat16, LinearEpilogue::kBiasResidual, none,
                                norm_weight.data_ptr(), norm_weight.data_ptr(), 1e-5f, none,
                                none, nullptr, 8, 768, 768, CurrentStream()),
            cudaErrorInvalidValue);
  // A LayerNorm weight without its bias.
  EXPECT_EQ(LaunchClusterLinear(KernelDType::kBFloat16, LinearEpilogue::kBias, none,
                                norm_weight.data_ptr(), nullptr, 1e-5f, none, none, nullptr, 8,
                                768, 768, CurrentStream()),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace tandem
