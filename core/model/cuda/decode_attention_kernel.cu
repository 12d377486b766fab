// The decode attention kernel for up to kMaxFusedRows rows (see
// LaunchDecodeAttention in decode_kernels.h), and for larger batches without
// grouped-query attention; larger GQA batches take grouped_attention_kernel.cu's.
// Its building blocks are in decode_attention_parts.cuh; its launch shape is
// chosen in decode_attention_shape.cu.
#include <cfloat>

#include <cooperative_groups.h>

#include "core/model/cuda/decode_attention_parts.cuh"
#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/kernel_math.cuh"

namespace tandem {
namespace {

namespace cg = cooperative_groups;
using attention::Attend;
using attention::ClusterArrive;
using attention::ClusterWait;
using attention::kMaxSplits;
using attention::RotateQueryAndKey;
using attention::Running;
using kernel::FromFloat;
using kernel::ToFloat;
using kernel::Vec16;

// One pass over the context with an online softmax (flash-decoding), the
// context of each (query head, row) split over a cluster of blocks when the
// batch alone would leave multiprocessors idle.
//
// Grid (heads, batch, splits), kThreads threads; a row uses only the first
// of its cluster's splits that split_positions asks for (the rest exit, see
// DecodeAttentionShape). Thread t takes dims
// [j * kVec, (j + 1) * kVec) of the head (j = t % kLanes, kLanes =
// kHeadDim / kVec, the query's in registers) for positions begin + t /
// kLanes, + kPositions, ... of its block's slice, in chunks of kAhead
// positions a thread (kChunk a block) whose keys and values load together
// before any is used. Whole chunks of cached positions run unmasked; the
// slice's last, partial chunk (and the new position) runs masked, a warp
// skipping the slots that lie past the slice for all its lanes. A
// position's score is summed over its kLanes lanes (shuffles); each thread
// keeps a running max, exp-sum and exp-weighted value sum for its positions
// (Running). These merge over the warp (shuffles), the block's warps (shared
// memory), and with splits > 1 the cluster's blocks: each writes its part
// into the first block's shared memory (distributed shared memory), then one
// cluster barrier phase, and the first block merges and writes the output.
//
// kRotate (the Llama / Qwen families' rotary embedding, up to kMaxFusedRows
// rows): the block rotates the query into shared memory and appends the
// rotated key, then a barrier, then the pass. Without it each thread reads its
// dims of the query from qkv itself, and the threads whose pass reaches
// position p append the new key and value from qkv (preloaded kernels read
// them right after the wait, beside the query), so nothing stands between
// the wait and the pass's loads. kThreads 128, 256 or (preloaded only) 512;
// kAhead positions a thread per chunk; kBlocks 256-thread blocks' worth
// resident per multiprocessor (the register cap: at (4, 4) 64 registers a
// thread; (4, 3) 78, (6, 2) 96, (3, 4) 64; preloaded, kBlocks 1: 88-90, one
// block a multiprocessor at 512 threads too; kSpeculate, one block a row: the
// first chunk loaded before the position is known, (6, 2) 116, (4, 3) 80,
// (3, 4) 64, and (4, 4), which no grid takes, spills 44 bytes). See
// DecodeAttentionShapeFor.
template <typename T, int kHeadDim, int kThreads, bool preload, bool kRotate, int kAhead,
          int kBlocks, bool kSpeculate = false>
__global__ void __launch_bounds__(kThreads, (kBlocks * 256 + kThreads - 1) / kThreads)
SplitDecodeAttentionKernel(const T* __restrict__ qkv, T* __restrict__ k_cache,
                           T* __restrict__ v_cache, const int64_t* __restrict__ slots,
                           const int64_t* __restrict__ positions, bool positions_by_slot,
                           T* __restrict__ out, int heads, int kv_heads, int max_context,
                           float scale, int split_positions, DecodeRotary rotary) {
  constexpr int kVec = Vec16<T>::kSize, kLanes = kHeadDim / kVec;
  constexpr int kWarps = kThreads / 32;
  constexpr int kPositions = kThreads / kLanes;  // per block, one a thread
  constexpr int kChunk = kAhead * kPositions;    // positions per block per chunk
  static_assert(kLanes <= 32 && 32 % kLanes == 0, "a position's lanes share a warp");
  __shared__ float query[kHeadDim];
  __shared__ float warp_max[kWarps], warp_sum[kWarps], warp_acc[kWarps][kHeadDim];
  // The cluster's parts, in its first block's shared memory: split r writes row r.
  __shared__ float merge_max[kMaxSplits], merge_sum[kMaxSplits], merge_acc[kMaxSplits][kHeadDim];
  kernel::AllowNextKernel();
  // Clustered launches: the barrier's first phase says every block has
  // started (so its shared memory may be written by the others); each
  // block waits for it only before it writes another's, or before it exits.
  // (kSpeculate kernels are launched without clusters: none of this.)
  const bool clustered = !kSpeculate && gridDim.z > 1;
  if (clustered) ClusterArrive</*kRelease=*/false>();
  const int h = blockIdx.x, b = blockIdx.y, split = blockIdx.z;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int kv_head = heads == kv_heads ? h : h / (heads / kv_heads);
  const int64_t slot = slots[b];
  const size_t head_offset =
      (static_cast<size_t>(slot) * kv_heads + kv_head) * max_context * kHeadDim;
  T* keys = k_cache + head_offset;
  T* values = v_cache + head_offset;
  const int j = tid % kLanes, d0 = j * kVec;
  const int first = tid / kLanes;                // the thread's position within a chunk's slot
  const int warp_first = warp * (32 / kLanes);   // the warp's first
  uint4 key[kAhead], val[kAhead];
  // One block a row (begin 0) without preload: the first chunk's loads go
  // out with the slot alone, beside the position's lookup, instead of after
  // it; the slots past the cached positions are zeroed once it is known (p's
  // key and value come in the masked pass). Like preload, before the wait:
  // earlier steps wrote every cached position.
  static_assert(!(kSpeculate && (preload || kRotate)), "speculation: one block a row, no rotation");
  if constexpr (kSpeculate) {  // launched with splits 1 only
#pragma unroll
    for (int a = 0; a < kAhead; ++a) {
      const int t = first + a * kPositions;
      const bool in = t < max_context;
      key[a] = in ? *reinterpret_cast<const uint4*>(keys + t * kHeadDim + d0) : uint4{};
      val[a] = in ? *reinterpret_cast<const uint4*>(values + t * kHeadDim + d0) : uint4{};
    }
  }
  // p, the new position (its key and value come with qkv).
  const int position = static_cast<int>(
      min(positions[positions_by_slot ? slot : b], static_cast<int64_t>(max_context - 1)));
  const int length = position + 1;
  // The splits this row uses (a power of 2, as gridDim.z): the fewest whose
  // slices hold at most split_positions positions each. The cluster's
  // blocks past them exit now, or, with more than one split in use, take
  // part in its barriers only.
  int splits = gridDim.z;
  while (splits > 1 && (splits >> 1) * split_positions >= length) splits >>= 1;
  if (split >= splits) {
    if constexpr (kSpeculate) {
      if (splits > 1) {  // never (see the end)
        cg::cluster_group cluster = cg::this_cluster();
        cluster.sync();
        cluster.sync();
      }
    } else if (clustered) {
      ClusterWait();
      if (splits > 1) {  // the merge's phase (see below)
        ClusterArrive<true>();
        ClusterWait();
      }
    }
    return;
  }
  const int slice = (length + splits - 1) >> (__ffs(splits) - 1);
  const int begin = min(split * slice, length), end = min(begin + slice, length);
  const bool has_new = position >= begin && position < end;
  // Positions [begin, cached_end) are read from the cache in whole chunks;
  // without rotation p is not in the cache yet.
  const int cached_end = kRotate || !has_new ? end : position;
  // Earlier steps wrote the slice's K/V of every position but p, before this
  // step's first kernel (see WaitForPreviousKernel): the first chunk's
  // positions load into registers and the rest move towards L2 while the
  // previous kernel finishes; position p (the new key and value) and lanes
  // past the slice's end stay zero until the pass.
#pragma unroll
  for (int a = 0; a < kAhead; ++a) {
    const int t = begin + first + a * kPositions;
    if constexpr (kSpeculate) {
      if (t >= cached_end) key[a] = val[a] = uint4{};
    } else {
      const bool early = preload && t < end && t < position;
      key[a] = early ? *reinterpret_cast<const uint4*>(keys + t * kHeadDim + d0) : uint4{};
      val[a] = early ? *reinterpret_cast<const uint4*>(values + t * kHeadDim + d0) : uint4{};
    }
  }
  constexpr int kRowBytes = kHeadDim * static_cast<int>(sizeof(T));
  const int prefetched = preload || kSpeculate ? min(end, begin + kChunk) : begin;
  for (int offset = prefetched * kRowBytes + tid * 128; offset < min(end, length - 1) * kRowBytes;
       offset += kThreads * 128) {
    kernel::PrefetchL2(reinterpret_cast<const char*>(keys) + offset);
    kernel::PrefetchL2(reinterpret_cast<const char*>(values) + offset);
  }
  kernel::WaitForPreviousKernel();  // qkv comes from the previous kernel
  const T* row = qkv + static_cast<size_t>(b) * (heads + 2 * kv_heads) * kHeadDim;
  const T* q = row + static_cast<size_t>(h) * kHeadDim;
  const T* new_key = row + static_cast<size_t>(heads + kv_head) * kHeadDim;
  const T* new_value = row + static_cast<size_t>(heads + kv_heads + kv_head) * kHeadDim;
  // Preloaded without rotation, the new position's key and value load here,
  // beside the query, instead of in the masked pass after the query's use (a
  // second L2 round trip after the wait): GPT-2 small bf16 N=1 156.6 -> 155.4
  // us per step (docs/results/bench/2026-12-04-h200-stats-latency/).
  constexpr bool kEarlyNew = preload && !kRotate;
  uint4 early_key{}, early_value{};
  if constexpr (kEarlyNew) {
    if (has_new) {
      early_key = *reinterpret_cast<const uint4*>(new_key + d0);
      early_value = *reinterpret_cast<const uint4*>(new_value + d0);
    }
  }
  float qv[kVec];
  if constexpr (kRotate) {
    // Every block of the K/V head appends the same key and value (identical
    // bytes); the barrier makes them and the query visible to the block.
    RotateQueryAndKey(q, new_key, rotary, position, kHeadDim, scale, query,
                      keys + position * kHeadDim);
    for (int d = tid; d < kHeadDim; d += kThreads) {
      values[position * kHeadDim + d] = new_value[d];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kVec; ++i) qv[i] = query[d0 + i] * kernel::kLog2e;
  } else {
    kernel::LoadVecCoherent(q + d0, qv);  // qkv: the previous kernel's output
#pragma unroll
    for (int i = 0; i < kVec; ++i) qv[i] *= scale * kernel::kLog2e;
  }
  Running<kVec> run;
  // The chunk at t masked: its keys and values (`loaded`: all but p's already
  // in registers), p's from qkv (appended) or, rotated, from the cache.
  auto attend_masked = [&](int t, bool loaded) {
#pragma unroll
    for (int a = 0; a < kAhead; ++a) {
      const int at = (t + first + a * kPositions) * kHeadDim + d0;
      if (has_new && t + first + a * kPositions == position) {
        if constexpr (kRotate) {
          key[a] = *reinterpret_cast<const uint4*>(keys + at);
          val[a] = *reinterpret_cast<const uint4*>(values + at);
        } else {
          if constexpr (kEarlyNew) {
            key[a] = early_key;
            val[a] = early_value;
          } else {
            key[a] = *reinterpret_cast<const uint4*>(new_key + d0);
            val[a] = *reinterpret_cast<const uint4*>(new_value + d0);
          }
          *reinterpret_cast<uint4*>(keys + at) = key[a];
          *reinterpret_cast<uint4*>(values + at) = val[a];
        }
      } else if (!loaded) {
        const bool in = t + first + a * kPositions < end;
        key[a] = in ? *reinterpret_cast<const uint4*>(keys + at) : uint4{};
        val[a] = in ? *reinterpret_cast<const uint4*>(values + at) : uint4{};
      }
    }
    Attend<T, kLanes, kAhead>(
        qv, key, val, [&](int a) { return t + warp_first + a * kPositions < end; },
        [&](int a) { return t + first + a * kPositions < end; }, run);
  };
  auto always = [](int) { return true; };
  int t = begin;  // block-uniform: the next chunk's first position
  if (preload || kSpeculate) {
    attend_masked(t, /*loaded=*/true);
    t += kChunk;
  }
  for (; t + kChunk <= cached_end; t += kChunk) {
    const T* k = keys + (t + first) * kHeadDim + d0;
    const T* v = values + (t + first) * kHeadDim + d0;
#pragma unroll
    for (int a = 0; a < kAhead; ++a) {
      key[a] = *reinterpret_cast<const uint4*>(k + a * kPositions * kHeadDim);
      val[a] = *reinterpret_cast<const uint4*>(v + a * kPositions * kHeadDim);
    }
    Attend<T, kLanes, kAhead>(qv, key, val, always, always, run);
  }
  if (t < end) attend_masked(t, /*loaded=*/false);
  // The warp's position groups (lanes j, j + kLanes, ...) merged.
  float top = run.top, sum = run.sum;
#pragma unroll
  for (int offset = kLanes; offset < 32; offset <<= 1) {
    const float other_top = __shfl_xor_sync(0xffffffffu, top, offset);
    const float other_sum = __shfl_xor_sync(0xffffffffu, sum, offset);
    const float merged = fmaxf(top, other_top);
    const float mine = kernel::Exp2(top - merged), theirs = kernel::Exp2(other_top - merged);
    sum = sum * mine + other_sum * theirs;
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      run.acc[i] = run.acc[i] * mine + __shfl_xor_sync(0xffffffffu, run.acc[i], offset) * theirs;
    }
    top = merged;
  }
  if (lane < kLanes) {
#pragma unroll
    for (int i = 0; i < kVec; ++i) warp_acc[warp][d0 + i] = run.acc[i];
  }
  if (lane == 0) {
    warp_max[warp] = top;
    warp_sum[warp] = sum;
  }
  __syncthreads();
  // The block's warps merged: thread d < kHeadDim takes dim d.
  T* output = out + (static_cast<size_t>(b) * heads + h) * kHeadDim;
  float block_top = -FLT_MAX, block_sum = 0.0f, value = 0.0f;
  if (tid < kHeadDim) {
#pragma unroll
    for (int w = 0; w < kWarps; ++w) block_top = fmaxf(block_top, warp_max[w]);
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float weight = kernel::Exp2(warp_max[w] - block_top);
      block_sum += warp_sum[w] * weight;
      value += warp_acc[w][tid] * weight;
    }
    if (splits == 1) output[tid] = FromFloat<T>(value / block_sum);
  }
  if constexpr (kSpeculate) {
    // Launched with one split, so this merge never runs. It is the merge's
    // earlier form (two cluster barriers, each block's part read from its
    // own shared memory), kept here only because these kernels, at their
    // 64-register cap, compile to the same code with it as before, and
    // without it ptxas spilled in the (3, 4) kernel: N=256 took 950 against
    // 926 us per step (docs/results/bench/2026-12-04-h200-staged-row/).
    if (splits == 1) return;
    __shared__ float part_max, part_sum, part_acc[kHeadDim];
    if (tid < kHeadDim) part_acc[tid] = value;
    if (tid == 0) {
      part_max = block_top;
      part_sum = block_sum;
    }
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    if (split == 0 && tid < kHeadDim) {
      float row_top = -FLT_MAX;
      for (int r = 0; r < splits; ++r) {
        row_top = fmaxf(row_top, *cluster.map_shared_rank(&part_max, r));
      }
      float total = 0.0f, merged = 0.0f;
      for (int r = 0; r < splits; ++r) {
        const float weight = kernel::Exp2(*cluster.map_shared_rank(&part_max, r) - row_top);
        total += *cluster.map_shared_rank(&part_sum, r) * weight;
        merged += cluster.map_shared_rank(part_acc, r)[tid] * weight;
      }
      output[tid] = FromFloat<T>(merged / total);
    }
    cluster.sync();
    return;
  }
  if (splits == 1) {
    if (clustered) ClusterWait();
    return;
  }
  // Each block writes its part into the first block's shared memory
  // (distributed shared memory), then one barrier phase: after it the first
  // block merges from its own shared memory and the others may exit, since
  // nothing reads theirs (the parts used to be read from each block's own,
  // between two barriers).
  cg::cluster_group cluster = cg::this_cluster();
  ClusterWait();  // every block has started
  if (tid < kHeadDim) cluster.map_shared_rank(merge_acc[split], 0)[tid] = value;
  if (tid == 0) {
    *cluster.map_shared_rank(&merge_max[split], 0) = block_top;
    *cluster.map_shared_rank(&merge_sum[split], 0) = block_sum;
  }
  ClusterArrive<true>();
  ClusterWait();  // every block's part is written
  if (split != 0 || tid >= kHeadDim) return;
  float row_top = -FLT_MAX;
  for (int r = 0; r < splits; ++r) row_top = fmaxf(row_top, merge_max[r]);
  float total = 0.0f, merged = 0.0f;
  for (int r = 0; r < splits; ++r) {
    const float weight = kernel::Exp2(merge_max[r] - row_top);
    total += merge_sum[r] * weight;
    merged += merge_acc[r][tid] * weight;
  }
  output[tid] = FromFloat<T>(merged / total);
}

