// The one-row projections of the decode step (see gemv_kernel.h,
// LaunchGemv): a block's threads split K, so a block holds all of a few
// weight rows in registers at once.
//
// Block: Shape::kThreads threads; a group is kCols weight rows (output
// columns). Thread t owns the 16-byte vectors of K at elements (u * kThreads
// + t) * V for u < kUnroll (V = Vec16<T>::kSize; one tile covers K), of every
// row of the group: kUnroll * kCols loads, issued for the block's first group
// before the kernel waits for the previous one (weights are constant), so
// they load while that kernel finishes. The input x' (x, or RMSNorm(x)) of
// the thread's elements stays in registers. With fewer blocks than groups a
// block takes groups blockIdx.x, + gridDim.x, ..., loading the next group's
// weights before it multiplies the current one; with a block per group, the
// kernel may be compiled without that loop's registers (kOneGroup, see
// LaunchShape). The dot products are summed over each warp, then over the
// block's warps in shared memory, thread t < kCols adding column t's; those
// threads apply the epilogue, with the bias read with the weights and the
// residual (kBiasResidual) read as the group's multiply starts.
#include "core/model/cuda/gemv_kernel.h"

#include <cstdint>

#include "core/model/cuda/kernel_math.cuh"

namespace tandem {
namespace {

using kernel::FromFloat;
using kernel::Round;
using kernel::ToFloat;
using kernel::Vec16;

// kOneGroup: the grid has a block per group, so a block loads no next
// group's weights and holds fewer registers (bf16: GPT-2 small's
// attention-out 87 -> 48 a thread, fc2 88 -> 56; Llama-3.2-1B's Q/K/V 86 ->
// 64), so more of its blocks fit a multiprocessor (see LaunchShape).
template <int kThreadsN, int kColsN, int kUnrollN, bool kOneGroupN = false>
struct GemvShape {
  static constexpr int kThreads = kThreadsN, kWarps = kThreadsN / 32, kCols = kColsN,
                       kUnroll = kUnrollN;
  static constexpr bool kOneGroup = kOneGroupN;
};

// Sums v[i] over the block (kWarps warps) for every i < kCount; every thread
// gets the sums. Ends with the block synchronized; `scratch` holds kWarps *
// kCount floats.
template <int kWarps, int kCount>
__device__ __forceinline__ void BlockSums(float (&v)[kCount], float* scratch) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < kCount; ++i) v[i] = kernel::WarpSum(v[i]);
  if (lane == 0) {
#pragma unroll
    for (int i = 0; i < kCount; ++i) scratch[warp * kCount + i] = v[i];
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kCount; ++i) {
    float total = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += scratch[w * kCount + i];
    v[i] = total;
  }
  __syncthreads();
}

// The sum of v[t] over the block (kWarps warps) in thread t < kCount, in
// BlockSums's order; other threads get 0. Only those threads read the
// warps' sums (kWarps each, not kWarps * kCount). With kReused, ends with
// the block synchronized, so that `scratch` (kWarps * kCount floats) may be
// written again. With kScatter each warp's sums are reduce-scattered
// (kernel::WarpSumScatter: WarpSum's bits in fewer shuffles, 9 instead of
// 40 at 8 columns) instead of summed one by one.
template <int kWarps, int kCount, bool kReused, bool kScatter>
__device__ __forceinline__ float BlockColumnSum(float (&v)[kCount], float* scratch) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, t = threadIdx.x;
  if constexpr (kScatter) {
    using Scatter = kernel::WarpScatter<kCount>;
    const float sum = kernel::WarpSumScatter(v);  // one column a lane
    if (Scatter::Writes(lane)) scratch[warp * kCount + Scatter::ColumnOf(lane)] = sum;
  } else {
#pragma unroll
    for (int i = 0; i < kCount; ++i) v[i] = kernel::WarpSum(v[i]);
    if (lane == 0) {
#pragma unroll
      for (int i = 0; i < kCount; ++i) scratch[warp * kCount + i] = v[i];
    }
  }
  __syncthreads();
  float total = 0.0f;
  if (t < kCount) {
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += scratch[w * kCount + t];
  }
  if constexpr (kReused) __syncthreads();
  return total;
}

// Outputs per group: kCols, or kCols / 2 gate/up pairs (kSwiGlu).
template <int kCols, LinearEpilogue kEpilogue>
constexpr int kOutputsPerGroup = kEpilogue == LinearEpilogue::kSwiGlu ? kCols / 2 : kCols;

