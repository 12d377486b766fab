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
// Resident per multiprocessor: 2, a cap of 64 registers a thread (at 3, a
// cap of 40, the bf16 kernel spilled).
constexpr int kGreedyBlocksPerSm = 2;
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
};

// Calls vector(values, index of values[0]) for the slice's 16-byte vectors
// (values: float[kVec]), each thread's in index order (j = begin + thread,
// stepping by kGreedyThreads, kGreedyAhead of them loaded before any is
// used; plain loads, the logits come from the previous kernel), then
// scalar(value, index) for its scalars.
template <typename T, typename VisitVector, typename VisitScalar>
__device__ __forceinline__ void ForEachLogit(const RowSlice<T>& slice, VisitVector&& vector,
                                             VisitScalar&& scalar) {
  constexpr int kVec = RowSlice<T>::kVec;
  const uint4* body = slice.Body();
  for (int j0 = slice.begin + threadIdx.x; j0 < slice.end; j0 += kGreedyAhead * kGreedyThreads) {
    uint4 raw[kGreedyAhead];
#pragma unroll
    for (int a = 0; a < kGreedyAhead; ++a) {
      const int j = j0 + a * kGreedyThreads;
      if (j < slice.end) raw[a] = body[j];
    }
#pragma unroll
    for (int a = 0; a < kGreedyAhead; ++a) {
      const int j = j0 + a * kGreedyThreads;
      if (j >= slice.end) break;
      float v[kVec];
      kernel::Unpack<T>(raw[a], v);
      vector(v, slice.lead + j * kVec);
    }
  }
  for (int i = threadIdx.x; i < slice.scalars; i += kGreedyThreads) {
    const int index = slice.ScalarIndex(i);
    scalar(kernel::ToFloat(slice.row[index]), index);
  }
}

// What a thread, warp, block or cluster found in its logits: the first index
// of the maximum (kNoIndex when it saw none but -inf), the maximum, and
// sum(exp(x - best)) over its logits (0 when best is -inf; NaN where a logit
// is NaN or +inf). Trivial: it lives in shared memory.
struct GreedyPart {
  float best;
  int index;
  float sum;

  // sum rebased from best to new_best >= best (0 while best is -inf).
  __device__ float SumAt(float new_best) const {
    return best == -INFINITY ? 0.0f : sum * kernel::Exp2((best - new_best) * kernel::kLog2e);
  }
  // Both parts' logits in one (the same index in any order; the sum to
  // rounding).
  __device__ void Merge(const GreedyPart& other) {
    GreedyPart winner = *this;
    if (Beats(other.best, other.index, best, index)) winner = other;
    winner.sum = SumAt(winner.best) + other.SumAt(winner.best);
    *this = winner;
  }
};

// A thread's pass over its logits, in index order (vectors) and then out of
// it (the scalars): an online softmax whose exp-sum is kept against `shift`
// (log2 units), moved up only when the maximum passes it by kSlack, so a
// logit costs a compare and two selects (the first strictly greater one is
// the first maximum), an FMA, an ex2 and an add. A NaN or +inf logit turns
// the sum NaN; Part() then finds the first maximum again by Beats (NaN the
// largest), which the selects cannot.
struct ThreadGreedy {
  static constexpr float kSlack = 8.0f;  // terms below 2^8 (|logits| << 2^24)
  float best = -INFINITY;
  int index = kNoIndex;
  float shift = -FLT_MAX;  // finite: a -inf logit adds exp2(-inf) = 0
  float sum = 0.0f;

  template <int kCount>
  __device__ void Visit(const float (&v)[kCount], int first) {
#pragma unroll
    for (int e = 0; e < kCount; ++e) {
      const bool greater = v[e] > best;
      best = greater ? v[e] : best;
      index = greater ? first + e : index;
    }
    Add(v);
  }
  // A scalar: it may come before the vectors in the row, so ties count. As
  // in Visit, neither NaN (the rescan's) nor -inf (a row of -inf only takes
  // index 0 at the end) is taken.
  __device__ void VisitScalar(float v, int i) {
    if (v == v && v != -INFINITY && Beats(v, i, best, index)) {
      best = v;
      index = i;
    }
    const float one[1] = {v};
    Add(one);
  }
  // Each term is one FMA, v log2 e - shift, rounded once; Part() rounds best
  // log2 e - shift the same way, so the maximum's own term comes back to 1.
  template <int kCount>
  __device__ void Add(const float (&v)[kCount]) {
    const float top = __fmul_rn(best, kernel::kLog2e);
    if (top > shift + kSlack) {
      sum *= kernel::Exp2(shift - top);
      shift = top;
    }
#pragma unroll
    for (int e = 0; e < kCount; ++e) {
      sum += kernel::Exp2(__fmaf_rn(v[e], kernel::kLog2e, -shift));
    }
  }
  // The thread's part; `rescan(visit)` visits its logits again. A NaN sum
  // (a NaN or +inf logit, or a sum that overflowed) takes the first maximum
  // again by Beats; where that is NaN or +inf the sum is NaN, as ATen's
  // log_softmax. A sum out of range at the maximum (where it is at least 1:
  // |best| past ~1e9 or best log2 e past the float range) is taken again as
  // sum(exp(x - best)).
  template <typename Rescan>
  __device__ GreedyPart Part(Rescan&& rescan) const {
    GreedyPart part{best, index, sum};
    if (sum != sum) {
      part = {-INFINITY, kNoIndex, sum};
      rescan([&](float v, int i) {
        if (Beats(v, i, part.best, part.index)) {
          part.best = v;
          part.index = i;
        }
      });
      if (part.best != part.best || part.best == INFINITY) return part;
    } else if (best == -INFINITY) {
      return {best, index, 0.0f};
    } else {
      part.sum = sum * kernel::Exp2(__fmaf_rn(-best, kernel::kLog2e, shift));
    }
    if (!(part.sum >= 0.5f && part.sum <= FLT_MAX)) {
      const float top = part.best;
      part.sum = 0.0f;
      rescan([&](float v, int) { part.sum += __expf(v - top); });
    }
    return part;
  }
};

