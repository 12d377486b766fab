// The packed-prefill attention kernel on tensor cores, for fp16 and bf16
// (see LaunchPrefillAttention; fp32 keeps the SIMT kernel, whose results the
// fp32 exactness tests compare). FlashAttention-2's scheme with mma.sync
// m16n8k16: one block per (16-query tile, head), four warps; every warp
// takes the tile's 16 queries against its own blocks of keys (warp w: key
// blocks w, w + 4, ...), so a long context is split four ways, with an
// online softmax in registers (S = Q K^T and O += P V on tensor cores, fp32
// accumulation); the four partial results are merged through shared memory
// at the end.
#include <cstdint>
#include <type_traits>

#include "core/model/cuda/kernel_math.cuh"
#include "core/model/cuda/mma.cuh"
#include "core/model/cuda/prefill_attention_kernel.h"
#include "core/model/cuda/prefill_attention_launch.cuh"

namespace tandem {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kRows = kPrefillAttentionTile;  // queries per tile: the mma's M
static_assert(kRows == 16, "one m16n8k16 row block per tile");

using kernel::LoadMatrices;
using kernel::Mma;
using kernel::PackPair;
using kernel::QuadMax;
using kernel::QuadSum;

// Shared memory of one block: the warps' staged keys and values while they
// run, then (aliased) their partial results for the merge.
template <int kDim>
struct MmaShared {
  static constexpr int kKeys = 2048 / kDim;  // keys per warp step (32 or 16)
  static constexpr int kStride = kDim + 8;   // padded row: ldmatrix without bank conflicts
  struct Staging {
    uint16_t k[kWarps][kKeys][kStride];
    uint16_t v[kWarps][kKeys][kStride];
  };
  struct Merge {
    float acc[kWarps][kRows][kDim];
    float m[kWarps][kRows];
    float l[kWarps][kRows];
  };
  static constexpr size_t kBytes = sizeof(Staging) > sizeof(Merge) ? sizeof(Staging)
                                                                   : sizeof(Merge);
};

// T: __half or __nv_bfloat16. kDim: head size (64 or 128).
template <typename T, int kDim>
__global__ void __launch_bounds__(kThreads)
PrefillAttentionMmaKernel(const T* __restrict__ q, int64_t q_row_stride,
                          const T* __restrict__ k_cache, const T* __restrict__ v_cache,
                          const int64_t* __restrict__ tiles, T* __restrict__ out, int heads,
                          int kv_heads, int max_context, float scale) {
  using Shared = MmaShared<kDim>;
  constexpr int kKeys = Shared::kKeys;
  constexpr int kKeyTiles = kKeys / 8;    // n-tiles of S = Q K^T
  constexpr int kKeySteps = kKeys / 16;   // k-steps of O += P V
  constexpr int kDimSteps = kDim / 16;    // k-steps of Q K^T
  constexpr int kDimTiles = kDim / 8;     // n-tiles of O
  constexpr int kChunks = kDim / 8;       // 16-byte pieces of a K/V row
  __shared__ __align__(16) unsigned char shared_bytes[Shared::kBytes];
  auto& staging = *reinterpret_cast<typename Shared::Staging*>(shared_bytes);
  auto& merge = *reinterpret_cast<typename Shared::Merge*>(shared_bytes);

  const int64_t* tile = tiles + 4 * blockIdx.x;
  const int64_t row0 = tile[0], slot = tile[3];
  const int pos0 = static_cast<int>(tile[1]), n = static_cast<int>(tile[2]);
  const int h = blockIdx.y, g = h / (heads / kv_heads);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int quad_row = lane / 4, quad_col = 2 * (lane % 4);  // fragment coordinates
  const size_t head_offset = (static_cast<size_t>(slot) * kv_heads + g) * max_context * kDim;
  const T* keys = k_cache + head_offset;
  const T* values = v_cache + head_offset;
  const int last = pos0 + n - 1;  // the tile's last position
  const float log2_scale = scale * kernel::kLog2e;

  // Q's A fragments: rows quad_row and quad_row + 8 of the tile (zeros past n).
  uint32_t qf[kDimSteps][4];
#pragma unroll
  for (int ks = 0; ks < kDimSteps; ++ks) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = quad_row + 8 * (i % 2), c = 16 * ks + quad_col + 8 * (i / 2);
      qf[ks][i] = r < n ? *reinterpret_cast<const uint32_t*>(
                              q + (row0 + r) * q_row_stride + h * kDim + c)
                        : 0u;
    }
  }
  float acc[kDimTiles][4] = {};
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};  // rows quad_row, quad_row + 8
  auto& k_s = staging.k[warp];
  auto& v_s = staging.v[warp];
  for (int k0 = warp * kKeys; k0 <= last; k0 += kWarps * kKeys) {
    for (int i = lane; i < kKeys * kChunks; i += 32) {
      const int t = i / kChunks, c = 8 * (i % kChunks);
      uint4 kv = make_uint4(0, 0, 0, 0), vv = kv;  // zeros past the tile
      if (k0 + t <= last) {
        kv = *reinterpret_cast<const uint4*>(keys + static_cast<size_t>(k0 + t) * kDim + c);
        vv = *reinterpret_cast<const uint4*>(values + static_cast<size_t>(k0 + t) * kDim + c);
      }
      *reinterpret_cast<uint4*>(&k_s[t][c]) = kv;
      *reinterpret_cast<uint4*>(&v_s[t][c]) = vv;
    }
    __syncwarp();
    float s[kKeyTiles][4] = {};
#pragma unroll
    for (int kt = 0; kt < kKeyTiles; ++kt) {
#pragma unroll
      for (int ks = 0; ks < kDimSteps; ks += 2) {  // two k-steps per ldmatrix.x4
        uint32_t b[4];
        LoadMatrices<false>(b, &k_s[8 * kt + lane % 8][16 * ks + 8 * (lane / 8)]);
        Mma<T>(s[kt], qf[ks], b[0], b[1]);
        Mma<T>(s[kt], qf[ks + 1], b[2], b[3]);
      }
    }
    // Causal mask and the online softmax, in log2 units; each row's four
    // owners (a quad) reduce together.
    float row_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int kt = 0; kt < kKeyTiles; ++kt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = quad_row + 8 * (i / 2), key = k0 + 8 * kt + quad_col + i % 2;
        s[kt][i] = r < n && key <= pos0 + r ? s[kt][i] * log2_scale : -INFINITY;
        row_max[i / 2] = fmaxf(row_max[i / 2], s[kt][i]);
      }
    }
    float correction[2], offset[2], row_sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const float m_new = fmaxf(m[j], QuadMax(row_max[j]));
      offset[j] = m_new == -INFINITY ? 0.0f : m_new;  // no visible key yet: weights 0
      correction[j] = exp2f(m[j] - offset[j]);
      m[j] = m_new;
    }
