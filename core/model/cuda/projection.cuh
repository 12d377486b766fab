// The building blocks of the decode step's projections, shared by the fused
// linear kernel and the LM head: a block's LayerNorm statistics of the rows of
// x, one warp's dot products of a weight row with every row of x (or of
// LayerNorm(x)), and (one row) of a few weight rows with LayerNorm(x).
// Included by .cu files only.
//
// Layout: x [rows, K] (rows <= kRows), a weight row w [K] (one output column;
// weights are stored [N, K]). Lane l reads the 16-byte vectors at elements
// l * V, l * V + 32 * V, ... (V = Vec16<T>::kSize), kChunk vectors at a time;
// the caller loads a row's first chunk ahead (LoadFirstChunk), so that its
// latency overlaps other work.
#ifndef TANDEM_CORE_CUDA_PROJECTION_CUH_
#define TANDEM_CORE_CUDA_PROJECTION_CUH_

#include <type_traits>

#include "core/model/cuda/kernel_math.cuh"

namespace tandem {
namespace kernel {

constexpr int kLinearWarps = 8;  // warps per projection block
constexpr int kChunk = 4;        // 16-byte vectors a lane has in flight per weight row

// The first chunk of weight row w_row, or nothing when !active.
template <typename T>
__device__ __forceinline__ void LoadFirstChunk(const T* w_row, bool active, int K,
                                               uint4 (&chunk)[kChunk]) {
  constexpr int kVec = Vec16<T>::kSize;
  const int first = (threadIdx.x % 32) * kVec;
#pragma unroll
  for (int c = 0; c < kChunk; ++c) {
    const int k = first + c * 32 * kVec;
    if (active && k < K) chunk[c] = LoadRaw(w_row + k);
  }
}

// Asks L2 for the `bytes` bytes at p, spread over the warp's lanes (for
// constant data a kernel will read after WaitForPreviousKernel).
__device__ __forceinline__ void WarpPrefetchL2(const void* p, int bytes) {
  for (int offset = (threadIdx.x % 32) * 128; offset < bytes; offset += 32 * 128) {
    PrefetchL2(static_cast<const char*>(p) + offset);
  }
}

// A row's LayerNorm statistics from the warp's sums (every lane's) of
// d = x - shift and d * d over the row's K elements, where shift is the row's
// first element: one pass and one warp reduction of both sums. Around the
// first element rather than 0, the variance E[d^2] - E[d]^2 does not cancel
// when |mean| >> std: no element lies further than std * sqrt(K - 1) from the
// mean (Samuelson's inequality), so E[d^2] is at most K times the variance
// and the subtraction loses at most log2(K) of float's 24 bits (10 at GPT-2's
// K = 768). Against two passes (the mean, then the squares around
// it: two warp reductions one after the other), GPT-2 small bf16 N=1 155.4 ->
// 154.3 us per step (docs/results/bench/2026-12-04-h200-stats-latency/).
__device__ __forceinline__ void StatsFromShiftedSums(float shift, float sum, float squares,
                                                     int K, float eps, float& mean,
                                                     float& rstd) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    squares += __shfl_xor_sync(0xffffffffu, squares, offset);
  }
  const float m = sum / K;  // mean - shift
  mean = shift + m;
  // An explicit fma: left to contraction, `squares / K - m * m` fused
  // differently where K is a compiled-in power of two (the division becomes
  // an exact multiply, and either product may take the fma), so a one-row
  // kernel with K compiled in lost the bits of the runtime-K block path.
  rstd = rsqrtf(fmaxf(fmaf(-m, m, squares / K), 0.0f) + eps);
}

// Adds a vector's d = v - shift and d * d to a lane's sums, each as a tree
// over the vector's elements (pairs, then pairs of pairs), so that a lane's
// dependent adds are a few a vector rather than one an element.
template <int kVec>
__device__ __forceinline__ void AddShiftedVector(const float (&v)[kVec], float shift, float& sum,
                                                 float& squares) {
  float d[kVec], q[kVec];
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    d[i] = v[i] - shift;
    q[i] = d[i] * d[i];
  }
