// The LM head (projection to float32 logits) and the greedy choice (see
// decode_kernels.h).
#include <cfloat>
#include <climits>
#include <cstdint>
#include <cmath>

#include <cooperative_groups.h>

#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/kernel_math.cuh"
#include "core/model/cuda/projection.cuh"

namespace tandem {
namespace {

using kernel::kChunk;
using kernel::kLinearWarps;
using kernel::WarpSum;

namespace cg = cooperative_groups;

constexpr int kGreedyThreads = 512;
constexpr int kGreedyBlocks = 8;  // per row at most: a cluster
constexpr int kNoIndex = INT_MAX;  // a thread or warp that saw no logit

// Whether candidate (value, index) beats the current (best, best_index) for
// argmax as torch.argmax defines it: NaN is the maximum, ties go to the first
// index, and an empty candidate never wins.
__device__ __forceinline__ bool Beats(float value, int index, float best, int best_index) {
  if (index == kNoIndex) return false;
  if (best_index == kNoIndex) return true;
  const bool value_nan = value != value, best_nan = best != best;
  if (value_nan != best_nan) return value_nan;
  if (value_nan || value == best) return index < best_index;
  return value > best;
}

// One LM-head output column per warp, kLinearWarps columns per block
// (kernel::WarpDotRows over x, already normalized). The column's weights load
// before waiting for the previous kernel.
template <typename T, int kRows>
__global__ void __launch_bounds__(kLinearWarps * 32)
LmHeadKernel(const T* __restrict__ x, const T* __restrict__ weight, float* __restrict__ logits,
             int rows, int K, int N) {
  kernel::AllowNextKernel();
  const int n = blockIdx.x * kLinearWarps + threadIdx.x / 32;
  const bool active = n < N;
  const T* w_row = weight + static_cast<size_t>(active ? n : 0) * K;
  uint4 chunk[kChunk];
  kernel::LoadFirstChunk(w_row, active, K, chunk);
  kernel::WaitForPreviousKernel();
  if (!active) return;
  float acc[kRows];
  kernel::WarpDotRows<T, kRows, false>(w_row, chunk, x, nullptr, nullptr, nullptr, nullptr, rows,
                                       K, acc);
  if (threadIdx.x % 32 != 0) return;
#pragma unroll
  for (int m = 0; m < kRows; ++m) {
    // Rounded to T where ATen rounds the matmul's output.
    if (m < rows) logits[static_cast<size_t>(m) * N + n] = kernel::Round<T>(acc[m]);
  }
}

template <typename T>
cudaError_t LaunchLmHeadRows(const void* x, const void* weight, float* logits, int rows, int K,
                             int N, cudaStream_t stream) {
  const dim3 grid((N + kLinearWarps - 1) / kLinearWarps);
#define TANDEM_LM_HEAD(R)                                                                     \
  return kernel::LaunchOverlapped(LmHeadKernel<T, R>, grid, dim3(kLinearWarps * 32), 0, stream, \
                                  static_cast<const T*>(x), static_cast<const T*>(weight),      \
                                  logits, rows, K, N)
  if (rows <= 1) TANDEM_LM_HEAD(1);
  if (rows <= 2) TANDEM_LM_HEAD(2);
  if (rows <= 4) TANDEM_LM_HEAD(4);
  TANDEM_LM_HEAD(8);
#undef TANDEM_LM_HEAD
}

// What one block found in its slice of a row: the first index of the
// maximum (kNoIndex when the slice is empty) and sum(exp(x - best)).
struct GreedyPart {
  float best;
  int index;
  float sum;
};

constexpr int kGreedyAhead = 4;  // vectors a thread loads before using any

// The logits of row[0, vocab) that block `split` of `blocks` owns: 16-byte
// vectors [begin, end) of the row from its first 16-byte boundary on, in
// contiguous runs of vectors per block; the first block also takes the
// `scalars` elements before that boundary and after the last whole vector.
template <typename T>
struct RowSlice {
  static constexpr int kVec = kernel::Vec16<T>::kSize;
  const T* row;
  int lead, tail, begin, end, scalars;

  __device__ RowSlice(const T* row_start, int vocab, int split, int blocks) : row(row_start) {
    const int misaligned = static_cast<int>(reinterpret_cast<uintptr_t>(row) % 16 / sizeof(T));
    lead = min(vocab, (kVec - misaligned) % kVec);
    const int vectors = (vocab - lead) / kVec;
    tail = lead + vectors * kVec;
    const int per_block = (vectors + blocks - 1) / blocks;
    begin = min(vectors, split * per_block);
    end = min(vectors, begin + per_block);
    scalars = split == 0 ? lead + (vocab - tail) : 0;
  }
  __device__ const uint4* Body() const { return reinterpret_cast<const uint4*>(row + lead); }
  // The row index of scalar i (i < scalars).
  __device__ int ScalarIndex(int i) const { return i < lead ? i : tail + (i - lead); }
  // Whether each thread's kGreedyAhead vectors and one scalar hold the slice.
  __device__ bool Fits() const {
    return end - begin <= kGreedyAhead * kGreedyThreads && scalars <= kGreedyThreads;
  }
};

// A thread's kGreedyAhead vectors of a slice, j0 + a * kGreedyThreads (a <
// kGreedyAhead, those before the slice's end), loaded before any is used.
// Plain (coherent) loads: the logits come from the previous kernel.
template <typename T>
struct VectorRun {
  uint4 raw[kGreedyAhead];