#pragma unroll
    for (int kt = 0; kt < kKeyTiles; ++kt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        s[kt][i] = exp2f(s[kt][i] - offset[i / 2]);
        row_sum[i / 2] += s[kt][i];
      }
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) l[j] = l[j] * correction[j] + QuadSum(row_sum[j]);
#pragma unroll
    for (int dt = 0; dt < kDimTiles; ++dt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[dt][i] *= correction[i / 2];
    }
    // O += P V: S's accumulators of key tiles 2kk and 2kk + 1 are P's A
    // fragment for key step kk.
#pragma unroll
    for (int kk = 0; kk < kKeySteps; ++kk) {
      const uint32_t pf[4] = {PackPair<T>(s[2 * kk][0], s[2 * kk][1]),
                              PackPair<T>(s[2 * kk][2], s[2 * kk][3]),
                              PackPair<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              PackPair<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dt = 0; dt < kDimTiles; dt += 2) {  // two n-tiles per ldmatrix.x4
        uint32_t b[4];
        LoadMatrices<true>(b, &v_s[16 * kk + lane % 8 + 8 * ((lane / 8) % 2)]
                                  [8 * dt + 8 * (lane / 16)]);
        Mma<T>(acc[dt], pf, b[0], b[1]);
        Mma<T>(acc[dt + 1], pf, b[2], b[3]);
      }
    }
    __syncwarp();  // the staged block is consumed before the next overwrites it
  }

  // Merge the warps' partial results (their staging is no longer needed).
  __syncthreads();
#pragma unroll
  for (int dt = 0; dt < kDimTiles; ++dt) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      merge.acc[warp][quad_row + 8 * (i / 2)][8 * dt + quad_col + i % 2] = acc[dt][i];
    }
  }
  if (lane % 4 == 0) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      merge.m[warp][quad_row + 8 * j] = m[j];
      merge.l[warp][quad_row + 8 * j] = l[j];
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n * kDim; i += kThreads) {
    const int r = i / kDim, d = i % kDim;
    float m_all = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) m_all = fmaxf(m_all, merge.m[w][r]);
    float sum = 0.0f, value = 0.0f;  // key 0 is visible to every row: m_all is finite
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float weight = exp2f(merge.m[w][r] - m_all);
      sum += weight * merge.l[w][r];
      value += weight * merge.acc[w][r][d];
    }
    out[((row0 + r) * heads + h) * kDim + d] = kernel::FromFloat<T>(value / sum);
  }
}

template <typename T>
cudaError_t LaunchMma(const void* q, int64_t q_row_stride, const void* k, const void* v,
                     const int64_t* tiles, int num_tiles, void* out, int heads, int kv_heads,
                     int head_dim, int max_context, float scale, cudaStream_t stream) {
  return kernel::LaunchPrefillAttentionGrid<T>(
      PrefillAttentionMmaKernel<T, 64>, PrefillAttentionMmaKernel<T, 128>, kThreads, q,
      q_row_stride, k, v, tiles, num_tiles, out, heads, kv_heads, head_dim, max_context, scale,
      stream);
}

}  // namespace

cudaError_t LaunchPrefillAttentionMma(KernelDType dtype, const void* q, int64_t q_row_stride,
                                      const void* k_cache, const void* v_cache,
                                      const int64_t* tiles, int num_tiles, void* out, int heads,
                                      int kv_heads, int head_dim, int max_context, float scale,
                                      cudaStream_t stream) {
  switch (dtype) {
    case KernelDType::kFloat16:
      return LaunchMma<__half>(q, q_row_stride, k_cache, v_cache, tiles, num_tiles, out, heads,
                               kv_heads, head_dim, max_context, scale, stream);
    case KernelDType::kBFloat16:
      return LaunchMma<__nv_bfloat16>(q, q_row_stride, k_cache, v_cache, tiles, num_tiles, out,
                                      heads, kv_heads, head_dim, max_context, scale, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace tandem
