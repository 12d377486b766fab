// The decode attention kernel for up to kMaxFusedRows rows (see
// LaunchDecodeAttention in decode_kernels.h), and for larger batches without
// grouped-query attention; larger GQA batches take grouped_attention_kernel.cu's.
#include <cfloat>

#include <cooperative_groups.h>

#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/kernel_math.cuh"

namespace tandem {
namespace {

namespace cg = cooperative_groups;
using kernel::FromFloat;
using kernel::ToFloat;
using kernel::Vec16;


// The query (times `scale`, into shared memory) and the new key (into the
// cache at key_out) rotated as DecodeRotary says, rounded where
// LaunchQkNormRope rounds. Thread i < D / 2 owns the pair (i, i + D / 2);
// every thread of the block must call it (the norms' reductions).
template <typename T>
__device__ void RotateQueryAndKey(const T* q, const T* new_key, const DecodeRotary& rotary,
                                  int64_t position, int head_dim, float scale, float* query,
                                  T* key_out) {
  using kernel::Round;
  const int half = head_dim / 2, i = threadIdx.x;
  const bool active = i < half;
  float qa = active ? ToFloat(q[i]) : 0.0f, qb = active ? ToFloat(q[i + half]) : 0.0f;
  float ka = active ? ToFloat(new_key[i]) : 0.0f, kb = active ? ToFloat(new_key[i + half]) : 0.0f;
  auto norm = [&](const void* weight, float& a, float& b) {
    const float inv = rsqrtf(kernel::BlockSum(a * a + b * b) / head_dim + rotary.eps);
    if (!active) return;
    const T* w = static_cast<const T*>(weight);
    a = Round<T>(ToFloat(w[i]) * Round<T>(a * inv));
    b = Round<T>(ToFloat(w[i + half]) * Round<T>(b * inv));
  };
  if (rotary.q_norm != nullptr) norm(rotary.q_norm, qa, qb);
  if (rotary.k_norm != nullptr) norm(rotary.k_norm, ka, kb);
  if (!active) return;
  const float angle = static_cast<float>(position) * rotary.inv_freq[i];
  const float c = Round<T>(cosf(angle)), s = Round<T>(sinf(angle));
  // x * cos + rotate_half(x) * sin, each product rounded as ATen stores it.
  query[i] = Round<T>(Round<T>(qa * c) + Round<T>(-qb * s)) * scale;
  query[i + half] = Round<T>(Round<T>(qb * c) + Round<T>(qa * s)) * scale;
  key_out[i] = FromFloat<T>(Round<T>(ka * c) + Round<T>(-kb * s));
  key_out[i + half] = FromFloat<T>(Round<T>(kb * c) + Round<T>(ka * s));
}

// One pass over the context with an online softmax (flash-decoding), the
// context of each (query head, row) split over a cluster of blocks when the
// batch alone would leave multiprocessors idle.
//
// Grid (heads, batch, splits), kThreads threads. Thread t takes dims
// [j * kVec, (j + 1) * kVec) of the head (j = t % kLanes, kLanes =
// kHeadDim / kVec, the query's in registers) for positions begin + t /
// kLanes, + kPositions, ... of its block's slice: kAhead of them at a time,
// their keys and values loaded together before any is used. A position's
// score is summed over its kLanes lanes (shuffles); each thread keeps a
// running max, exp-sum and exp-weighted value sum for its positions. These
// merge over the warp (shuffles), the block's warps (shared memory), and
// with splits > 1 the cluster's blocks (distributed shared memory, read by
// the first block, which writes the output).
//
// kRotate (the Llama / Qwen families' rotary embedding, up to kMaxFusedRows
// rows): the block rotates the query into shared memory and appends the
// rotated key, then a barrier, then the pass. Without it each thread reads its
// dims of the query from qkv itself, and the threads whose pass reaches
// position p take the new key and value from qkv and append them, so nothing
// stands between the wait and the pass's loads. 64 registers a thread where
// the first pass is not preloaded (4 blocks of 256 threads per multiprocessor).
template <typename T, int kHeadDim, int kThreads, bool preload, bool kRotate>
__global__ void __launch_bounds__(kThreads, preload ? 1 : 1024 / kThreads)
SplitDecodeAttentionKernel(const T* __restrict__ qkv, T* __restrict__ k_cache,
                           T* __restrict__ v_cache, const int64_t* __restrict__ slots,
                           const int64_t* __restrict__ positions, bool positions_by_slot,
                           T* __restrict__ out, int heads, int kv_heads, int max_context,
                           float scale, DecodeRotary rotary) {
  constexpr int kVec = Vec16<T>::kSize, kLanes = kHeadDim / kVec;
  constexpr int kWarps = kThreads / 32;
  constexpr int kPositions = kThreads / kLanes;  // per pass of the block
  constexpr int kAhead = 4;                      // positions per thread in flight
  static_assert(kLanes <= 32 && 32 % kLanes == 0, "a position's lanes share a warp");
  __shared__ float query[kHeadDim];
  __shared__ float warp_max[kWarps], warp_sum[kWarps], warp_acc[kWarps][kHeadDim];
  __shared__ float part_max, part_sum, part_acc[kHeadDim];  // read by the cluster's first block
  kernel::AllowNextKernel();
  const int h = blockIdx.x, b = blockIdx.y, split = blockIdx.z, splits = gridDim.z;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int kv_head = h / (heads / kv_heads);
  const int64_t slot = slots[b];
  int64_t position = positions[positions_by_slot ? slot : b];
  if (position > max_context - 1) position = max_context - 1;
  const int length = static_cast<int>(position) + 1;
  const int slice = (length + splits - 1) / splits;
  const int begin = min(split * slice, length), end = min(begin + slice, length);
  const size_t head_offset =
      (static_cast<size_t>(slot) * kv_heads + kv_head) * max_context * kHeadDim;
  T* keys = k_cache + head_offset;
  T* values = v_cache + head_offset;
  // Earlier steps wrote the slice's K/V of every position but p, before this
  // step's first kernel (see WaitForPreviousKernel): the first pass's
  // positions (kAhead per thread) load into registers and the rest move
  // towards L2 while the previous kernel finishes; position p (the new key
  // and value) and lanes past the slice's end stay zero until the pass.
  const int j = tid % kLanes, d0 = j * kVec;
  const int first = tid / kLanes;  // the thread's position within a pass
  uint4 key[kAhead], val[kAhead];
#pragma unroll
  for (int a = 0; a < kAhead; ++a) {
    const int t = begin + first + a * kPositions;
    const bool early = preload && t < end && t < position;
    key[a] = early ? *reinterpret_cast<const uint4*>(keys + t * kHeadDim + d0) : uint4{};
    val[a] = early ? *reinterpret_cast<const uint4*>(values + t * kHeadDim + d0) : uint4{};
  }
  constexpr int kRowBytes = kHeadDim * static_cast<int>(sizeof(T));
  const int prefetched = preload ? min(end, begin + kAhead * kPositions) : begin;
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
  float qv[kVec], acc[kVec];
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
    for (int i = 0; i < kVec; ++i) qv[i] = query[d0 + i];
  } else {
    kernel::Unpack<T>(*reinterpret_cast<const uint4*>(q + d0), qv);
#pragma unroll
    for (int i = 0; i < kVec; ++i) qv[i] *= scale;
  }
#pragma unroll
  for (int i = 0; i < kVec; ++i) acc[i] = 0.0f;
  float top = -FLT_MAX, sum = 0.0f;  // over this thread's positions
  for (int t0 = begin + first; t0 - first < end; t0 += kAhead * kPositions) {  // block-uniform
    const bool loaded = preload && t0 == begin + first;  // the first pass, but position p
#pragma unroll
    for (int a = 0; a < kAhead; ++a) {
      const int t = t0 + a * kPositions;
      if (loaded && t != position) continue;
      const int at = t * kHeadDim + d0;  // within the head: max_context x kHeadDim
      // The new key and value, from qkv, appended. A split whose slice ends
      // before p can meet t == p past its end: it writes the bytes the last
      // split writes and masks the score (no guard: a guard here cost ptxas
      // 16 bytes of spills).
      if (!kRotate && t == position) {
        key[a] = *reinterpret_cast<const uint4*>(new_key + d0);
        val[a] = *reinterpret_cast<const uint4*>(new_value + d0);
        *reinterpret_cast<uint4*>(keys + at) = key[a];
        *reinterpret_cast<uint4*>(values + at) = val[a];
      } else if (t < end) {
        key[a] = *reinterpret_cast<const uint4*>(keys + at);
        val[a] = *reinterpret_cast<const uint4*>(values + at);
      } else {
        key[a] = val[a] = uint4{};
      }
    }
    float score[kAhead];
    float step_top = top;
#pragma unroll
    for (int a = 0; a < kAhead; ++a) {
      float k[kVec];
      kernel::Unpack<T>(key[a], k);
      float s = 0.0f;
#pragma unroll
      for (int i = 0; i < kVec; ++i) s += qv[i] * k[i];
#pragma unroll
      for (int offset = kLanes / 2; offset > 0; offset >>= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, offset);
      }
      score[a] = t0 + a * kPositions < end ? s : -INFINITY;
      step_top = fmaxf(step_top, score[a]);
    }
    const float rescale = __expf(top - step_top);
    sum *= rescale;
#pragma unroll
    for (int i = 0; i < kVec; ++i) acc[i] *= rescale;
#pragma unroll
    for (int a = 0; a < kAhead; ++a) {
      const float p = t0 + a * kPositions < end ? __expf(score[a] - step_top) : 0.0f;
      float v[kVec];
      kernel::Unpack<T>(val[a], v);
      sum += p;
#pragma unroll
      for (int i = 0; i < kVec; ++i) acc[i] += p * v[i];
    }
    top = step_top;
  }
  // The warp's position groups (lanes j, j + kLanes, ...) merged.
#pragma unroll
  for (int offset = kLanes; offset < 32; offset <<= 1) {
    const float other_top = __shfl_xor_sync(0xffffffffu, top, offset);
    const float other_sum = __shfl_xor_sync(0xffffffffu, sum, offset);
    const float merged = fmaxf(top, other_top);
    const float mine = __expf(top - merged), theirs = __expf(other_top - merged);
    sum = sum * mine + other_sum * theirs;
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      acc[i] = acc[i] * mine + __shfl_xor_sync(0xffffffffu, acc[i], offset) * theirs;
    }
    top = merged;
  }
  if (lane < kLanes) {
#pragma unroll
    for (int i = 0; i < kVec; ++i) warp_acc[warp][d0 + i] = acc[i];
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
      const float weight = __expf(warp_max[w] - block_top);
      block_sum += warp_sum[w] * weight;
      value += warp_acc[w][tid] * weight;
    }
    if (splits == 1) output[tid] = FromFloat<T>(value / block_sum);
  }
  if (splits == 1) return;
  if (tid < kHeadDim) part_acc[tid] = value;
  if (tid == 0) {
    part_max = block_top;
    part_sum = block_sum;
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every block's part is written
  if (split == 0 && tid < kHeadDim) {
    float row_top = -FLT_MAX;
    for (int r = 0; r < splits; ++r) row_top = fmaxf(row_top, *cluster.map_shared_rank(&part_max, r));
    float total = 0.0f, merged = 0.0f;
    for (int r = 0; r < splits; ++r) {
      const float weight = __expf(*cluster.map_shared_rank(&part_max, r) - row_top);
      total += *cluster.map_shared_rank(&part_sum, r) * weight;
      merged += cluster.map_shared_rank(part_acc, r)[tid] * weight;
    }
    output[tid] = FromFloat<T>(merged / total);
  }
  cluster.sync();  // no block exits while the first one reads its shared memory
}

