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
// RowLmHeadKernel's workspace: the ticket (unsigned), then the blocks' parts,
// at most kRowLmHeadBlocksPerSm blocks a multiprocessor (2,048 threads).
constexpr int64_t kRowLmHeadPartsOffset = 16;
constexpr int kRowLmHeadBlocksPerSm = 2048 / (kLinearWarps * 32);

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
  // A row's part: its token (kNoIndex: every logit -inf, the first, 0, their
  // maximum) and the token's log-softmax value x[index] - best - log(sum)
  // with x[index] = best (the same logit): 0, or NaN where best is NaN or
  // +/-inf.
  __device__ int64_t Token() const { return index == kNoIndex ? 0 : index; }
  __device__ float LogProb() const { return best - best - logf(sum); }
};

// parts[0, count) merged in index order (one thread: a block's warps').
__device__ __forceinline__ GreedyPart MergedInOrder(const GreedyPart* parts, int count) {
  GreedyPart merged = parts[0];
  for (int i = 1; i < count; ++i) merged.Merge(parts[i]);
  return merged;
}

// The warp's parts merged into every lane's (shuffles, a fixed pattern).
__device__ __forceinline__ GreedyPart WarpMerged(GreedyPart mine) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    GreedyPart other;
    other.best = __shfl_xor_sync(0xffffffffu, mine.best, offset);
    other.index = __shfl_xor_sync(0xffffffffu, mine.index, offset);
    other.sum = __shfl_xor_sync(0xffffffffu, mine.sum, offset);
    mine.Merge(other);
  }
  return mine;
}

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
  mine = WarpMerged(mine);
  if (lane == 0) warp_parts[warp] = mine;
  __syncthreads();
  if (tid == 0) {
    part = MergedInOrder(warp_parts, kGreedyThreads / 32);
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
    tokens[b] = row.Token();
    logprobs[b] = row.LogProb();
  }
  cluster.sync();  // no block exits while the first one reads its shared memory
}

