// GPU test of the fused linear kernel's LayerNorm projections (NormLinear off
// the cluster kernel, LaunchFusedLinear), the one-row step's Q/K/V and fc. One
// row, whose LayerNorm weight and bias a lane holds in registers where K fits
// one chunk (kNormInRegisters), must give the bits of the same row in a two-row
// batch (the general loop: the same statistics and the same order of sums), at
// K of one to four 16-byte vectors a lane (in fp16 / bf16 the kernels with K
// compiled in), K not a multiple of the warp's vectors, and K past one chunk
// (no registers); 13 output columns, so the
// second block has idle warps, and just past 1, 2 and 3 columns a warp per
// block a multiprocessor, so the one-row kernel takes 2, 3 and 4 columns a
// warp with its last warp's columns partly past N. Both within a rounding of
// ATen's layer_norm + addmm (+ GELU). fp32, fp16 and bf16; a shifted, scaled
// row, one whose mean is 30 std (the statistics' sums run around the row's
// first element) and, in fp16 / bf16, one whose first element is an outlier.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "core/model/cuda/decode_ops.h"
#include "tests/gpu/gpu_test_support.h"

namespace tandem {
namespace {

using gpu_test::RelativeError;

TEST(FusedLinearTest, OneRowLayerNormProjectionsGiveTheBitsOfATwoRowBatch) {
  c10::InferenceMode inference_mode;
  at::manual_seed(11);
  const at::TensorOptions cuda = at::TensorOptions().device(at::kCUDA);
  const int multiprocessors = gpu_test::MultiprocessorCount();
  ASSERT_GT(multiprocessors, 0);
  // Columns at one column a warp, 8 warps a block, one block a multiprocessor.
  const int per_column = 8 * multiprocessors;
  constexpr double kEps = 1e-5;
  int checked = 0;
  for (int N : {13, per_column + 5, 2 * per_column + 5, 3 * per_column + 5}) {
    for (at::ScalarType dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
      // One chunk is 512 float32 / 1,024 half elements (kOneChunkK); a lane's
      // vectors are 4 / 8 elements, 32 lanes a warp.
      const std::vector<int> ks = dtype == at::kFloat
                                      ? std::vector<int>{4, 132, 256, 500, 512, 516, 768}
                                      : std::vector<int>{8, 200, 256, 264, 512, 768, 1016,
                                                         1024, 1032};
      const double tolerance = dtype == at::kFloat ? 1e-5 : dtype == at::kHalf ? 1e-2 : 3e-2;
      for (int K : ks) {
        const at::Tensor weight = (at::randn({N, K}, cuda) / std::sqrt(K)).to(dtype);
        const at::Tensor bias = (at::randn({N}, cuda) * 0.1).to(dtype);
        const at::Tensor gamma = (1 + 0.2 * at::randn({K}, cuda)).to(dtype);
        const at::Tensor beta = (0.1 * at::randn({K}, cuda)).to(dtype);
        const FusedNorm norm{gamma, beta, kEps};
        // A shifted, scaled row; a row whose mean is 30 std, which the
        // statistics' one pass needs its shift for (in float32 sums around 0
        // would miss the tolerance: 5e-5 against 5e-7 in a float32 simulation
        // of the kernel's sums, docs/results/bench/2026-12-04-h200-stats-
        // latency/stats_precision_sim.py); and in 16-bit types the shift's
        // worst case, the first element an outlier sqrt(K - 1) std from the
        // mean (float32: 4e-6 there in the simulation, too near its tolerance
        // for a test; 16-bit rows round far coarser).
        const at::Tensor shifted = (at::randn({1, K}, cuda) * 3 + 5).to(dtype);
        const at::Tensor far = (at::randn({1, K}, cuda) + 30).to(dtype);
        at::Tensor outlier = at::randn({1, K}, cuda) * 0.1;
        outlier.narrow(1, 0, 1).fill_(1000);
        std::vector<std::pair<std::string, at::Tensor>> rows = {{"", shifted},
                                                                {" mean 30 std", far}};
        if (dtype != at::kFloat) rows.push_back({" outlier first", outlier.to(dtype)});
        for (const auto& [row_name, x] : rows) {
          const at::Tensor pair = at::cat({x, at::randn({1, K}, cuda).to(dtype)});
          const at::Tensor h = at::layer_norm(x, {K}, gamma, beta, kEps);
          for (bool gelu : {false, true}) {
            const std::string what = std::string(c10::toString(dtype)) + " N " +
                                     std::to_string(N) + " K " + std::to_string(K) +
                                     (gelu ? " GELU" : "") + row_name;
            const at::Tensor one = NormLinear(x, norm, weight, bias, gelu, /*cluster=*/false);
            const at::Tensor two = NormLinear(pair, norm, weight, bias, gelu, /*cluster=*/false);
            ASSERT_EQ(one.sizes(), at::IntArrayRef({1, N})) << what;
            EXPECT_TRUE(at::equal(one[0], two[0]))
                << what << ": one row vs a two-row batch, "
                << (one[0] - two[0]).abs().max().item<double>();
            at::Tensor reference = at::addmm(bias, h, weight.t());
            if (gelu) reference = at::gelu(reference, "tanh");
            EXPECT_LE(RelativeError(one.to(at::kFloat), reference.to(at::kFloat)), tolerance)
                << what;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 4 * (2 * 7 + 3 * 9 + 3 * 9) * 2);
}

}  // namespace
}  // namespace tandem