// Calls launch(&SplitDecodeAttentionKernel<T, ...>) for the runtime choices
// (head_dim 64 or 128, threads 128 or 256, or 512 preloaded, the shape's
// depth; Launch checks them). Preloaded kernels take one block a multiprocessor and never
// speculate.
template <typename T, int kHeadDim, int kThreads, bool kPreload, int kAhead, int kBlocks,
          typename LaunchFn>
cudaError_t DispatchRotate(bool rotate, bool speculate, LaunchFn&& launch) {
  if constexpr (!kPreload) {
    if (speculate && !rotate) {
      return launch(&SplitDecodeAttentionKernel<T, kHeadDim, kThreads, false, false, kAhead,
                                                kBlocks, true>);
    }
  }
  return rotate
             ? launch(&SplitDecodeAttentionKernel<T, kHeadDim, kThreads, kPreload, true, kAhead,
                                                  kBlocks>)
             : launch(&SplitDecodeAttentionKernel<T, kHeadDim, kThreads, kPreload, false, kAhead,
                                                  kBlocks>);
}

template <typename T, int kHeadDim, int kThreads, typename LaunchFn>
cudaError_t DispatchFlags(const DecodeAttentionShape& shape, bool rotate, LaunchFn&& launch) {
  if (shape.preload) {
    return DispatchRotate<T, kHeadDim, kThreads, true, 4, 1>(rotate, false, launch);
  }
  // One block a row: the first chunk loads beside the position's lookup
  // (N=64 540.4 -> 516.7, N=128 737.4 -> 721.9, N=256 1,054.1 -> 1,037.1 us
  // per step; docs/results/bench/2026-12-02-h200-attention-chunks/).
  const bool speculate = shape.splits == 1;
  const auto depth = [&](int ahead, int blocks) {
    return shape.ahead == ahead && shape.blocks == blocks;
  };
  if (depth(4, 4)) {
    return DispatchRotate<T, kHeadDim, kThreads, false, 4, 4>(rotate, speculate, launch);
  }
  if (depth(4, 3)) {
    return DispatchRotate<T, kHeadDim, kThreads, false, 4, 3>(rotate, speculate, launch);
  }
  if (depth(6, 2)) {
    return DispatchRotate<T, kHeadDim, kThreads, false, 6, 2>(rotate, speculate, launch);
  }
  if (depth(3, 4)) {
    return DispatchRotate<T, kHeadDim, kThreads, false, 3, 4>(rotate, speculate, launch);
  }
  return cudaErrorInvalidValue;
}