  __device__ void Load(const RowSlice<T>& slice, int j0) {
    const uint4* body = slice.Body();
#pragma unroll
    for (int a = 0; a < kGreedyAhead; ++a) {
      const int j = j0 + a * kGreedyThreads;
      if (j < slice.end) raw[a] = body[j];
    }
  }
  // visit(value, index) for each loaded logit, in order.
  template <typename Visit>
  __device__ void ForEach(const RowSlice<T>& slice, int j0, Visit&& visit) const {
    constexpr int kVec = RowSlice<T>::kVec;
#pragma unroll
    for (int a = 0; a < kGreedyAhead; ++a) {
      const int j = j0 + a * kGreedyThreads;
      if (j >= slice.end) break;
      const T* v = reinterpret_cast<const T*>(&raw[a]);
#pragma unroll
      for (int e = 0; e < kVec; ++e) visit(kernel::ToFloat(v[e]), slice.lead + j * kVec + e);
    }
  }
};

// Calls visit(value, index) for the slice's logits: each thread's runs of
// vectors from j0 = begin + thread, stepping by kGreedyAhead *
// kGreedyThreads, then its scalars.
template <typename T, typename Visit>
__device__ __forceinline__ void ForEachLogit(const RowSlice<T>& slice, Visit&& visit) {
  for (int j0 = slice.begin + threadIdx.x; j0 < slice.end; j0 += kGreedyAhead * kGreedyThreads) {
    VectorRun<T> run;
    run.Load(slice, j0);
    run.ForEach(slice, j0, visit);
  }
  for (int i = threadIdx.x; i < slice.scalars; i += kGreedyThreads) {
    const int index = slice.ScalarIndex(i);
    visit(kernel::ToFloat(slice.row[index]), index);
  }
}

// A thread's share of a slice that Fits (one run and at most one scalar),
// loaded once into registers and visited as ForEachLogit visits it (same
// logits, same order), so the second pass reads no memory.
template <typename T>
struct HeldLogits {
  VectorRun<T> run;
  float scalar = 0.0f;