// Calls launch(&SplitDecodeAttentionKernel<T, ...>) for the runtime choices
// (head_dim 64 or 128, threads 128 or 256; Launch checks them).
template <typename T, int kHeadDim, int kThreads, typename LaunchFn>
cudaError_t DispatchFlags(bool preload, bool rotate, LaunchFn&& launch) {
  if (preload) {
    return rotate ? launch(&SplitDecodeAttentionKernel<T, kHeadDim, kThreads, true, true>)
                  : launch(&SplitDecodeAttentionKernel<T, kHeadDim, kThreads, true, false>);
  }
  return rotate ? launch(&SplitDecodeAttentionKernel<T, kHeadDim, kThreads, false, true>)
                : launch(&SplitDecodeAttentionKernel<T, kHeadDim, kThreads, false, false>);
}

template <typename T, typename LaunchFn>
cudaError_t Dispatch(int head_dim, int threads, bool preload, bool rotate, LaunchFn&& launch) {
  if (head_dim == 64) {
    return threads == 128 ? DispatchFlags<T, 64, 128>(preload, rotate, launch)
                          : DispatchFlags<T, 64, 256>(preload, rotate, launch);
  }
  return threads == 128 ? DispatchFlags<T, 128, 128>(preload, rotate, launch)
                        : DispatchFlags<T, 128, 256>(preload, rotate, launch);
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
  if ((threads != 128 && threads != 256) ||
      (splits != 1 && splits != 2 && splits != 4 && splits != 8)) {
    return cudaErrorInvalidValue;
  }
  const bool rotate = rotary.inv_freq != nullptr;
  return Dispatch<T>(head_dim, threads, shape.preload, rotate, [&](auto kernel_function) {
    return kernel::LaunchClustered(
        /*overlap=*/true, splits, kernel_function, dim3(heads, batch, splits), dim3(threads), 0,
        stream, static_cast<const T*>(qkv), static_cast<T*>(k), static_cast<T*>(v), slots,
        positions, positions_by_slot, static_cast<T*>(out), heads, kv_heads, max_context, scale,
        rotary);
  });
}

}  // namespace

