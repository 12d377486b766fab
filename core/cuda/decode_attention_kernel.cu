#include "core/cuda/decode_attention_kernel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>

namespace tandem {
namespace {

constexpr int kWarps = 16;  // latency-bound loads: many warps in flight
constexpr int kThreads = kWarps * 32;
constexpr int kMaxDimsPerLane = 8;  // head_dim <= 256
constexpr int kUnroll = 4;          // positions per warp per iteration

__device__ inline float ToFloat(float x) { return x; }
__device__ inline float ToFloat(__half x) { return __half2float(x); }
__device__ inline float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ inline void FromFloat(float x, float* out) { *out = x; }
__device__ inline void FromFloat(float x, __half* out) { *out = __float2half(x); }
__device__ inline void FromFloat(float x, __nv_bfloat16* out) { *out = __float2bfloat16(x); }

__device__ inline float WarpSum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// One block per (head, row). Warps split the positions; lanes split head_dim.
template <typename T>
__global__ void DecodeAttentionKernel(const T* __restrict__ qkv, T* __restrict__ k_cache,
                                      T* __restrict__ v_cache,
                                      const int64_t* __restrict__ slots,
                                      const int64_t* __restrict__ positions, T* __restrict__ out,
                                      int heads, int head_dim, int max_context, float scale) {
  extern __shared__ float scores[];  // [max_context]
  __shared__ float reduce[kWarps];
  __shared__ float partial[kWarps][kMaxDimsPerLane * 32];
  const int h = blockIdx.x, b = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t slot = slots[b];
  int64_t position = positions[b];
  if (position > max_context - 1) position = max_context - 1;
  const int length = static_cast<int>(position) + 1;
  const size_t head_offset = (static_cast<size_t>(slot) * heads + h) * max_context * head_dim;
  T* keys = k_cache + head_offset;
  T* values = v_cache + head_offset;
  const size_t row = static_cast<size_t>(b) * 3 * heads * head_dim;
  const T* query = qkv + row + static_cast<size_t>(h) * head_dim;
  const T* new_key = query + static_cast<size_t>(heads) * head_dim;
  const T* new_value = new_key + static_cast<size_t>(heads) * head_dim;
  // Append this step's key and value; the barrier makes them visible to the
  // whole block before it reads the slot.
  for (int d = threadIdx.x; d < head_dim; d += kThreads) {
    keys[position * head_dim + d] = new_key[d];
    values[position * head_dim + d] = new_value[d];
  }
  __syncthreads();

  float q_lane[kMaxDimsPerLane];
  for (int i = 0; i < kMaxDimsPerLane; ++i) {
    const int d = lane + 32 * i;
    q_lane[i] = d < head_dim ? ToFloat(query[d]) * scale : 0.0f;
  }
  // Scores: each warp takes kUnroll positions per iteration (independent
  // loads in flight hide memory latency), lanes split the dims.
  float local_max = -FLT_MAX;
  for (int t0 = warp * kUnroll; t0 < length; t0 += kWarps * kUnroll) {
    float dots[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int t = t0 + u;
      float dot = 0.0f;
      if (t < length) {
        const T* key = keys + static_cast<size_t>(t) * head_dim;
#pragma unroll
        for (int i = 0; i < kMaxDimsPerLane; ++i) {
          const int d = lane + 32 * i;
          if (d < head_dim) dot += q_lane[i] * ToFloat(key[d]);
        }
      }
      dots[u] = dot;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const float dot = WarpSum(dots[u]);
      if (t0 + u < length) {
        if (lane == 0) scores[t0 + u] = dot;
        local_max = fmaxf(local_max, dot);
      }
    }
  }
  if (lane == 0) reduce[warp] = local_max;
  __syncthreads();
  float max_score = reduce[0];
  for (int w = 1; w < kWarps; ++w) max_score = fmaxf(max_score, reduce[w]);
  __syncthreads();
  float local_sum = 0.0f;
  for (int t = threadIdx.x; t < length; t += kThreads) {
    const float e = __expf(scores[t] - max_score);
    scores[t] = e;
    local_sum += e;
  }
  local_sum = WarpSum(local_sum);
  if (lane == 0) reduce[warp] = local_sum;
  __syncthreads();
  float sum = 0.0f;
  for (int w = 0; w < kWarps; ++w) sum += reduce[w];
  // Weighted values: warps over positions, lanes over dims.
  float acc[kMaxDimsPerLane];
  for (int i = 0; i < kMaxDimsPerLane; ++i) acc[i] = 0.0f;
  for (int t0 = warp * kUnroll; t0 < length; t0 += kWarps * kUnroll) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int t = t0 + u;
      if (t < length) {
        const float p = scores[t];
        const T* value = values + static_cast<size_t>(t) * head_dim;
#pragma unroll
        for (int i = 0; i < kMaxDimsPerLane; ++i) {
          const int d = lane + 32 * i;
          if (d < head_dim) acc[i] += p * ToFloat(value[d]);
        }
      }
    }
  }
  for (int i = 0; i < kMaxDimsPerLane; ++i) partial[warp][lane + 32 * i] = acc[i];
  __syncthreads();
  T* output = out + (static_cast<size_t>(b) * heads + h) * head_dim;
  for (int d = threadIdx.x; d < head_dim; d += kThreads) {
    float total = 0.0f;
    for (int w = 0; w < kWarps; ++w) total += partial[w][d];
    FromFloat(total / sum, &output[d]);
  }
}

template <typename T>
cudaError_t Launch(const void* qkv, void* k, void* v, const int64_t* slots,
                   const int64_t* positions, void* out, int batch, int heads, int head_dim,
                   int max_context, float scale, cudaStream_t stream) {
  const size_t shared = static_cast<size_t>(max_context) * sizeof(float);
  if (shared > 48 * 1024) {
    cudaError_t e = cudaFuncSetAttribute(DecodeAttentionKernel<T>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(shared));
    if (e != cudaSuccess) return e;
  }
  const dim3 grid(heads, batch);
  DecodeAttentionKernel<T><<<grid, kThreads, shared, stream>>>(
      static_cast<const T*>(qkv), static_cast<T*>(k), static_cast<T*>(v), slots,
      positions, static_cast<T*>(out), heads, head_dim, max_context, scale);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchDecodeAttention(AttentionDType dtype, const void* qkv, void* k_cache,
                                  void* v_cache, const int64_t* slots,
                                  const int64_t* positions, void* out, int batch, int heads,
                                  int head_dim, int max_context, float scale,
                                  cudaStream_t stream) {
  if (head_dim > 32 * kMaxDimsPerLane || batch <= 0) return cudaErrorInvalidValue;
  switch (dtype) {
    case AttentionDType::kFloat32:
      return Launch<float>(qkv, k_cache, v_cache, slots, positions, out, batch, heads, head_dim,
                           max_context, scale, stream);
    case AttentionDType::kFloat16:
      return Launch<__half>(qkv, k_cache, v_cache, slots, positions, out, batch, heads, head_dim,
                            max_context, scale, stream);
    case AttentionDType::kBFloat16:
      return Launch<__nv_bfloat16>(qkv, k_cache, v_cache, slots, positions, out, batch, heads,
                                   head_dim, max_context, scale, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace tandem