  __device__ void Load(const RowSlice<T>& slice) {
    run.Load(slice, slice.begin + threadIdx.x);
    if (threadIdx.x < slice.scalars) {
      scalar = kernel::ToFloat(slice.row[slice.ScalarIndex(threadIdx.x)]);
    }
  }
  template <typename Visit>
  __device__ void ForEach(const RowSlice<T>& slice, Visit&& visit) const {
    run.ForEach(slice, slice.begin + threadIdx.x, visit);
    if (threadIdx.x < slice.scalars) visit(scalar, slice.ScalarIndex(threadIdx.x));
  }
};

// A row's logits in gridDim.z slices (up to kGreedyBlocks), one block each,
// the blocks of a row forming a thread-block cluster: each finds its slice's
// first maximum and exp-sum (two passes; where the slice Fits, the second
// over the registers the first loaded), then the cluster's first block
// merges them (every block's part read at once through distributed shared
// memory) into the row's token and its log-softmax value x[index] - (max +
// log(sum(exp(x - max)))), x[index] being the maximum itself. Row b starts
// at b * row_stride; with `copy` (not null) the first pass also writes the
// row there as float32 [B, V] (a T-typed LM head's logits, converted on the
// way).
template <typename T>
__global__ void __launch_bounds__(kGreedyThreads)
GreedyTokensKernel(const T* __restrict__ logits, int vocab, int64_t row_stride,
                   float* __restrict__ copy, int64_t* __restrict__ tokens,
                   float* __restrict__ logprobs) {
  __shared__ float best_values[kGreedyThreads / 32];
  __shared__ int best_indices[kGreedyThreads / 32];
  __shared__ float sums[kGreedyThreads / 32];
  __shared__ GreedyPart part;  // read by the cluster's first block
  kernel::AllowNextKernel();
  kernel::WaitForPreviousKernel();
  const int b = blockIdx.y, split = blockIdx.z, tid = threadIdx.x, warp = tid / 32,
            lane = tid % 32;
  const int blocks = gridDim.z;
  const RowSlice<T> slice(logits + b * row_stride, vocab, split, blocks);
  const bool held = copy == nullptr && slice.Fits();  // block-uniform
  HeldLogits<T> logits_held;
  if (held) logits_held.Load(slice);
  auto each_logit = [&](auto&& visit) {
    if (held) {
      logits_held.ForEach(slice, visit);
    } else {
      ForEachLogit(slice, visit);
    }
  };
  float* copy_row = copy != nullptr ? copy + static_cast<size_t>(b) * vocab : nullptr;
  float best = -INFINITY;
  int index = kNoIndex;
  each_logit([&](float v, int i) {
    if (copy_row != nullptr) copy_row[i] = v;
    if (Beats(v, i, best, index)) {
      best = v;
      index = i;
    }
  });
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, best, offset);
    const int other_index = __shfl_xor_sync(0xffffffffu, index, offset);
    if (Beats(other, other_index, best, index)) {
      best = other;
      index = other_index;
    }
  }
  if (lane == 0) {
    best_values[warp] = best;
    best_indices[warp] = index;
  }
  __syncthreads();
  best = best_values[0];
  index = best_indices[0];
  for (int w = 1; w < kGreedyThreads / 32; ++w) {
    if (Beats(best_values[w], best_indices[w], best, index)) {
      best = best_values[w];
      index = best_indices[w];
    }
  }
  float sum = 0.0f;
  each_logit([&](float v, int) { sum += __expf(v - best); });
  sum = WarpSum(sum);
  if (lane == 0) sums[warp] = sum;
  __syncthreads();
  if (tid == 0) {
    float total = 0.0f;
    for (int w = 0; w < kGreedyThreads / 32; ++w) total += sums[w];
    part = {best, index, total};
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every block's part is written
  if (split == 0 && tid == 0) {
    GreedyPart parts[kGreedyBlocks];
#pragma unroll
    for (int r = 0; r < kGreedyBlocks; ++r) {
      if (r < blocks) parts[r] = *cluster.map_shared_rank(&part, r);
    }
    best = -INFINITY;
    index = kNoIndex;
#pragma unroll
    for (int r = 0; r < kGreedyBlocks; ++r) {
      if (r < blocks && Beats(parts[r].best, parts[r].index, best, index)) {
        best = parts[r].best;
        index = parts[r].index;
      }
    }
    float total = 0.0f;
#pragma unroll
    for (int r = 0; r < kGreedyBlocks; ++r) {
      if (r < blocks && parts[r].index != kNoIndex) {
        total += parts[r].sum * __expf(parts[r].best - best);
      }
    }
    tokens[b] = index;  // vocab >= 1, so some block saw a logit
    // x[index] - best - log(total) with x[index] = best (the same logit): 0,
    // or NaN where best is NaN.
    logprobs[b] = best - best - logf(total);
  }
  cluster.sync();  // no block exits while the first one reads its shared memory
}

// Blocks per row: kGreedyBlocks, halved while the batch would take more
// than 512 blocks (a wave of 512-thread blocks is 4 per multiprocessor, 528
// on an H200: a mixed step's 65 or 66 rows at 8 blocks each filled it
// exactly and ran 29 us against 19 us for 64 rows).
int GreedyBlocksPerRow(int batch) {
  int blocks = kGreedyBlocks;
  while (blocks > 1 && batch * blocks > 512) blocks /= 2;
  return blocks;
}

}  // namespace

cudaError_t LaunchLmHead(KernelDType dtype, const void* x, const void* weight, float* logits,
                         int rows, int K, int N, cudaStream_t stream) {
  if (rows < 1 || rows > kMaxFusedRows || K <= 0 || N <= 0) return cudaErrorInvalidValue;
  return kernel::WithElementType(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    if (K % kernel::Vec16<T>::kSize != 0) return cudaErrorInvalidValue;
    return LaunchLmHeadRows<T>(x, weight, logits, rows, K, N, stream);
  });
}

cudaError_t LaunchGreedyTokens(const float* logits, int batch, int vocab, int64_t* tokens,
                               float* logprobs, cudaStream_t stream) {
  return LaunchGreedyTokensOf(KernelDType::kFloat32, logits, batch, vocab, vocab, nullptr,
                              tokens, logprobs, stream);
}

cudaError_t LaunchGreedyTokensOf(KernelDType dtype, const void* logits, int batch, int vocab,
                                 int64_t row_stride, float* copy, int64_t* tokens,
                                 float* logprobs, cudaStream_t stream) {
  if (batch <= 0 || vocab <= 0 || row_stride < vocab) return cudaErrorInvalidValue;
  return kernel::WithElementType(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    const int blocks = GreedyBlocksPerRow(batch);
    return kernel::LaunchClustered(/*overlap=*/true, blocks, GreedyTokensKernel<T>,
                                   dim3(1, batch, blocks), dim3(kGreedyThreads), 0,
                                   stream, static_cast<const T*>(logits), vocab, row_stride,
                                   copy, tokens, logprobs);
  });
}

}  // namespace tandem