#pragma unroll
  for (int width = kVec / 2; width > 0; width /= 2) {
#pragma unroll
    for (int i = 0; i < width; ++i) {
      d[i] += d[i + width];
      q[i] += q[i + width];
    }
  }
  sum += d[0];
  squares += q[0];
}

// mean[m] and rstd[m] = 1 / sqrt(var + eps) of each row m < rows of x, for
// the whole block (warp m takes row m; StatsFromShiftedSums, each lane's
// sums over its vectors in order, AddShiftedVector). Ends with
// __syncthreads: every thread must call it.
template <typename T>
__device__ void BlockNormStats(const T* x, int rows, int K, float eps, float* mean,
                               float* rstd) {
  constexpr int kVec = Vec16<T>::kSize;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int m = warp; m < rows; m += blockDim.x / 32) {
    const T* row = x + static_cast<size_t>(m) * K;
    const float shift = ToFloat(row[0]);
    float sum = 0.0f, squares = 0.0f;
    for (int k = lane * kVec; k < K; k += 32 * kVec) {
      float v[kVec];
      LoadVecCoherent(row + k, v);
      AddShiftedVector(v, shift, sum, squares);
    }
    float row_mean, row_rstd;
    StatsFromShiftedSums(shift, sum, squares, K, eps, row_mean, row_rstd);
    if (lane == 0) {
      mean[m] = row_mean;
      rstd[m] = row_rstd;
    }
  }
  __syncthreads();
}

// acc[m] = sum_k x'[m, k] * w_row[k] for m < rows, in every lane of the warp,
// where x' = x, or with kNorm T(layer_norm(x) * norm_weight + norm_bias)
// (statistics from BlockNormStats; rounded to T as ATen's layer_norm output
// is). `chunk` holds w_row's first chunk (LoadFirstChunk); the next chunk
// loads while the current one is multiplied.
template <typename T, int kRows, bool kNorm>
__device__ __forceinline__ void WarpDotRows(const T* w_row, uint4 (&chunk)[kChunk],
                                            const T* x, const T* norm_weight,
                                            const T* norm_bias, const float* mean,
                                            const float* rstd, int rows, int K,
                                            float (&acc)[kRows]) {
  constexpr int kVec = Vec16<T>::kSize;
  constexpr int stride = 32 * kVec;  // elements between a lane's vectors
  const int first = (threadIdx.x % 32) * kVec;
#pragma unroll
  for (int m = 0; m < kRows; ++m) acc[m] = 0.0f;
  for (int k0 = first; k0 < K; k0 += kChunk * stride) {
    uint4 next[kChunk];
#pragma unroll
    for (int c = 0; c < kChunk; ++c) {
      const int k = k0 + (kChunk + c) * stride;
      if (k < K) next[c] = LoadRaw(w_row + k);
    }
#pragma unroll
    for (int c = 0; c < kChunk; ++c) {
      const int k = k0 + c * stride;
      if (k >= K) break;
      float w[kVec], gamma[kVec], beta[kVec];
      Unpack<T>(chunk[c], w);
      if constexpr (kNorm) {
        LoadVec(norm_weight + k, gamma);
        LoadVec(norm_bias + k, beta);
      }
#pragma unroll
      for (int m = 0; m < kRows; ++m) {
        if (m < rows) {
          float v[kVec];
          LoadVecCoherent(x + static_cast<size_t>(m) * K + k, v);
#pragma unroll
          for (int i = 0; i < kVec; ++i) {
            float xi = v[i];
            if constexpr (kNorm) xi = Round<T>((xi - mean[m]) * rstd[m] * gamma[i] + beta[i]);
            acc[m] += w[i] * xi;
          }
        }
      }
    }
#pragma unroll
    for (int c = 0; c < kChunk; ++c) chunk[c] = next[c];
  }
#pragma unroll
  for (int m = 0; m < kRows; ++m) acc[m] = WarpSum(acc[m]);
}

// The most elements of K one chunk (every lane's kChunk vectors) covers.
template <typename T>
constexpr int kOneChunkK = kChunk * 32 * Vec16<T>::kSize;