template <typename T, typename LaunchFn>
cudaError_t Dispatch(int head_dim, const DecodeAttentionShape& shape, bool rotate,
                     LaunchFn&& launch) {
  if (shape.threads == 512) {  // preloaded only (Launch checks)
    return head_dim == 64 ? DispatchRotate<T, 64, 512, true, 4, 1>(rotate, false, launch)
                          : DispatchRotate<T, 128, 512, true, 4, 1>(rotate, false, launch);
  }
  if (head_dim == 64) {
    return shape.threads == 128 ? DispatchFlags<T, 64, 128>(shape, rotate, launch)
                                : DispatchFlags<T, 64, 256>(shape, rotate, launch);
  }
  return shape.threads == 128 ? DispatchFlags<T, 128, 128>(shape, rotate, launch)
                              : DispatchFlags<T, 128, 256>(shape, rotate, launch);
}

template <typename T>
cudaError_t Launch(const DecodeAttentionShape& shape, const void* qkv, void* k, void* v,
                   const int64_t* slots, const int64_t* positions, bool positions_by_slot,
                   void* out, int batch, int heads, int kv_heads, int head_dim, int max_context,
                   float scale, const DecodeRotary& rotary, cudaStream_t stream) {
  if ((head_dim != 64 && head_dim != 128) || kv_heads <= 0 || heads % kv_heads != 0) {
    return cudaErrorInvalidValue;
  }
  const int splits = shape.splits, threads = shape.threads;
  if ((threads != 128 && threads != 256 && !(threads == 512 && shape.preload)) ||
      (splits != 1 && splits != 2 && splits != 4 && splits != 8)) {
    return cudaErrorInvalidValue;
  }
  const bool rotate = rotary.inv_freq != nullptr;
  return Dispatch<T>(head_dim, shape, rotate, [&](auto kernel_function) {
    return kernel::LaunchClustered(
        /*overlap=*/true, splits, kernel_function, dim3(heads, batch, splits), dim3(threads), 0,
        stream, static_cast<const T*>(qkv), static_cast<T*>(k), static_cast<T*>(v), slots,
        positions, positions_by_slot, static_cast<T*>(out), heads, kv_heads, max_context, scale,
        shape.split_positions, rotary);
  });
}

}  // namespace

