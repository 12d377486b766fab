// GPU test of the warp-group (wgmma) projection kernel (LaunchWgmmaLinear)
// against the same projection computed in float64 by ATen: fp16 and bf16,
// GPT-2 small's four projection shapes and GPT-2 medium's Q/K/V and fc2
// (which no tile fits: every launch must decline), row counts that fill 64-row tiles and leave them partial
// (1-256), every tile shape the kernel has that fits the problem (and the
// one it picks itself), with and without GELU (tanh). Rows past `rows` must
// stay untouched. Needs an sm_90 GPU (H100 / H200): elsewhere the kernel
// declines every problem, which the test checks instead.
#include <cmath>
#include <cstdio>
#include <string>

#include <cuda_runtime.h>

#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "core/model/cuda/cuda_support.h"
#include "core/model/cuda/decode_kernels.h"

namespace tandem {
namespace {

struct Shape {
  int K, N;
};

bool IsHopper() {
  int device = 0, major = 0, minor = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  return major == 9 && minor == 0;
}

TEST(WgmmaLinearTest, MatchesFloat64ProjectionsForEveryTileShapeAndRowCount) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  c10::InferenceMode inference_mode;
  if (!IsHopper()) {
    EXPECT_FALSE(WgmmaLinearSupports(KernelDType::kBFloat16, 256, 768, 2304, 0));
    GTEST_SKIP() << "not an sm_90 GPU: the kernel declines (checked)";
  }
  at::manual_seed(12);
  const at::TensorOptions cuda = at::TensorOptions().device(at::kCUDA);
  constexpr int kGuardRows = 3;  // after `rows`, filled with a sentinel
  constexpr double kSentinel = 1024;  // exact in fp16 and bf16
  int checked = 0, picked = 0;
  for (at::ScalarType dtype : {at::kBFloat16, at::kHalf}) {
    for (Shape s : {Shape{768, 2304}, Shape{768, 768}, Shape{768, 3072}, Shape{3072, 768},
                    Shape{1024, 3072}, Shape{4096, 1024}}) {
      const at::Tensor weight = (at::randn({s.N, s.K}, cuda) / std::sqrt(s.K)).to(dtype);
      const at::Tensor bias = (at::randn({s.N}, cuda) * 0.1).to(dtype);
      for (int rows : {1, 33, 64, 100, 128, 129, 256}) {
        const at::Tensor x = at::randn({rows, s.K}, cuda).to(dtype);
        const at::Tensor product = at::addmm(bias.to(at::kDouble), x.to(at::kDouble),
                                             weight.to(at::kDouble).t());
        const int chosen = WgmmaLinearConfigFor(rows, s.K, s.N, /*max_blocks=*/0);
        if (chosen >= 0) {
          ++picked;
          EXPECT_TRUE(WgmmaLinearSupports(KernelDTypeOf(dtype), rows, s.K, s.N, 0));
        }
        for (int config = -1; config < WgmmaLinearConfigCount(); ++config) {
          for (bool gelu : {false, true}) {
            at::Tensor out = at::full({rows + kGuardRows, s.N}, kSentinel, cuda.dtype(dtype));
            std::string what = std::string(c10::toString(dtype)) + " K " + std::to_string(s.K) +
                               " N " + std::to_string(s.N) + " rows " + std::to_string(rows) +
                               (gelu ? " gelu" : "");
            if (config >= 0) {
              const WgmmaLinearConfig c = WgmmaLinearConfigAt(config);
              what += " tile " + std::to_string(c.columns) + "/" + std::to_string(c.splits);
            } else {
              what += " picked";
            }
            // A forced tile may exceed the GPU's multiprocessors: the grid is
            // then more than one wave, which must still be right.
            const cudaError_t e = LaunchWgmmaLinear(
                KernelDTypeOf(dtype), gelu, x.data_ptr(), weight.data_ptr(), bias.data_ptr(),
                out.data_ptr(), rows, s.K, s.N, /*max_blocks=*/0, CurrentStream(), config);
            if (config < 0 && chosen < 0) {
              EXPECT_EQ(e, cudaErrorInvalidValue) << what;
              continue;
            }
            if (config >= 0 && !WgmmaLinearConfigFits(config, rows, s.K, s.N)) {
              EXPECT_EQ(e, cudaErrorInvalidValue) << what << ": a tile that does not fit ran";
              continue;
            }
            ASSERT_EQ(e, cudaSuccess) << what << ": " << cudaGetErrorString(e);
            const at::Tensor expected = gelu ? at::gelu(product, "tanh") : product;
            // One rounding to the output type, plus fp32 accumulation.
            const double eps = dtype == at::kBFloat16 ? 1.0 / 128 : 1.0 / 1024;
            const at::Tensor got = out.narrow(0, 0, rows).to(at::kDouble);
            const at::Tensor error = (got - expected).abs();
            const at::Tensor bound = expected.abs() * eps + 1e-3;
            EXPECT_TRUE((error <= bound).all().item<bool>())
                << what << ": max error " << error.max().item<double>();
            EXPECT_TRUE(out.narrow(0, rows, kGuardRows)
                            .equal(at::full({kGuardRows, s.N}, kSentinel, cuda.dtype(dtype))))
                << what << ": rows past `rows` written";
            ++checked;
          }
        }
      }
    }
  }
  // The tile the step runs (config -1): one K slice in one wave, or where
  // no one-slice tile fits (K past 1,024), a split in half a wave. So GPT-2
  // small's Q/K/V (24 columns a block up to 64 rows, 72 above) and
  // attention-out (24) projections take it from 1 to 256 rows (32 column
  // tiles a 64-row tile at 256 rows), fc (24 columns: 128 blocks a 64-row
  // tile) up to 64 rows, and fc2 (K = 3072: 8 splits, 64 blocks of 96
  // columns a 64-row tile, 32 of 192) up to 128 rows; cuBLAS runs the rest.
  // These counts need 128 multiprocessors or more (an H100 / H200: 132).
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  if (sms < 128) std::printf("%d multiprocessors: the choice's checks are left out\n", sms);
  for (int rows : {33, 64, 128, 256}) {
    if (sms < 128) break;
    for (Shape s : {Shape{768, 2304}, Shape{768, 768}, Shape{768, 3072}, Shape{3072, 768}}) {
      const int chosen = WgmmaLinearConfigFor(rows, s.K, s.N, 0);
      const bool expected = s.K == 768 ? s.N != 3072 || rows <= 64 : rows <= 128;
      EXPECT_EQ(chosen >= 0, expected) << rows << " rows, " << s.K << " x " << s.N;
      if (chosen < 0) continue;
      const WgmmaLinearConfig c = WgmmaLinearConfigAt(chosen);
      const int blocks = (rows + 63) / 64 * (s.N / c.columns) * c.splits;
      EXPECT_EQ(c.splits, s.K == 768 ? 1 : 8) << rows << " rows, " << s.K << " x " << s.N;
      EXPECT_LE(blocks, s.K == 768 ? sms : sms / 2) << rows << " rows, " << s.K << " x " << s.N;
    }
  }
  EXPECT_GT(picked, 20);
  EXPECT_GT(checked, 800);
  std::printf("checked %d launches (%d picked tiles)\n", checked, picked);
  // Out of range: fp32, N with no tile width, K not a multiple of 64.
  EXPECT_FALSE(WgmmaLinearSupports(KernelDType::kFloat32, 64, 768, 768, 0));
  EXPECT_FALSE(WgmmaLinearSupports(KernelDType::kBFloat16, 64, 768, 50257, 0));
  EXPECT_FALSE(WgmmaLinearSupports(KernelDType::kBFloat16, 64, 100, 768, 0));
  EXPECT_EQ(LaunchWgmmaLinear(KernelDType::kBFloat16, false, nullptr, nullptr, nullptr, nullptr,
                              64, 768, 768, 0, CurrentStream(), WgmmaLinearConfigCount()),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace tandem