// One row's LM head (K <= kOneChunkK<T>) in one wave of blocks: warp w of
// block b takes output columns n = b * kLinearWarps + w, n + W, n + 2W, ...
// (W: the grid's warps), loading the next column's weights while it
// multiplies the current one; the first column's weights load before the
// wait, the LayerNorm's after it. Each column's sum runs in WarpDotRows's
// order and is rounded to T as LmHeadKernel's, so the logits are its bits.
//
// With norm.weight (not null) x is the residual stream and each warp
// normalizes it itself (WarpNormRow: the LayerNorm kernel's bits), so the
// final LayerNorm needs no kernel. With greedy.tokens (not null) lane 0
// keeps a ThreadGreedy of its warp's columns; the block's warps merge into
// the block's part; the last block to finish (by the ticket, which atomicInc
// returns to 0 for the next launch) merges every block's part (its threads
// in a fixed order) into tokens[0] and logprobs[0] as GreedyTokensKernel
// defines them, so the
// choice needs no kernel either. greedy.workspace: the ticket, then the
// parts (kRowLmHeadPartsOffset); one launch at a time per workspace. kK > 0:
// K compiled in (kernel::WithCompiledK).
template <typename T, bool kNorm, bool kGreedy, int kK>
__global__ void __launch_bounds__(kLinearWarps * 32)
RowLmHeadKernel(const T* __restrict__ x, RowLmHeadNorm norm, const T* __restrict__ weight,
                float* __restrict__ logits, int K, int N, RowLmHeadGreedy greedy) {
  if constexpr (kK > 0) K = kK;
  constexpr int kVec = kernel::Vec16<T>::kSize;
  __shared__ GreedyPart warp_parts[kLinearWarps];
  __shared__ bool last_block;
  kernel::AllowNextKernel();
  const int warps = gridDim.x * kLinearWarps, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int first = lane * kVec;
  const int start = blockIdx.x * kLinearWarps + warp;
  uint4 chunk[kChunk];
  kernel::LoadFirstChunk(weight + static_cast<size_t>(start < N ? start : 0) * K, start < N, K,
                         chunk);
  kernel::WaitForPreviousKernel();
  // The LayerNorm's weight and bias load after the wait, beside x. Written
  // before it, ptxas moved their loads after it anyway in the kernels with K
  // compiled in (GPT-2 small's: 76 registers, 3 blocks a multiprocessor), and
  // kept them before it in the others (95 registers, 2 blocks). Loading them
  // into registers before the wait gained nothing measurable at GPT-2 small's
  // N=1, and prefetching them into L2 there cost 0.9 us a step
  // (docs/results/bench/2026-12-04-h200-compiled-k/call4-head-norm/).
  uint4 row[kChunk];  // the lane's share of x (normalized with kNorm), as T
  if constexpr (kNorm) {
    kernel::NormChunk norm_chunk;
    kernel::LoadNormChunk(static_cast<const T*>(norm.weight), static_cast<const T*>(norm.bias),
                          true, K, norm_chunk);
    kernel::WarpNormRow(norm_chunk, x, K, norm.eps, row);
  } else {
    kernel::LoadHeldRow(x, K, row);
  }
  ThreadGreedy pass;  // lane 0's, over its warp's columns in index order
  for (int n = start; n < N; n += warps) {
    const int m = n + warps;
    uint4 next[kChunk];
    kernel::LoadFirstChunk(weight + static_cast<size_t>(m < N ? m : 0) * K, m < N, K, next);
    float acc = 0.0f;
#pragma unroll
    for (int c = 0; c < kChunk; ++c) {
      if (first + c * 32 * kVec >= K) break;
      float w[kVec], v[kVec];
      kernel::Unpack<T>(chunk[c], w);
      kernel::Unpack<T>(row[c], v);
#pragma unroll
      for (int i = 0; i < kVec; ++i) acc += w[i] * v[i];
    }
    const float logit = kernel::Round<T>(WarpSum(acc));
    if (lane == 0) {
      logits[n] = logit;
      if constexpr (kGreedy) pass.VisitScalar(logit, n);
    }
#pragma unroll
    for (int c = 0; c < kChunk; ++c) chunk[c] = next[c];
  }
  if constexpr (kGreedy) {
    unsigned* ticket = static_cast<unsigned*>(greedy.workspace);
    GreedyPart* parts = reinterpret_cast<GreedyPart*>(static_cast<char*>(greedy.workspace) +
                                                      kRowLmHeadPartsOffset);
    if (lane == 0) {
      // A NaN or out-of-range sum visits the warp's logits again (its own writes).
      warp_parts[warp] = pass.Part([&](auto&& visit) {
        for (int n = start; n < N; n += warps) visit(logits[n], n);
      });
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      parts[blockIdx.x] = MergedInOrder(warp_parts, kLinearWarps);
      __threadfence();  // the part, visible before the ticket says so
      last_block = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;
      __threadfence();  // every other block's part, as their tickets say
    }
    __syncthreads();  // the block's reads below come after thread 0's fence
    if (!last_block) return;
    // Thread t merges parts t, t + blockDim.x, ... (L2 reads: other blocks
    // wrote them), then the warp's lanes and the block's warps merge in a
    // fixed order (the one-block merge took 65 us where one thread read the
    // 264 parts in turn: docs/results/bench/2026-12-03-h200-tail-fold/).
    GreedyPart mine{-INFINITY, kNoIndex, 0.0f};
    for (int b = threadIdx.x; b < static_cast<int>(gridDim.x); b += blockDim.x) {
      mine.Merge({__ldcg(&parts[b].best), __ldcg(&parts[b].index), __ldcg(&parts[b].sum)});
    }
    mine = WarpMerged(mine);
    if (lane == 0) warp_parts[warp] = mine;  // thread 0 read them before the barrier
    __syncthreads();
    if (threadIdx.x == 0) {
      const GreedyPart row = MergedInOrder(warp_parts, kLinearWarps);
      greedy.tokens[0] = row.Token();
      greedy.logprobs[0] = row.LogProb();
    }
  }
}

