// Microbenchmark of the decode step's one-row projections at the
// Llama-3.2-1B shape (bf16): the fused linear kernel (one warp per output
// column, RMSNorm and SwiGLU as kernels of their own) against LaunchGemv (a
// block's threads split K; RMSNorm folded into its input, SwiGLU into
// gate/up's output), with LaunchGemv's grid at its default (auto), one block
// per group of columns, or at most 1, 2, 3 blocks per multiprocessor (blocks
// then loop over groups, loading the next group's weights ahead; since
// 82bac68 a block per group runs the kernel without the loop where the
// looping one would take more than one wave, so those rows measure it, not the
// looping kernel of earlier runs). Each case runs as a
// CUDA graph over 16 layers of distinct weights (1.9 GB, so nothing stays in
// L2), 50 replays; prints a table (µs per launch or per layer, weight bytes
// read per second) and JSON lines, and checks that both paths give the same
// outputs. Also: cuBLAS (cublasGemmEx, bf16, fp32 accumulation: what
// at::matmul runs for one row) on each projection, without the RMSNorm and
// SwiGLU it would need as kernels of their own (o and down add into the
// residual with beta = 1); the down projection at other block shapes; and
// the LM head (128,256 x 2048) through cuBLAS and through LaunchGemv with
// the final RMSNorm folded in.
//
//   tandem-gemv-bench [out.jsonl]    (bash scripts/gpu-session.sh gemvbench)
#include <cuda_bf16.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "core/model/cuda/bench_support.cuh"
#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/gemv_kernel.cu"  // its block shapes, to try others
#include "core/model/cuda/kernel_math.cuh"
#include "core/model/cuda/llama_kernels.h"

namespace {

using tandem::bench::AllocBf16;
using tandem::bench::Check;
using tandem::bench::MaxRelDiff;
using tandem::bench::ToHost;

using tandem::GemvInput;
using tandem::KernelDType;
using tandem::LinearEpilogue;
using bf16 = __nv_bfloat16;

constexpr int kLayers = 16, kHidden = 2048, kInner = 8192, kQkv = 3072, kVocab = 128256,
              kReplays = 50;
constexpr KernelDType kType = KernelDType::kBFloat16;

// Reads n floats4 and writes one sum per block (the copy-free bandwidth ceiling).
__global__ void ReadAll(const uint4* p, size_t n, float* sink) {
  uint32_t acc = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const uint4 v = __ldg(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) sink[0] = 1.0f;
}

// One of LaunchGemv's shapes (256 threads, kCols columns, kUnroll vectors
// per column and thread) at blocks_per_sm (0: one block per group).
template <GemvInput kInput, LinearEpilogue kEpilogue, int kCols, int kUnroll>
void GemvAt(const bf16* in, const bf16* norm, const bf16* w, bf16* out, int K, int N,
            int blocks_per_sm, cudaStream_t s) {
  Check(tandem::LaunchShape<bf16, tandem::GemvShape<256, kCols, kUnroll>, kInput, kEpilogue>(
            in, norm, 1e-5f, w, nullptr, out, K, N, blocks_per_sm, s),
        "gemv shape");
}

struct Layer {
  bf16 *qkv, *o, *gate_up, *down, *norm1, *norm2;
};

// Microseconds per replay of the graph `body` records on `stream`.
double TimeGraph(cudaStream_t stream, const std::function<void()>& body) {
  return tandem::bench::GraphMicroseconds(stream, body, kReplays);
}

}  // namespace