// The one-row kernels (K <= kOneChunkK<T>) take K as a template argument kK:
// launch(std::integral_constant<int, kK>()) with kK = K where K is a whole
// number (1 to kChunk) of vectors a lane, for 16-bit T; else kK = 0, K at run
// time. A kernel with kK > 0 uses kK for K, so its bounds checks, its loops'
// unused vectors and K's arithmetic fold away: GPT-2 small's one-row
// LayerNorm projections (K = 768, 3 of the 4 vectors) N=1 164.1 -> 158.5 us
// per step, its LM head (95 -> 76 registers: 3 blocks a multiprocessor) 164.1
// -> 162.1 (docs/results/bench/2026-12-04-h200-compiled-k/). float32 runs for
// reference, not speed, and keeps K at run time, so the compiled variants are
// built for two element types, not three.
template <typename T, typename Launch>
cudaError_t WithCompiledK(int K, Launch&& launch) {
  if constexpr (sizeof(T) == 2) {
    constexpr int kLaneVector = 32 * Vec16<T>::kSize;  // K of one vector a lane
    static_assert(kChunk == 4, "one case per vector a lane");
    switch (K % kLaneVector == 0 ? K / kLaneVector : 0) {
      case 1: return launch(std::integral_constant<int, 1 * kLaneVector>());
      case 2: return launch(std::integral_constant<int, 2 * kLaneVector>());
      case 3: return launch(std::integral_constant<int, 3 * kLaneVector>());
      case 4: return launch(std::integral_constant<int, 4 * kLaneVector>());
      default: break;
    }
  }
  return launch(std::integral_constant<int, 0>());
}

// A lane's share of one row's LayerNorm weight and bias [K] (K <=
// kOneChunkK<T>: the elements LoadFirstChunk reads), raw, for WarpNormDotRows.
struct NormChunk {
  uint4 gamma[kChunk];
  uint4 beta[kChunk];
};

template <typename T>
__device__ __forceinline__ void LoadNormChunk(const T* norm_weight, const T* norm_bias,
                                              bool active, int K, NormChunk& out) {
  constexpr int kVec = Vec16<T>::kSize;
  const int first = (threadIdx.x % 32) * kVec;
#pragma unroll
  for (int c = 0; c < kChunk; ++c) {
    const int k = first + c * 32 * kVec;
    if (active && k < K) {
      out.gamma[c] = LoadRaw(norm_weight + k);
      out.beta[c] = LoadRaw(norm_bias + k);
    }
  }
}

// The lane's share of row x [K] (the elements LoadFirstChunk reads, K <=
// kOneChunkK<T>), read after the wait: x comes from the previous kernel.
template <typename T>
__device__ __forceinline__ void LoadHeldRow(const T* x, int K, uint4 (&row)[kChunk]) {
  constexpr int kVec = Vec16<T>::kSize;
  const int first = (threadIdx.x % 32) * kVec;
#pragma unroll
  for (int c = 0; c < kChunk; ++c) {
    const int k = first + c * 32 * kVec;
    if (k < K) row[c] = *reinterpret_cast<const uint4*>(x + k);  // coherent: written earlier
  }
}

// A held row's LayerNorm statistics, computed by the warp (every lane gets
// them): BlockNormStats's arithmetic in its order, so the same bits. The
// shift, the row's first element, is lane 0's.
template <typename T>
__device__ __forceinline__ void WarpRowStats(const uint4 (&row)[kChunk], int K, float eps,
                                             float& mean, float& rstd) {
  constexpr int kVec = Vec16<T>::kSize;
  const int first = (threadIdx.x % 32) * kVec;
  float v[kVec];
  Unpack<T>(row[0], v);
  const float shift = __shfl_sync(0xffffffffu, v[0], 0);
  float sum = 0.0f, squares = 0.0f;
#pragma unroll
  for (int c = 0; c < kChunk; ++c) {
    if (first + c * 32 * kVec >= K) break;
    Unpack<T>(row[c], v);
    AddShiftedVector(v, shift, sum, squares);
  }
  StatsFromShiftedSums(shift, sum, squares, K, eps, mean, rstd);
}