// The grid of RowLmHeadKernel<T, kNorm, kGreedy, kK>: one wave (its
// occupancy on every multiprocessor, at most kRowLmHeadBlocksPerSm: the
// workspace's parts), or fewer blocks where N has fewer columns.
template <typename T, bool kNorm, bool kGreedy, int kK>
int RowLmHeadBlocks(int N) {
  static const int resident = [] {
    const int per_sm = kernel::ResidentBlocksPerMultiprocessor(
        RowLmHeadKernel<T, kNorm, kGreedy, kK>, kLinearWarps * 32);
    return (per_sm < kRowLmHeadBlocksPerSm ? per_sm : kRowLmHeadBlocksPerSm) *
           kernel::MultiprocessorCount();
  }();
  const int needed = (N + kLinearWarps - 1) / kLinearWarps;
  return needed < resident ? needed : resident;
}

template <typename T, bool kNorm, bool kGreedy>
cudaError_t LaunchRowLmHeadOf(const void* x, const RowLmHeadNorm& norm, const void* weight,
                              float* logits, int K, int N, const RowLmHeadGreedy& greedy,
                              cudaStream_t stream) {
  return kernel::WithCompiledK<T>(K, [&](auto compiled_k) {
    constexpr int kK = decltype(compiled_k)::value;
    return kernel::LaunchOverlapped(RowLmHeadKernel<T, kNorm, kGreedy, kK>,
                                    dim3(RowLmHeadBlocks<T, kNorm, kGreedy, kK>(N)),
                                    dim3(kLinearWarps * 32), 0, stream, static_cast<const T*>(x),
                                    norm, static_cast<const T*>(weight), logits, K, N, greedy);
  });
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

int64_t RowLmHeadWorkspaceBytes() {
  const int64_t blocks =
      static_cast<int64_t>(kRowLmHeadBlocksPerSm) * kernel::MultiprocessorCount();
  return kRowLmHeadPartsOffset + blocks * static_cast<int64_t>(sizeof(GreedyPart));
}

bool RowLmHeadSupports(KernelDType dtype, int K) {
  const int vec = dtype == KernelDType::kFloat32 ? 4 : 8;  // elements in 16 bytes
  return K > 0 && K % vec == 0 && K <= kernel::kChunk * 32 * vec;
}

cudaError_t LaunchRowLmHead(KernelDType dtype, const void* x, const RowLmHeadNorm& norm,
                            const void* weight, float* logits, int K, int N,
                            const RowLmHeadGreedy& greedy, cudaStream_t stream) {
  if (!RowLmHeadSupports(dtype, K) || N <= 0) return cudaErrorInvalidValue;
  const bool with_norm = norm.weight != nullptr, with_greedy = greedy.tokens != nullptr;
  if ((with_norm && norm.bias == nullptr) ||
      (with_greedy && (greedy.logprobs == nullptr || greedy.workspace == nullptr))) {
    return cudaErrorInvalidValue;
  }
  return kernel::WithElementType(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
#define TANDEM_ROW_LM_HEAD(NORM, GREEDY) \
  return LaunchRowLmHeadOf<T, NORM, GREEDY>(x, norm, weight, logits, K, N, greedy, stream)
    if (with_norm && with_greedy) TANDEM_ROW_LM_HEAD(true, true);
    if (with_norm) TANDEM_ROW_LM_HEAD(true, false);
    if (with_greedy) TANDEM_ROW_LM_HEAD(false, true);
    TANDEM_ROW_LM_HEAD(false, false);
#undef TANDEM_ROW_LM_HEAD
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
