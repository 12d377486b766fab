// The packed-prefill attention kernel (see prefill_attention_kernel.h) for
// fp32: a SIMT flash-attention over KV slots (fp16 and bf16 take the
// tensor-core kernel of prefill_attention_mma_kernel.cu). One block per
// (query tile, head); the tile's queries share each block of keys and
// values staged in shared memory, with an online softmax, so a long prompt
// reads its K/V once per tile.
#include <cfloat>

#include "core/model/cuda/kernel_math.cuh"
#include "core/model/cuda/prefill_attention_kernel.h"
#include "core/model/cuda/prefill_attention_launch.cuh"

namespace tandem {
namespace {

using kernel::FromFloat;
using kernel::ToFloat;
using kernel::Vec16;

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kTile = kPrefillAttentionTile;  // queries per block
constexpr int kPerWarp = kTile / kWarps;                      // queries per warp
constexpr int kKeys = 32;                                     // keys per block step: one per lane
static_assert(kTile % kWarps == 0, "queries split evenly over warps");

// kDim: head size (compile time, multiple of 32).
template <typename T, int kDim>
__global__ void __launch_bounds__(kThreads)
PrefillAttentionKernel(const T* __restrict__ q, int64_t q_row_stride,
                       const T* __restrict__ k_cache, const T* __restrict__ v_cache,
                       const int64_t* __restrict__ tiles, T* __restrict__ out, int heads,
                       int kv_heads, int max_context, float scale) {
  constexpr int kVec = Vec16<T>::kSize;
  constexpr int kPerLane = kDim / 32;  // output dims per lane
  __shared__ float q_s[kTile][kDim];
  __shared__ float k_s[kKeys][kDim + 1];  // +1: lanes read different rows conflict-free
  __shared__ float v_s[kKeys][kDim];
  const int64_t* tile = tiles + 4 * blockIdx.x;
  const int64_t row0 = tile[0], pos0 = tile[1], slot = tile[3];
  const int n = static_cast<int>(tile[2]);
  const int h = blockIdx.y, g = h / (heads / kv_heads);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  for (int i = tid; i < kTile * kDim; i += kThreads) {
    const int r = i / kDim, d = i % kDim;
    q_s[r][d] = r < n ? ToFloat(q[(row0 + r) * q_row_stride + h * kDim + d]) * scale : 0.0f;
  }
  const size_t head_offset = (static_cast<size_t>(slot) * kv_heads + g) * max_context * kDim;
  const T* keys = k_cache + head_offset;
  const T* values = v_cache + head_offset;
  const int last = static_cast<int>(pos0) + n - 1;  // the tile's last position

  float m[kPerWarp], l[kPerWarp], acc[kPerWarp][kPerLane];
#pragma unroll
  for (int j = 0; j < kPerWarp; ++j) {
    m[j] = -FLT_MAX;
    l[j] = 0.0f;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) acc[j][i] = 0.0f;
  }
  for (int k0 = 0; k0 <= last; k0 += kKeys) {
    __syncthreads();  // the previous block of keys is consumed (and q_s written)
    for (int v = tid; v < kKeys * kDim / kVec; v += kThreads) {
      const int t = v / (kDim / kVec), d0 = (v % (kDim / kVec)) * kVec;
      float kf[kVec], vf[kVec];
      if (k0 + t <= last) {
        kernel::LoadVecCoherent(keys + static_cast<size_t>(k0 + t) * kDim + d0, kf);
        kernel::LoadVecCoherent(values + static_cast<size_t>(k0 + t) * kDim + d0, vf);
      } else {  // past the tile: zeros, so masked weights times values stay 0
#pragma unroll
        for (int i = 0; i < kVec; ++i) kf[i] = vf[i] = 0.0f;
      }
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        k_s[t][d0 + i] = kf[i];
        v_s[t][d0 + i] = vf[i];
      }
    }
    __syncthreads();
    const int key = k0 + lane;
    float p[kPerWarp];
#pragma unroll
    for (int j = 0; j < kPerWarp; ++j) {
      const int r = warp * kPerWarp + j;
      const bool visible = r < n && key <= pos0 + r;
      float s = -FLT_MAX;
      if (visible) {
        s = 0.0f;
#pragma unroll 16
        for (int d = 0; d < kDim; ++d) s += q_s[r][d] * k_s[lane][d];
      }
      const float block_max = kernel::WarpMax(s);
      const float m_new = fmaxf(m[j], block_max);
      p[j] = visible ? __expf(s - m_new) : 0.0f;
      const float correction = __expf(m[j] - m_new);
      l[j] = l[j] * correction + kernel::WarpSum(p[j]);
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) acc[j][i] *= correction;
      m[j] = m_new;
    }
#pragma unroll 4
    for (int t = 0; t < kKeys; ++t) {
      float v[kPerLane];
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) v[i] = v_s[t][lane + 32 * i];
#pragma unroll
      for (int j = 0; j < kPerWarp; ++j) {
        const float pt = __shfl_sync(0xffffffffu, p[j], t);
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) acc[j][i] += pt * v[i];
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kPerWarp; ++j) {
    const int r = warp * kPerWarp + j;
    if (r >= n) continue;
    T* o = out + ((row0 + r) * heads + h) * kDim;
    const float inv = 1.0f / l[j];  // key 0 is always visible: l >= 1
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) o[lane + 32 * i] = FromFloat<T>(acc[j][i] * inv);
  }
}

template <typename T>
cudaError_t Launch(const void* q, int64_t q_row_stride, const void* k, const void* v,
                  const int64_t* tiles, int num_tiles, void* out, int heads, int kv_heads,
                  int head_dim, int max_context, float scale, cudaStream_t stream) {
  return kernel::LaunchPrefillAttentionGrid<T>(
      PrefillAttentionKernel<T, 64>, PrefillAttentionKernel<T, 128>, kThreads, q, q_row_stride, k,
      v, tiles, num_tiles, out, heads, kv_heads, head_dim, max_context, scale, stream);
}

}  // namespace

cudaError_t LaunchPrefillAttention(KernelDType dtype, const void* q, int64_t q_row_stride,
                                   const void* k_cache, const void* v_cache,
                                   const int64_t* tiles, int num_tiles, void* out, int heads,
                                   int kv_heads, int head_dim, int max_context, float scale,
                                   cudaStream_t stream) {
  if (dtype != KernelDType::kFloat32) {
    return LaunchPrefillAttentionMma(dtype, q, q_row_stride, k_cache, v_cache, tiles, num_tiles,
                                     out, heads, kv_heads, head_dim, max_context, scale, stream);
  }
  return Launch<float>(q, q_row_stride, k_cache, v_cache, tiles, num_tiles, out, heads, kv_heads,
                       head_dim, max_context, scale, stream);
}

}  // namespace tandem