// The LayerNorm of chunk c of a held row (LoadHeldRow) before its rounding
// to T: store(i, (x_i - mean) * rstd * weight_i + bias_i) for the lane's kVec
// elements i, in order.
template <typename T, typename Store>
__device__ __forceinline__ void NormalizeHeld(const NormChunk& norm, const uint4 (&row)[kChunk],
                                              int c, float mean, float rstd, Store&& store) {
  constexpr int kVec = Vec16<T>::kSize;
  float gamma[kVec], beta[kVec], v[kVec];
  Unpack<T>(norm.gamma[c], gamma);
  Unpack<T>(norm.beta[c], beta);
  Unpack<T>(row[c], v);
#pragma unroll
  for (int i = 0; i < kVec; ++i) store(i, (v[i] - mean) * rstd * gamma[i] + beta[i]);
}

// WarpDotRows<T, 1, true> for K <= kOneChunkK<T> and kCols weight rows at
// once (chunks[j]: row j's LoadFirstChunk), with the LayerNorm weight and
// bias in registers (`norm`, LoadNormChunk) instead of read from memory, and
// the row's statistics computed by the warp itself from its share of x held
// in registers (BlockNormStats's arithmetic in its order: the same bits), so
// no barrier and one read of x after the wait. Each column's sum runs in
// WarpDotRows's order; returns the lane's column's sum (WarpSumScatter: lane l
// has column WarpScatter<kCols>::ColumnOf(l)). At kCols = 1, 80 registers a
// thread, as with the statistics from BlockNormStats (WarpDotRows with the
// LayerNorm registers added took 104: two blocks a multiprocessor instead of
// three, N=1 226 -> 250 us; docs/results/bench/2026-12-03-h200-n1-chain/).
template <typename T, int kCols>
__device__ __forceinline__ float WarpNormDotRows(const uint4 (&chunks)[kCols][kChunk],
                                                 const NormChunk& norm, const T* x, int K,
                                                 float eps) {
  constexpr int kVec = Vec16<T>::kSize;
  const int first = (threadIdx.x % 32) * kVec;
  uint4 row[kChunk];
  LoadHeldRow(x, K, row);
  float mean, rstd;
  WarpRowStats<T>(row, K, eps, mean, rstd);
  float acc[kCols];
#pragma unroll
  for (int j = 0; j < kCols; ++j) acc[j] = 0.0f;
#pragma unroll
  for (int c = 0; c < kChunk; ++c) {
    if (first + c * 32 * kVec >= K) break;
    float v[kVec];
    NormalizeHeld<T>(norm, row, c, mean, rstd, [&](int i, float y) { v[i] = Round<T>(y); });
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
      float w[kVec];
      Unpack<T>(chunks[j][c], w);
#pragma unroll
      for (int i = 0; i < kVec; ++i) acc[j] += w[i] * v[i];
    }
  }
  return WarpSumScatter(acc);
}

// The lane's share of T(layer_norm(x) * weight + bias) for one row x [K]
// (K <= kOneChunkK<T>; `norm`: LoadNormChunk), packed as T at the elements
// LoadFirstChunk reads: WarpNormDotRows's statistics and rounding, so a dot
// with it in WarpDotRows's order gives WarpNormDotRows's sums. Every lane of
// the warp must call it (the statistics' shuffles).
template <typename T>
__device__ __forceinline__ void WarpNormRow(const NormChunk& norm, const T* x, int K, float eps,
                                            uint4 (&normed)[kChunk]) {
  constexpr int kVec = Vec16<T>::kSize;
  const int first = (threadIdx.x % 32) * kVec;
  LoadHeldRow(x, K, normed);
  float mean, rstd;
  WarpRowStats<T>(normed, K, eps, mean, rstd);
#pragma unroll
  for (int c = 0; c < kChunk; ++c) {
    if (first + c * 32 * kVec >= K) break;
    alignas(16) T packed[kVec];
    NormalizeHeld<T>(norm, normed, c, mean, rstd,
                     [&](int i, float y) { packed[i] = FromFloat<T>(y); });
    normed[c] = *reinterpret_cast<const uint4*>(packed);
  }
}

}  // namespace kernel
}  // namespace tandem

#endif  // TANDEM_CORE_CUDA_PROJECTION_CUH_