// The weight row of group g's column c: consecutive rows, or with the
// kSwiGlu epilogue (weight [2I, K]) kCols / 2 gate rows j and their up rows
// I + j. Returns -1 past the end.
template <int kCols, LinearEpilogue kEpilogue>
__device__ __forceinline__ int WeightRow(int g, int c, int N) {
  if constexpr (kEpilogue == LinearEpilogue::kSwiGlu) {
    constexpr int kHalf = kCols / 2;
    const int inner = N / 2, j = g * kHalf + c % kHalf;
    return j < inner ? (c < kHalf ? j : inner + j) : -1;
  } else {
    const int n = g * kCols + c;
    return n < N ? n : -1;
  }
}

template <typename T, typename Shape, GemvInput kInput, LinearEpilogue kEpilogue>
__global__ void __launch_bounds__(Shape::kThreads)
GemvKernel(const T* x, const T* __restrict__ norm_weight, float eps,
           const T* __restrict__ weight, const T* __restrict__ bias, T* out, int K, int N,
           int groups) {
  constexpr int kThreads = Shape::kThreads, kCols = Shape::kCols, kUnroll = Shape::kUnroll,
                kVec = Vec16<T>::kSize;
  kernel::AllowNextKernel();
  __shared__ float scratch[Shape::kWarps * kCols];
  const int t = threadIdx.x;
  auto load_weights = [&](int g, uint4(&w)[kUnroll][kCols]) {
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      const int row = WeightRow<kCols, kEpilogue>(g, c, N);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int k = (u * kThreads + t) * kVec;
        w[u][c] = row >= 0 && k < K ? kernel::LoadRaw(weight + static_cast<size_t>(row) * K + k)
                                    : make_uint4(0, 0, 0, 0);
      }
    }
  };
  // Thread t < kCols's bias of group g (0 without one or past N): constant,
  // so read with the weights, the first group's before the wait.
  auto load_bias = [&](int g) {
    if constexpr (kEpilogue == LinearEpilogue::kSwiGlu) {
      return 0.0f;
    } else {
      const int n = WeightRow<kCols, kEpilogue>(g, t, N);
      return bias != nullptr && t < kCols && n >= 0 ? ToFloat(bias[n]) : 0.0f;
    }
  };
  uint4 w[kUnroll][kCols];
  load_weights(blockIdx.x, w);
  float b = load_bias(blockIdx.x);
  float gamma[kUnroll][kVec];
  if constexpr (kInput == GemvInput::kRmsNorm) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int k = (u * kThreads + t) * kVec;
      if (k < K) kernel::LoadVec(norm_weight + k, gamma[u]);
    }
  }
  kernel::WaitForPreviousKernel();  // x comes from the previous kernel

  float xv[kUnroll][kVec];  // x' at the thread's elements (0 past K)
  float squares[1] = {0.0f};
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int k = (u * kThreads + t) * kVec;
#pragma unroll
    for (int i = 0; i < kVec; ++i) xv[u][i] = 0.0f;
    if (k < K) kernel::LoadVecCoherent(x + k, xv[u]);
    if constexpr (kInput == GemvInput::kRmsNorm) {
#pragma unroll
      for (int i = 0; i < kVec; ++i) squares[0] += xv[u][i] * xv[u][i];
    }
  }
  if constexpr (kInput == GemvInput::kRmsNorm) {  // as LaunchRmsNorm rounds it
    BlockSums<Shape::kWarps>(squares, scratch);
    const float inv = rsqrtf(squares[0] / K + eps);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        xv[u][i] = (u * kThreads + t) * kVec < K ? Round<T>(gamma[u][i] * Round<T>(xv[u][i] * inv))
                                                 : 0.0f;
      }
    }
  }

  for (int g = blockIdx.x; g < groups; g += gridDim.x) {
    // Thread t < kCols's residual (out[n], written by earlier kernels), read
    // now beside x's loads rather than after the sums, where it was an L2
    // round trip at the end of the kernel (GPT-2 small N=1 232.3 -> 226.6 us
    // per step, Llama-3.2-1B 775.9 -> 773.1:
    // docs/results/bench/2026-12-03-h200-bias-layernorm/).
    const int n = WeightRow<kCols, kEpilogue>(g, t, N);  // thread t's output (not kSwiGlu)
    const bool writes = t < kCols && n >= 0;
    float residual = 0.0f;
    if constexpr (kEpilogue == LinearEpilogue::kBiasResidual) {
      if (writes) residual = ToFloat(out[n]);
    }
    uint4 next[kUnroll][kCols];
    float next_b = 0.0f;
    if (!Shape::kOneGroup && g + static_cast<int>(gridDim.x) < groups) {
      load_weights(g + gridDim.x, next);
      next_b = load_bias(g + gridDim.x);
    }
    float acc[kCols] = {};
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        float wf[kVec];
        kernel::Unpack<T>(w[u][c], wf);
#pragma unroll
        for (int i = 0; i < kVec; ++i) acc[c] += wf[i] * xv[u][i];
      }
    }
    // Thread t < kCols: column t's sum.
    static_assert(Shape::kCols <= 32, "columns t < kCols are warp 0's lanes");
    // Reduce-scattered in the plain-input projections of 4 and more columns
    // (GPT-2's attention-out and fc2, Llama's o): GPT-2 small N=1 149.5-149.9
    // -> 148.5-149.1 us a step. In every shape, Llama-3.2-1B's N=1 went
    // 722.6-722.9 -> 747.3-747.4 us (its RMSNorm + SwiGLU kernel 112 -> 126
    // registers); so restricted, 715.4-716.1 -> 714.3-714.6
    // (docs/results/bench/2026-12-04-h200-reduce-scatter/).
    constexpr bool kScatter = kInput == GemvInput::kPlain && kCols >= 4;
    const float column =
        BlockColumnSum<Shape::kWarps, kCols, !Shape::kOneGroup, kScatter>(acc, scratch);
    if constexpr (kEpilogue == LinearEpilogue::kSwiGlu) {
      // Thread t < kCols / 2: gate/up pair t (as LaunchSwiGlu rounds them).
      constexpr int kHalf = kCols / 2;
      const float up_column = __shfl_down_sync(0xffffffffu, column, kHalf);
      const int inner = N / 2, j = g * kHalf + t;
      if (t < kHalf && j < inner) {
        const float gate = Round<T>(column), up = Round<T>(up_column);
        const float act = Round<T>(gate / (1.0f + expf(-gate)));
        out[j] = FromFloat<T>(act * up);
      }
    } else {
      if (writes) {
        const float total = column + b;
        if constexpr (kEpilogue == LinearEpilogue::kBiasResidual) {
          out[n] = FromFloat<T>(residual + Round<T>(total));
        } else {
          out[n] = FromFloat<T>(total);
        }
      }
    }
    if constexpr (Shape::kOneGroup) {
      break;
    } else {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int c = 0; c < kCols; ++c) w[u][c] = next[u][c];
      }
      b = next_b;
    }
  }
}