// A row's logits in gridDim.z slices (up to kGreedyBlocks), one block each,
// the blocks of a row forming a thread-block cluster. One pass: each thread
// keeps a ThreadGreedy of its logits, merged as GreedyParts over the warp
// (shuffles), the block (shared memory) and the cluster (the first block
// reads every block's part through distributed shared memory) into the
// row's token and its log-softmax value x[index] - (max + log(sum(exp(x -
// max)))), x[index] being the maximum itself. Row b starts at b *
// row_stride; with `copy` (not null) the pass also writes the row there as
// float32 [B, V] (a T-typed LM head's logits, converted on the way).
template <typename T>
__global__ void __launch_bounds__(kGreedyThreads, kGreedyBlocksPerSm)
GreedyTokensKernel(const T* __restrict__ logits, int vocab, int64_t row_stride,
                   float* __restrict__ copy, int64_t* __restrict__ tokens,
                   float* __restrict__ logprobs) {
  constexpr int kVec = RowSlice<T>::kVec;
  __shared__ GreedyPart warp_parts[kGreedyThreads / 32];
  __shared__ GreedyPart part;  // read by the cluster's first block
  kernel::AllowNextKernel();
  kernel::WaitForPreviousKernel();
  const int b = blockIdx.y, split = blockIdx.z, tid = threadIdx.x, warp = tid / 32,
            lane = tid % 32;
  const int blocks = gridDim.z;
  const RowSlice<T> slice(logits + b * row_stride, vocab, split, blocks);
  float* copy_row = copy != nullptr ? copy + static_cast<size_t>(b) * vocab : nullptr;
  ThreadGreedy pass;
  ForEachLogit(
      slice,
      [&](const float (&v)[kVec], int first) {
        if (copy_row != nullptr) {
#pragma unroll
          for (int e = 0; e < kVec; ++e) copy_row[first + e] = v[e];
        }
        pass.Visit(v, first);
      },
      [&](float v, int i) {
        if (copy_row != nullptr) copy_row[i] = v;
        pass.VisitScalar(v, i);
      });
  GreedyPart mine = pass.Part([&](auto&& visit) {
    ForEachLogit(
        slice,
        [&](const float (&v)[kVec], int first) {
#pragma unroll
          for (int e = 0; e < kVec; ++e) visit(v[e], first + e);
        },
        visit);
  });
  for (int offset = 16; offset > 0; offset >>= 1) {
    GreedyPart other;
    other.best = __shfl_xor_sync(0xffffffffu, mine.best, offset);
    other.index = __shfl_xor_sync(0xffffffffu, mine.index, offset);
    other.sum = __shfl_xor_sync(0xffffffffu, mine.sum, offset);
    mine.Merge(other);
  }
  if (lane == 0) warp_parts[warp] = mine;
  __syncthreads();
  if (tid == 0) {
    GreedyPart merged = warp_parts[0];
    for (int w = 1; w < kGreedyThreads / 32; ++w) merged.Merge(warp_parts[w]);
    part = merged;
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every block's part is written
  if (split == 0 && tid == 0) {
    GreedyPart parts[kGreedyBlocks];
#pragma unroll
    for (int r = 0; r < kGreedyBlocks; ++r) {
      if (r < blocks) parts[r] = *cluster.map_shared_rank(&part, r);
    }
    GreedyPart row = parts[0];
#pragma unroll
    for (int r = 1; r < kGreedyBlocks; ++r) {
      if (r < blocks) row.Merge(parts[r]);
    }
    // kNoIndex: every logit -inf, the first (0) their maximum.
    tokens[b] = row.index == kNoIndex ? 0 : row.index;
    // x[index] - best - log(sum) with x[index] = best (the same logit): 0,
    // or NaN where best is NaN or +/-inf.
    logprobs[b] = row.best - row.best - logf(row.sum);
  }
  cluster.sync();  // no block exits while the first one reads its shared memory
}

// Blocks per row: kGreedyBlocks, halved while the batch would take more
// blocks than fit at once (kGreedyBlocksPerSm a multiprocessor, 264 on an
// H200), so the kernel runs in one wave: a row's blocks add parallelism only
// where the batch leaves multiprocessors idle.
int GreedyBlocksPerRow(int batch) {
  const int resident = kGreedyBlocksPerSm * kernel::MultiprocessorCount();
  int blocks = kGreedyBlocks;
  while (blocks > 1 && batch * blocks > resident) blocks /= 2;
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