cudaError_t LaunchDecodeAttentionShaped(const DecodeAttentionShape& shape, KernelDType dtype,
                                        const void* qkv, void* k_cache, void* v_cache,
                                        const int64_t* slots, const int64_t* positions,
                                        bool positions_by_slot, void* out, int batch,
                                        int heads, int kv_heads, int head_dim,
                                        int max_context, float scale, cudaStream_t stream,
                                        const DecodeRotary* rotary) {
  if (batch <= 0 || kv_heads <= 0) return cudaErrorInvalidValue;
  return kernel::WithElementType(dtype, [&](auto type) {
    return Launch<typename decltype(type)::type>(
        shape, qkv, k_cache, v_cache, slots, positions, positions_by_slot, out, batch, heads,
        kv_heads, head_dim, max_context, scale, rotary != nullptr ? *rotary : DecodeRotary{},
        stream);
  });
}

bool DecodeAttentionRotates(int batch, int heads, int kv_heads) {
  return batch <= kMaxFusedRows || heads == kv_heads;
}

bool DecodeAttentionSupports(KernelDType /*dtype*/, int head_dim, int group) {
  return (head_dim == 64 || head_dim == 128) && GroupedDecodeAttentionSupports(head_dim, group);
}

cudaError_t LaunchDecodeAttention(KernelDType dtype, const void* qkv, void* k_cache,
                                  void* v_cache, const int64_t* slots,
                                  const int64_t* positions, bool positions_by_slot, void* out,
                                  int batch, int heads, int kv_heads, int head_dim,
                                  int max_context, float scale, cudaStream_t stream,
                                  const DecodeRotary* rotary) {
  if (batch <= 0 || kv_heads <= 0) return cudaErrorInvalidValue;
  if (rotary != nullptr && (!DecodeAttentionRotates(batch, heads, kv_heads) ||
                            rotary->inv_freq == nullptr || head_dim / 2 > 128)) {
    return cudaErrorInvalidValue;
  }
  if (!DecodeAttentionRotates(batch, heads, kv_heads)) {
    return LaunchGroupedDecodeAttention(dtype, qkv, k_cache, v_cache, slots, positions,
                                        positions_by_slot, out, batch, heads, kv_heads,
                                        head_dim, max_context, scale, stream);
  }
  return LaunchDecodeAttentionShaped(
      DecodeAttentionShapeFor(batch, heads, max_context), dtype, qkv, k_cache, v_cache,
      slots, positions, positions_by_slot, out, batch, heads, kv_heads, head_dim, max_context,
      scale, stream, rotary);
}

}  // namespace tandem