// Launches at most blocks_per_sm blocks per multiprocessor (0: one block per
// group; kAutoBlocks: one block per group when that is at most three per
// multiprocessor, else two per multiprocessor, which tandem-gemv-bench
// measured fastest at the Llama-3.2-1B shape). Three 256-thread blocks a
// multiprocessor are one wave only for the kOneGroup kernel, which a block
// per group takes where the looping kernel's occupancy would need more than
// one wave. The occupancy is looked up on a shape's first launch (no stream
// work, so also under CUDA graph capture) and kept for the process.
constexpr int kAutoBlocks = -1;

template <typename T, typename Shape, GemvInput kInput, LinearEpilogue kEpilogue>
cudaError_t LaunchShape(const void* x, const void* norm_weight, float eps, const void* weight,
                        const void* bias, void* out, int K, int N, int blocks_per_sm,
                        cudaStream_t stream) {
  constexpr int kPerGroup = kOutputsPerGroup<Shape::kCols, kEpilogue>;
  const int outputs = kEpilogue == LinearEpilogue::kSwiGlu ? N / 2 : N;
  const int groups = (outputs + kPerGroup - 1) / kPerGroup;
  if (blocks_per_sm == kAutoBlocks) {
    blocks_per_sm = groups <= 3 * kernel::MultiprocessorCount() ? 0 : 2;
  }
  int blocks = groups;
  if (blocks_per_sm > 0 && blocks > blocks_per_sm * kernel::MultiprocessorCount()) {
    blocks = blocks_per_sm * kernel::MultiprocessorCount();
  }
  auto launch = [&](auto kernel_function) {
    return kernel::LaunchOverlapped(
        kernel_function, dim3(blocks), dim3(Shape::kThreads), 0, stream,
        static_cast<const T*>(x), static_cast<const T*>(norm_weight), eps,
        static_cast<const T*>(weight), static_cast<const T*>(bias), static_cast<T*>(out), K, N,
        groups);
  };
  // A block per group: the kernel without the next group's registers where
  // the looping kernel's grid would take more than one wave (Llama-3.2-1B's
  // Q/K/V, 384 blocks at two a multiprocessor). Where it fits one wave
  // (GPT-2 small's attention-out and fc2, 96 and 192 blocks) the looping
  // kernel measured faster: N=1 179.4 against 189.5 us per step, while
  // Llama-3.2-1B's N=1 took 724 against 741 with every one-block-per-group
  // projection so (docs/results/bench/2026-12-03-h200-resident-chain/).
  // SwiGLU (gate/up) keeps the looping kernel: no measured shape takes a
  // block per group beyond one wave there, and no test runs it.
  if constexpr (kEpilogue != LinearEpilogue::kSwiGlu) {
    static const int resident =  // the looping kernel's blocks in one wave
        kernel::ResidentBlocksPerMultiprocessor(GemvKernel<T, Shape, kInput, kEpilogue>,
                                                Shape::kThreads) *
        kernel::MultiprocessorCount();
    if (blocks == groups && blocks > resident) {
      using OneGroup = GemvShape<Shape::kThreads, Shape::kCols, Shape::kUnroll, true>;
      return launch(GemvKernel<T, OneGroup, kInput, kEpilogue>);
    }
  }
  return launch(GemvKernel<T, Shape, kInput, kEpilogue>);
}