DecodeAttentionShape DecodeAttentionShapeFor(int batch, int heads) {
  // The context split over a cluster of 2, 4 or 8 blocks while heads x batch
  // blocks alone would leave multiprocessors idle (by batch size only, so a
  // bucket's padded rows split alike). Against the two-pass kernel this one
  // replaced (a block per head: scores into shared memory, then the values):
  // Llama-3.2-1B N=1 (32 heads: 4 splits) 859.6 -> 849.0 us per step (1
  // split 853.3, 2 853.4, 8 862.7); GPT-2 small N=64 673 -> 605 us, N=256
  // 1,288 -> 1,156 (docs/results/bench/2026-11-30-h200-one-pass-attention/).
  const int sms = kernel::MultiprocessorCount();
  DecodeAttentionShape shape;
  while (shape.splits < 8 && heads * batch * shape.splits * 2 <= sms) shape.splits *= 2;
  const int blocks = heads * batch * shape.splits;
  // 256 threads a block (64 registers: 4 blocks per multiprocessor), or 128
  // where that would take more than one wave of blocks and 128 fit in one:
  // GPT-2 small N=64 (768 blocks) 592 -> 571 us per step; at N=256 (3,072
  // blocks) 256 threads stay faster (1,131 vs 1,164 us).
  shape.threads = blocks > 4 * sms && blocks <= 8 * sms ? 128 : 256;
  // The first pass's K/V in registers before the wait (86-88 registers a
  // thread instead of 64) where the grid is one wave at most, a
  // latency-bound kernel; larger grids keep their occupancy. Llama-3.2-1B
  // N=1: 836.7 / 837.8 -> 829.5 / 830.2 us per step; GPT-2 small N=1 (8
  // splits of a short context) unchanged, 293.0 / 292.0 -> 292.3 / 292.4
  // (docs/results/bench/2026-12-01-h200-n1-kernels/).
  shape.preload = blocks <= sms;
  return shape;
}

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
      DecodeAttentionShapeFor(batch, heads), dtype, qkv, k_cache, v_cache,
      slots, positions, positions_by_slot, out, batch, heads, kv_heads, head_dim, max_context,
      scale, stream, rotary);
}

}  // namespace tandem