int main(int argc, char** argv) {
  constexpr int rows = 1;
  FILE* json = argc > 1 ? std::fopen(argv[1], "a") : nullptr;
  cudaStream_t s;
  Check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  std::vector<Layer> layers(kLayers);
  uint32_t seed = 1;
  for (Layer& l : layers) {
    l.qkv = AllocBf16(size_t{kQkv} * kHidden, seed++, 0.05f);
    l.o = AllocBf16(size_t{kHidden} * kHidden, seed++, 0.05f);
    l.gate_up = AllocBf16(size_t{2} * kInner * kHidden, seed++, 0.05f);
    l.down = AllocBf16(size_t{kHidden} * kInner, seed++, 0.05f);
    l.norm1 = AllocBf16(kHidden, seed++, 1.0f);
    l.norm2 = AllocBf16(kHidden, seed++, 1.0f);
  }
  bf16* x0 = AllocBf16(size_t{8} * kHidden, 99, 1.0f);  // the residual stream's start
  bf16* x = AllocBf16(size_t{8} * kHidden, 99, 1.0f);
  bf16* h = AllocBf16(size_t{8} * kHidden, 0, 0.0f);
  bf16* qkv = AllocBf16(size_t{8} * kQkv, 0, 0.0f);
  bf16* attn = AllocBf16(size_t{8} * kHidden, 7, 1.0f);
  bf16* gate_up = AllocBf16(size_t{16} * kInner, 0, 0.0f);
  bf16* act = AllocBf16(size_t{8} * kInner, 0, 0.0f);
  bf16* zeros = AllocBf16(size_t{2} * kInner, 0, 0.0f);
  bf16* lm_head = AllocBf16(size_t{kVocab} * kHidden, seed++, 0.05f);
  bf16* norm_f = AllocBf16(kHidden, seed++, 1.0f);
  bf16* logits = AllocBf16(size_t{kVocab}, 0, 0.0f);
  Check(cudaDeviceSynchronize(), "fill");
  cublasHandle_t blas;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) Check(cudaErrorUnknown, "cublasCreate");
  void* workspace;  // set up front: graph capture must not allocate
  constexpr size_t kWorkspace = size_t{32} << 20;
  Check(cudaMalloc(&workspace, kWorkspace), "workspace");
  if (cublasSetStream(blas, s) != CUBLAS_STATUS_SUCCESS ||
      cublasSetWorkspace(blas, workspace, kWorkspace) != CUBLAS_STATUS_SUCCESS) {
    Check(cudaErrorUnknown, "cublas setup");
  }
  // out[N] = W[N, K] x[K] (+ out with beta = 1), as at::matmul's one row.
  auto cublas = [&](const bf16* in, const bf16* w, bf16* out, int K, int N, float beta) {
    const float alpha = 1.0f;
    if (cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, N, 1, K, &alpha, w, CUDA_R_16BF, K, in,
                     CUDA_R_16BF, K, &beta, out, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
      Check(cudaErrorUnknown, "cublasGemmEx");
    }
  };
  const float eps = 1e-5f;

  auto old_linear = [&](LinearEpilogue e, const bf16* in, const bf16* w, bf16* out, int K,
                        int N) {
    Check(tandem::LaunchFusedLinear(kType, e, in, nullptr, nullptr, 0.0f, w, zeros, out, rows,
                                    K, N, s),
          "fused linear");
  };
  auto gemv = [&](GemvInput in_kind, LinearEpilogue e, const bf16* in, const bf16* norm,
                  const bf16* w, bf16* out, int K, int N) {
    Check(tandem::LaunchGemv(kType, in_kind, e, in, norm, eps, w, nullptr, out, K, N, s),
          "gemv");
  };
  // One layer's projections, the old way and the new way.
  auto old_layer = [&](const Layer& l) {
    Check(tandem::LaunchRmsNorm(kType, x, l.norm1, eps, h, rows, kHidden, s), "rmsnorm");
    old_linear(LinearEpilogue::kBias, h, l.qkv, qkv, kHidden, kQkv);
    old_linear(LinearEpilogue::kBiasResidual, attn, l.o, x, kHidden, kHidden);
    Check(tandem::LaunchRmsNorm(kType, x, l.norm2, eps, h, rows, kHidden, s), "rmsnorm");
    old_linear(LinearEpilogue::kBias, h, l.gate_up, gate_up, kHidden, 2 * kInner);
    Check(tandem::LaunchSwiGlu(kType, gate_up, act, rows, kInner, s), "swiglu");
    old_linear(LinearEpilogue::kBiasResidual, act, l.down, x, kInner, kHidden);
  };
  auto new_layer = [&](const Layer& l) {
    gemv(GemvInput::kRmsNorm, LinearEpilogue::kBias, x, l.norm1, l.qkv, qkv, kHidden, kQkv);
    gemv(GemvInput::kPlain, LinearEpilogue::kBiasResidual, attn, nullptr, l.o, x, kHidden,
         kHidden);
    gemv(GemvInput::kRmsNorm, LinearEpilogue::kSwiGlu, x, l.norm2, l.gate_up, act, kHidden,
         2 * kInner);
    gemv(GemvInput::kPlain, LinearEpilogue::kBiasResidual, act, nullptr, l.down, x, kInner,
         kHidden);
  };

  // Exactness: one layer each way from the same residual stream.
  auto reset = [&] {
    Check(cudaMemcpy(x, x0, size_t{8} * kHidden * sizeof(bf16), cudaMemcpyDeviceToDevice), "x");
  };
  reset();
  old_layer(layers[0]);
  Check(cudaStreamSynchronize(s), "old layer");
  const std::vector<float> old_qkv = ToHost(qkv, static_cast<size_t>(rows) * kQkv),
                           old_x = ToHost(x, static_cast<size_t>(rows) * kHidden);
  reset();
  new_layer(layers[0]);
  Check(cudaStreamSynchronize(s), "new layer");
  const double qkv_diff = MaxRelDiff(old_qkv, ToHost(qkv, static_cast<size_t>(rows) * kQkv));
  const double x_diff = MaxRelDiff(old_x, ToHost(x, static_cast<size_t>(rows) * kHidden));
  std::printf("rows %d: max |old - new| / max |old|: qkv %.3g, residual after a layer %.3g\n",
              rows, qkv_diff, x_diff);

  struct Case {
    std::string name;
    double bytes;  // weight bytes per layer
    std::function<void(const Layer&)> run;
  };
  const double b = sizeof(bf16);
  const double qkv_bytes = b * kQkv * kHidden, o_bytes = b * kHidden * kHidden,
               gu_bytes = b * 2 * kInner * kHidden, down_bytes = b * kInner * kHidden,
               layer_bytes = qkv_bytes + o_bytes + gu_bytes + down_bytes;
  using GI = GemvInput;
  using LE = LinearEpilogue;
  // LaunchGemv's layer with its grid at blocks_per_sm.
  auto layer_at = [&](const Layer& l, int bps) {
    GemvAt<GI::kRmsNorm, LE::kBias, 8, 1>(x, l.norm1, l.qkv, qkv, kHidden, kQkv, bps, s);
    GemvAt<GI::kPlain, LE::kBiasResidual, 8, 1>(attn, nullptr, l.o, x, kHidden, kHidden, bps, s);
    GemvAt<GI::kRmsNorm, LE::kSwiGlu, 8, 1>(x, l.norm2, l.gate_up, act, kHidden, 2 * kInner, bps,
                                           s);
    GemvAt<GI::kPlain, LE::kBiasResidual, 2, 4>(act, nullptr, l.down, x, kInner, kHidden, bps, s);
  };
  std::vector<Case> cases = {
      {"qkv fused-linear", qkv_bytes,
       [&](const Layer& l) { old_linear(LE::kBias, h, l.qkv, qkv, kHidden, kQkv); }},
      {"o fused-linear", o_bytes,
       [&](const Layer& l) { old_linear(LE::kBiasResidual, attn, l.o, x, kHidden, kHidden); }},
      {"gate_up fused-linear", gu_bytes,
       [&](const Layer& l) { old_linear(LE::kBias, h, l.gate_up, gate_up, kHidden, 2 * kInner); }},
      {"down fused-linear", down_bytes,
       [&](const Layer& l) { old_linear(LE::kBiasResidual, act, l.down, x, kInner, kHidden); }},
      {"layer old (7 kernels)", layer_bytes, old_layer},
      {"layer LaunchGemv", layer_bytes, new_layer},
  };
  cases.push_back({"qkv cublas", qkv_bytes,
                   [&](const Layer& l) { cublas(h, l.qkv, qkv, kHidden, kQkv, 0.0f); }});
  cases.push_back({"o cublas +residual", o_bytes,
                   [&](const Layer& l) { cublas(attn, l.o, x, kHidden, kHidden, 1.0f); }});
  cases.push_back({"gate_up cublas", gu_bytes, [&](const Layer& l) {
                     cublas(h, l.gate_up, gate_up, kHidden, 2 * kInner, 0.0f);
                   }});
  cases.push_back({"down cublas +residual", down_bytes,
                   [&](const Layer& l) { cublas(act, l.down, x, kInner, kHidden, 1.0f); }});
  // The down projection at other shapes (columns per group x vectors per
  // column and thread) and grids.
  for (int bps : {tandem::kAutoBlocks, 1, 2}) {
    const std::string at = bps == tandem::kAutoBlocks ? " auto" : " " + std::to_string(bps) + "/SM";
    cases.push_back({"down gemv 4x4" + at, down_bytes, [&, bps](const Layer& l) {
                       GemvAt<GI::kPlain, LE::kBiasResidual, 4, 4>(act, nullptr, l.down, x,
                                                                   kInner, kHidden, bps, s);
                     }});
    cases.push_back({"down gemv 1x4" + at, down_bytes, [&, bps](const Layer& l) {
                       GemvAt<GI::kPlain, LE::kBiasResidual, 1, 4>(act, nullptr, l.down, x,
                                                                   kInner, kHidden, bps, s);
                     }});
  }
  // The LM head (one matrix, 525 MB: nothing stays in L2 between replays).
  const double lm_bytes = b * kVocab * kHidden;
  cases.push_back({"lm_head cublas", lm_bytes,
                   [&](const Layer&) { cublas(h, lm_head, logits, kHidden, kVocab, 0.0f); }});
  for (int bps : {tandem::kAutoBlocks, 1, 3}) {
    const std::string at = bps == tandem::kAutoBlocks ? " auto" : " " + std::to_string(bps) + "/SM";
    cases.push_back({"lm_head gemv+norm" + at, lm_bytes, [&, bps](const Layer&) {
                       GemvAt<GI::kRmsNorm, LE::kBias, 8, 1>(x, norm_f, lm_head, logits, kHidden,
                                                             kVocab, bps, s);
                     }});
  }
  for (int bps = -1; bps <= 3; ++bps) {
    const std::string at = bps == tandem::kAutoBlocks ? " auto"
                           : bps == 0                 ? " grid"
                                                      : " " + std::to_string(bps) + "/SM";
    cases.push_back({"qkv gemv" + at, qkv_bytes, [&, bps](const Layer& l) {
                       GemvAt<GI::kRmsNorm, LE::kBias, 8, 1>(x, l.norm1, l.qkv, qkv, kHidden,
                                                             kQkv, bps, s);
                     }});
    cases.push_back({"o gemv" + at, o_bytes, [&, bps](const Layer& l) {
                       GemvAt<GI::kPlain, LE::kBiasResidual, 8, 1>(attn, nullptr, l.o, x, kHidden,
                                                                   kHidden, bps, s);
                     }});
    cases.push_back({"gate_up gemv" + at, gu_bytes, [&, bps](const Layer& l) {
                       GemvAt<GI::kRmsNorm, LE::kSwiGlu, 8, 1>(x, l.norm2, l.gate_up, act,
                                                               kHidden, 2 * kInner, bps, s);
                     }});
    cases.push_back({"down gemv" + at, down_bytes, [&, bps](const Layer& l) {
                       GemvAt<GI::kPlain, LE::kBiasResidual, 2, 4>(act, nullptr, l.down, x,
                                                                   kInner, kHidden, bps, s);
                     }});
    cases.push_back(
        {"layer gemv" + at, layer_bytes, [&, bps](const Layer& l) { layer_at(l, bps); }});
  }
  std::printf("%-24s %5s %10s %10s\n", "case", "rows", "us/layer", "TB/s");
  for (const Case& c : cases) {
    const double us = TimeGraph(s, [&] {
      for (const Layer& l : layers) c.run(l);
    }) / kLayers;
    const double tbs = c.bytes / (us * 1e-6) / 1e12;
    std::printf("%-24s %5d %10.2f %10.2f\n", c.name.c_str(), rows, us, tbs);
    if (json != nullptr) {
      std::fprintf(json,
                   "{\"case\": \"%s\", \"rows\": %d, \"us_per_layer\": %.3f, \"tb_per_s\": %.3f, "
                   "\"qkv_rel_diff\": %.3g, \"x_rel_diff\": %.3g}\n",
                   c.name.c_str(), rows, us, tbs, qkv_diff, x_diff);
    }
  }
  // The ceiling: one kernel streaming 1.9 GB.
  const size_t n = size_t{1} << 30;
  uint4* big;
  float* sink;
  Check(cudaMalloc(&big, n), "big");
  Check(cudaMalloc(&sink, 4), "sink");
  cudaMemset(big, 1, n);
  const double us = TimeGraph(s, [&] { ReadAll<<<132 * 16, 256, 0, s>>>(big, n / 16, sink); });
  std::printf("%-24s %5s %10.2f %10.2f\n", "read 1 GiB", "-", us, n / (us * 1e-6) / 1e12);
  if (json != nullptr) {
    std::fprintf(json, "{\"case\": \"read 1 GiB\", \"us\": %.3f, \"tb_per_s\": %.3f}\n", us,
                 n / (us * 1e-6) / 1e12);
    std::fclose(json);
  }
  return 0;
}
