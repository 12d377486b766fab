// The decode attention kernel for up to kMaxFusedRows rows (see
// LaunchDecodeAttention in decode_kernels.h), and for larger batches without
// grouped-query attention; larger GQA batches take grouped_attention_kernel.cu's.
#include <cfloat>

#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/kernel_math.cuh"

namespace tandem {
namespace {

using kernel::FromFloat;
using kernel::LoadVecCoherent;
using kernel::ToFloat;
using kernel::Vec16;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxHeadDim = 256;

// Block-wide reduction of one float per thread; every thread gets the result.
template <bool kMax>
__device__ float BlockReduce(float v, float* scratch) {
  v = kMax ? kernel::WarpMax(v) : kernel::WarpSum(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float result = scratch[0];
  for (int w = 1; w < kWarps; ++w) result = kMax ? fmaxf(result, scratch[w]) : result + scratch[w];
  __syncthreads();  // scratch is reused by the next reduction
  return result;
}

// The query (times `scale`, into shared memory) and the new key (into the
// cache at key_out) rotated as DecodeRotary says, rounded where
// LaunchQkNormRope rounds. Thread i < D / 2 owns the pair (i, i + D / 2);
// every thread of the block must call it (the norms' reductions).
template <typename T>
__device__ void RotateQueryAndKey(const T* q, const T* new_key, const DecodeRotary& rotary,
                                  int64_t position, int head_dim, float scale, float* query,
                                  T* key_out, float* scratch) {
  using kernel::Round;
  const int half = head_dim / 2, i = threadIdx.x;
  const bool active = i < half;
  float qa = active ? ToFloat(q[i]) : 0.0f, qb = active ? ToFloat(q[i + half]) : 0.0f;
  float ka = active ? ToFloat(new_key[i]) : 0.0f, kb = active ? ToFloat(new_key[i + half]) : 0.0f;
  auto norm = [&](const void* weight, float& a, float& b) {
    const float inv = rsqrtf(BlockReduce<false>(a * a + b * b, scratch) / head_dim + rotary.eps);
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

// One block per (query head, row); query head h reads K/V head h / (heads /
// kv_heads). The blocks of one K/V head all append the same new key and
// value (identical bytes, so the overlapping writes are benign), each
// before its own barrier. Scores: one thread per position, reading the key
// with 16-byte loads. Values: D / kVec threads per position, each owning kVec
// dims; the position groups are summed through shared memory.
// kHeadDim > 0 fixes head_dim at compile time (64, every GPT-2 size), so the
// loops over a key's or value's vectors unroll and their loads are in flight
// together; 0 reads head_dim at run time.
template <typename T, int kHeadDim, int kMinBlocks = 1>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
DecodeAttentionKernel(const T* __restrict__ qkv, T* __restrict__ k_cache,
                      T* __restrict__ v_cache, const int64_t* __restrict__ slots,
                      const int64_t* __restrict__ positions, bool positions_by_slot,
                      T* __restrict__ out, int heads, int kv_heads, int runtime_head_dim,
                      int max_context, float scale, DecodeRotary rotary) {
  constexpr int kVec = Vec16<T>::kSize;
  const int head_dim = kHeadDim > 0 ? kHeadDim : runtime_head_dim;
  extern __shared__ float scores[];  // [max_context]
  __shared__ float query[kMaxHeadDim];
  __shared__ float partial[kThreads * kVec];
  __shared__ float scratch[kWarps];
  kernel::AllowNextKernel();
  const int h = blockIdx.x, b = blockIdx.y, tid = threadIdx.x;
  const int kv_head = h / (heads / kv_heads);
  const int64_t slot = slots[b];
  int64_t position = positions[positions_by_slot ? slot : b];
  if (position > max_context - 1) position = max_context - 1;
  const int length = static_cast<int>(position) + 1;
  const size_t head_offset =
      (static_cast<size_t>(slot) * kv_heads + kv_head) * max_context * head_dim;
  T* keys = k_cache + head_offset;
  T* values = v_cache + head_offset;
  // The slot's earlier keys and values were written by earlier steps: start
  // moving them into L2 while the previous kernel finishes.
  const int row_bytes = head_dim * static_cast<int>(sizeof(T));
  for (int offset = tid * 128; offset < (length - 1) * row_bytes; offset += kThreads * 128) {
    kernel::PrefetchL2(reinterpret_cast<const char*>(keys) + offset);
    kernel::PrefetchL2(reinterpret_cast<const char*>(values) + offset);
  }
  kernel::WaitForPreviousKernel();  // qkv comes from the previous kernel
  // Row b of qkv: [heads + 2 kv_heads, head_dim] (queries, keys, values).
  const T* row = qkv + static_cast<size_t>(b) * (heads + 2 * kv_heads) * head_dim;
  const T* q = row + static_cast<size_t>(h) * head_dim;
  const T* new_key = row + static_cast<size_t>(heads + kv_head) * head_dim;
  const T* new_value = row + static_cast<size_t>(heads + kv_heads + kv_head) * head_dim;
  // Append this step's key and value; the barrier makes them (and the query)
  // visible to the whole block before it reads the slot.
  if (rotary.inv_freq != nullptr) {
    RotateQueryAndKey(q, new_key, rotary, position, head_dim, scale, query,
                      keys + position * head_dim, scratch);
  }
  for (int d = tid; d < head_dim; d += kThreads) {
    if (rotary.inv_freq == nullptr) {
      keys[position * head_dim + d] = new_key[d];
      query[d] = ToFloat(q[d]) * scale;
    }
    values[position * head_dim + d] = new_value[d];
  }
  __syncthreads();

  float local_max = -FLT_MAX;
  for (int t = tid; t < length; t += kThreads) {
    const T* key = keys + static_cast<size_t>(t) * head_dim;
    float dot = 0.0f;
#pragma unroll
    for (int d0 = 0; d0 < head_dim; d0 += kVec) {
      float k[kVec];
      LoadVecCoherent(key + d0, k);
#pragma unroll
      for (int i = 0; i < kVec; ++i) dot += query[d0 + i] * k[i];
    }
    scores[t] = dot;
    local_max = fmaxf(local_max, dot);
  }
  const float max_score = BlockReduce<true>(local_max, scratch);
  float local_sum = 0.0f;
  for (int t = tid; t < length; t += kThreads) {  // the positions this thread scored
    const float e = __expf(scores[t] - max_score);
    scores[t] = e;
    local_sum += e;
  }
  const float sum = BlockReduce<false>(local_sum, scratch);  // its barrier publishes scores

  const int group = head_dim / kVec;   // threads per position
  const int groups = kThreads / group;  // positions per pass
  const int g = tid / group, d0 = (tid % group) * kVec;
  float acc[kVec];
#pragma unroll
  for (int i = 0; i < kVec; ++i) acc[i] = 0.0f;
#pragma unroll 4
  for (int t = g; t < length; t += groups) {
    const float p = scores[t];
    float v[kVec];
    LoadVecCoherent(values + static_cast<size_t>(t) * head_dim + d0, v);
#pragma unroll
    for (int i = 0; i < kVec; ++i) acc[i] += p * v[i];
  }
#pragma unroll
  for (int i = 0; i < kVec; ++i) partial[g * head_dim + d0 + i] = acc[i];
  __syncthreads();
  T* output = out + (static_cast<size_t>(b) * heads + h) * head_dim;
  for (int d = tid; d < head_dim; d += kThreads) {
    float total = 0.0f;
    for (int j = 0; j < groups; ++j) total += partial[j * head_dim + d];
    output[d] = FromFloat<T>(total / sum);
  }
}

template <typename T>
cudaError_t Launch(const void* qkv, void* k, void* v, const int64_t* slots,
                   const int64_t* positions, bool positions_by_slot, void* out, int batch,
                   int heads, int kv_heads, int head_dim, int max_context, float scale,
                   const DecodeRotary& rotary, cudaStream_t stream) {
  constexpr int kVec = Vec16<T>::kSize;
  if (head_dim <= 0 || head_dim > kMaxHeadDim || head_dim % kVec != 0 ||
      kThreads % (head_dim / kVec) != 0 || kv_heads <= 0 || heads % kv_heads != 0) {
    return cudaErrorInvalidValue;
  }
  const size_t shared = static_cast<size_t>(max_context) * sizeof(float);
  const dim3 grid(heads, batch);
  // Above kMaxFusedRows rows (many blocks) head size 64 takes the variant
  // bounded to 80 registers, three blocks per SM: GPT-2 small N=256 1,393 ->
  // 1,300 us per step, N=64 639 -> 636; at one row it cost Llama-3.2-1B
  // 11 us (docs/results/bench/2026-11-30-h200-batched/attention-launch-bounds/).
  auto* kernel_function = head_dim != 64          ? &DecodeAttentionKernel<T, 0>
                          : batch > kMaxFusedRows ? &DecodeAttentionKernel<T, 64, 3>
                                                  : &DecodeAttentionKernel<T, 64>;
  if (shared > 16 * 1024) {  // static shared memory takes up to ~10 KB more
    cudaError_t e = cudaFuncSetAttribute(kernel_function,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(shared));
    if (e != cudaSuccess) return e;
  }
  return kernel::LaunchOverlapped(kernel_function, grid, dim3(kThreads), shared, stream,
                                  static_cast<const T*>(qkv), static_cast<T*>(k),
                                  static_cast<T*>(v), slots, positions, positions_by_slot,
                                  static_cast<T*>(out), heads, kv_heads, head_dim, max_context,
                                  scale, rotary);
}

}  // namespace

bool DecodeAttentionRotates(int batch, int heads, int kv_heads) {
  return batch <= kMaxFusedRows || heads == kv_heads;
}

bool DecodeAttentionSupports(KernelDType dtype, int head_dim, int group) {
  const int vec = dtype == KernelDType::kFloat32 ? 4 : 8;
  return head_dim > 0 && head_dim <= kMaxHeadDim && head_dim % vec == 0 &&
         kThreads % (head_dim / vec) == 0 && GroupedDecodeAttentionSupports(head_dim, group);
}

cudaError_t LaunchDecodeAttention(KernelDType dtype, const void* qkv, void* k_cache,
                                  void* v_cache, const int64_t* slots,
                                  const int64_t* positions, bool positions_by_slot, void* out,
                                  int batch, int heads, int kv_heads, int head_dim,
                                  int max_context, float scale, cudaStream_t stream,
                                  const DecodeRotary* rotary) {
  if (batch <= 0 || kv_heads <= 0) return cudaErrorInvalidValue;
  if (rotary != nullptr && (!DecodeAttentionRotates(batch, heads, kv_heads) ||
                            rotary->inv_freq == nullptr || head_dim / 2 > kThreads)) {
    return cudaErrorInvalidValue;
  }
  if (!DecodeAttentionRotates(batch, heads, kv_heads)) {
    return LaunchGroupedDecodeAttention(dtype, qkv, k_cache, v_cache, slots, positions,
                                        positions_by_slot, out, batch, heads, kv_heads,
                                        head_dim, max_context, scale, stream);
  }
  return kernel::WithElementType(dtype, [&](auto type) {
    return Launch<typename decltype(type)::type>(
        qkv, k_cache, v_cache, slots, positions, positions_by_slot, out, batch, heads, kv_heads,
        head_dim, max_context, scale, rotary != nullptr ? *rotary : DecodeRotary{}, stream);
  });
}

}  // namespace tandem