// The shape for K (in 16-byte vectors): one tile of 256 threads, eight (or
// sixteen, above 1024 vectors) weight loads per thread.
constexpr int kMaxVectors = 2048;

template <typename T, GemvInput kInput, LinearEpilogue kEpilogue>
cudaError_t LaunchForK(const void* x, const void* norm_weight, float eps, const void* weight,
                       const void* bias, void* out, int K, int N, cudaStream_t stream) {
  const int vectors = K / Vec16<T>::kSize;
#define TANDEM_GEMV(COLS, UNROLL)                                                            \
  return LaunchShape<T, GemvShape<256, COLS, UNROLL>, kInput, kEpilogue>(                    \
      x, norm_weight, eps, weight, bias, out, K, N, kAutoBlocks, stream)
  if (vectors <= 256) TANDEM_GEMV(8, 1);
  if (vectors <= 512) TANDEM_GEMV(4, 2);
  if (vectors <= 1024) TANDEM_GEMV(2, 4);
  TANDEM_GEMV(2, 8);
#undef TANDEM_GEMV
}

}  // namespace

bool GemvSupports(KernelDType dtype, int K) {
  const int vec = dtype == KernelDType::kFloat32 ? 4 : 8;
  return K > 0 && K % vec == 0 && K / vec <= kMaxVectors;
}

cudaError_t LaunchGemv(KernelDType dtype, GemvInput input, LinearEpilogue epilogue,
                       const void* x, const void* norm_weight, float eps, const void* weight,
                       const void* bias, void* out, int K, int N, cudaStream_t stream) {
  if (N <= 0 || !GemvSupports(dtype, K) ||
      (input == GemvInput::kRmsNorm) != (norm_weight != nullptr) ||
      (epilogue == LinearEpilogue::kSwiGlu && (N % 2 != 0 || bias != nullptr))) {
    return cudaErrorInvalidValue;
  }
  // The combinations the decode steps use: Llama's Q/K/V (with a bias or
  // none) and gate/up (SwiGLU) take the RMSNorm; Llama's o and down and
  // GPT-2's attention-out and fc2 (with a bias) add into the residual.
  return kernel::WithElementType(dtype, [&](auto type) -> cudaError_t {
    using T = typename decltype(type)::type;
#define TANDEM_GEMV(I, E) \
  return LaunchForK<T, I, E>(x, norm_weight, eps, weight, bias, out, K, N, stream)
    if (input == GemvInput::kRmsNorm && epilogue == LinearEpilogue::kBias) {
      TANDEM_GEMV(GemvInput::kRmsNorm, LinearEpilogue::kBias);
    }
    if (input == GemvInput::kRmsNorm && epilogue == LinearEpilogue::kSwiGlu) {
      TANDEM_GEMV(GemvInput::kRmsNorm, LinearEpilogue::kSwiGlu);
    }
    if (input == GemvInput::kPlain && epilogue == LinearEpilogue::kBiasResidual) {
      TANDEM_GEMV(GemvInput::kPlain, LinearEpilogue::kBiasResidual);
    }
#undef TANDEM_GEMV
    return cudaErrorInvalidValue;
  });
}

}  // namespace tandem
