// The grouped decode attention kernel for batches of more than
// kMaxFusedRows rows (see LaunchGroupedDecodeAttention in decode_kernels.h).
//
// Grid (kv_heads, batch, splits): a block takes one K/V head of one row and
// all the query heads that share it (grouped-query attention: each key and
// value is loaded once for the group), over one contiguous range of the
// row's positions. With splits > 1 (where rows x kv_heads blocks alone
// would leave SMs idle) the blocks of one (row, K/V head) form a
// thread-block cluster: each one attends over a slice of the context
// (flash-decoding), stores its partial softmax result into the shared memory
// of the cluster's first block (distributed shared memory), and that block
// merges them.
#include <cfloat>

#include <cooperative_groups.h>

#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/kernel_math.cuh"

namespace tandem {
namespace {

namespace cg = cooperative_groups;
using kernel::FromFloat;
using kernel::LoadVecCoherent;
using kernel::ToFloat;
using kernel::Vec16;

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kMaxGroup = 8;   // query heads per K/V head
constexpr int kTile = 32;      // positions a warp takes at a time (a lane each)

// `kCount` consecutive elements of T at p (aligned to their size), as floats.
template <typename T, int kCount>
__device__ __forceinline__ void LoadSmall(const T* p, float (&out)[kCount]) {
  struct alignas(sizeof(T) * kCount) Pack {
    T v[kCount];
  };
  const Pack pack = *reinterpret_cast<const Pack*>(p);
#pragma unroll
  for (int i = 0; i < kCount; ++i) out[i] = ToFloat(pack.v[i]);
}

// A softmax-weighted partial result over some positions, for each query head
// g of the group: running maximum score, sum of exp(score - max), and the
// exp-weighted sum of values (unnormalized) [kGroup][kHeadDim].
template <int kGroup, int kHeadDim>
struct Partial {
  float max[kGroup];
  float sum[kGroup];
  float acc[kGroup][kHeadDim];
};

// Merges parts[0..count) (shared memory) for element (g, d): returns the
// weighted sum of values and, in *sum, the total exp-sum, both relative to
// the largest max, in *top (-FLT_MAX when no part saw a position).
template <int kGroup, int kHeadDim>
__device__ __forceinline__ float Merge(const Partial<kGroup, kHeadDim>* parts, int count, int g,
                                       int d, float* sum, float* top) {
  float best = -FLT_MAX;
  for (int i = 0; i < count; ++i) {
    if (parts[i].sum[g] > 0.0f) best = fmaxf(best, parts[i].max[g]);
  }
  float total = 0.0f, acc = 0.0f;
  for (int i = 0; i < count; ++i) {
    if (parts[i].sum[g] == 0.0f) continue;  // a part that saw no position
    const float w = __expf(parts[i].max[g] - best);
    total += parts[i].sum[g] * w;
    acc += parts[i].acc[g][d] * w;
  }
  *sum = total;
  *top = best;
  return acc;
}

// T, head_dim (64 or 128) and the largest group size it handles (a power of
// two >= heads / kv_heads) are compile-time; lane l owns value dims
// [l * kPer, l * kPer + kPer).
template <typename T, int kHeadDim, int kGroup>
__global__ void __launch_bounds__(kThreads)
DecodeAttentionKernel(const T* __restrict__ qkv, T* __restrict__ k_cache,
                      T* __restrict__ v_cache, const int64_t* __restrict__ slots,
                      const int64_t* __restrict__ positions, bool positions_by_slot,
                      T* __restrict__ out, int heads, int kv_heads, int max_context,
                      float scale) {
  constexpr int kVec = Vec16<T>::kSize;
  constexpr int kPer = kHeadDim / 32;
  __shared__ float query[kGroup][kHeadDim];
  __shared__ Partial<kGroup, kHeadDim> warp_part[kWarps];
  // The cluster's blocks' parts [splits], in the first block's copy (dynamic).
  extern __shared__ __align__(16) unsigned char dynamic_shared[];
  auto* block_parts = reinterpret_cast<Partial<kGroup, kHeadDim>*>(dynamic_shared);
  kernel::AllowNextKernel();
  // A block may write another's shared memory only once that one runs:
  // announce this one (the matching wait is before the stores).
  if (gridDim.z > 1) asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  const int kv_head = blockIdx.x, b = blockIdx.y, split = blockIdx.z, splits = gridDim.z;
  const int group = heads / kv_heads, tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int64_t slot = slots[b];
  int64_t position = positions[positions_by_slot ? slot : b];
  if (position > max_context - 1) position = max_context - 1;
  const int length = static_cast<int>(position) + 1;
  // This block's positions [begin, end): the context in `splits` slices of
  // whole tiles.
  const int slice = ((length + splits - 1) / splits + kTile - 1) / kTile * kTile;
  const int begin = min(split * slice, length), end = min(begin + slice, length);
  const size_t head_offset =
      (static_cast<size_t>(slot) * kv_heads + kv_head) * max_context * kHeadDim;
  T* keys = k_cache + head_offset;
  T* values = v_cache + head_offset;
  // Earlier steps wrote the slot's K/V: move it towards L2 while the
  // previous kernel finishes.
  constexpr int kRowBytes = kHeadDim * static_cast<int>(sizeof(T));
  const int prefetch_end = min(end, length - 1);
  for (int offset = begin * kRowBytes + tid * 128; offset < prefetch_end * kRowBytes;
       offset += kThreads * 128) {
    kernel::PrefetchL2(reinterpret_cast<const char*>(keys) + offset);
    kernel::PrefetchL2(reinterpret_cast<const char*>(values) + offset);
  }
  kernel::WaitForPreviousKernel();  // qkv comes from the previous kernel
  // Row b of qkv: [heads + 2 kv_heads, head_dim] (queries, keys, values).
  const T* row = qkv + static_cast<size_t>(b) * (heads + 2 * kv_heads) * kHeadDim;
  if (begin <= position && position < end) {  // the block whose slice holds p appends
    const T* new_key = row + static_cast<size_t>(heads + kv_head) * kHeadDim;
    const T* new_value = row + static_cast<size_t>(heads + kv_heads + kv_head) * kHeadDim;
    for (int d = tid; d < kHeadDim; d += kThreads) {
      keys[position * kHeadDim + d] = new_key[d];
      values[position * kHeadDim + d] = new_value[d];
    }
  }
  for (int i = tid; i < kGroup * kHeadDim; i += kThreads) {
    const int g = i / kHeadDim, d = i % kHeadDim;
    query[g][d] =
        g < group ? ToFloat(row[static_cast<size_t>(kv_head * group + g) * kHeadDim + d]) * scale
                  : 0.0f;
  }
  __syncthreads();  // the appended key/value and the queries are visible

  // Each warp: tiles of 32 positions (a lane scores one), online softmax.
  float max[kGroup], sum[kGroup], acc[kGroup][kPer];
#pragma unroll
  for (int g = 0; g < kGroup; ++g) {
    max[g] = -FLT_MAX;
    sum[g] = 0.0f;
#pragma unroll
    for (int j = 0; j < kPer; ++j) acc[g][j] = 0.0f;
  }
  for (int t0 = begin + warp * kTile; t0 < end; t0 += kWarps * kTile) {
    const int t = t0 + lane, count = min(kTile, end - t0);
    float score[kGroup];
#pragma unroll
    for (int g = 0; g < kGroup; ++g) score[g] = 0.0f;
    if (t < end) {
      const T* key = keys + static_cast<size_t>(t) * kHeadDim;
#pragma unroll
      for (int d0 = 0; d0 < kHeadDim; d0 += kVec) {
        float k[kVec];
        LoadVecCoherent(key + d0, k);
#pragma unroll
        for (int g = 0; g < kGroup; ++g) {
#pragma unroll
          for (int i = 0; i < kVec; ++i) score[g] += query[g][d0 + i] * k[i];
        }
      }
    }
    float p[kGroup];
#pragma unroll
    for (int g = 0; g < kGroup; ++g) {
      const float s = t < end ? score[g] : -FLT_MAX;
      const float top = fmaxf(max[g], kernel::WarpMax(s));
      const float rescale = __expf(max[g] - top);
      p[g] = t < end ? __expf(s - top) : 0.0f;
      sum[g] = sum[g] * rescale + p[g];  // this lane's share; summed over the warp below
#pragma unroll
      for (int j = 0; j < kPer; ++j) acc[g][j] *= rescale;
      max[g] = top;
    }
#pragma unroll 16
    for (int i = 0; i < count; ++i) {
      float v[kPer];
      LoadSmall<T, kPer>(values + static_cast<size_t>(t0 + i) * kHeadDim + lane * kPer, v);
#pragma unroll
      for (int g = 0; g < kGroup; ++g) {
        const float weight = __shfl_sync(0xffffffffu, p[g], i);
#pragma unroll
        for (int j = 0; j < kPer; ++j) acc[g][j] += weight * v[j];
      }
    }
  }
#pragma unroll
  for (int g = 0; g < kGroup; ++g) {
    const float total = kernel::WarpSum(sum[g]);
    if (lane == 0) {
      warp_part[warp].max[g] = max[g];
      warp_part[warp].sum[g] = total;
    }
#pragma unroll
    for (int j = 0; j < kPer; ++j) warp_part[warp].acc[g][lane * kPer + j] = acc[g][j];
  }
  __syncthreads();

  // The block's result: its warps' parts merged; with splits, stored into
  // the first block's block_parts[split].
  T* output = out + (static_cast<size_t>(b) * heads + kv_head * group) * kHeadDim;
  Partial<kGroup, kHeadDim>* mine = nullptr;
  cg::cluster_group cluster = cg::this_cluster();
  if (splits > 1) {
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");  // the cluster runs
    mine = cluster.map_shared_rank(block_parts, 0) + split;
  }
  for (int i = tid; i < group * kHeadDim; i += kThreads) {
    const int g = i / kHeadDim, d = i % kHeadDim;
    float total, top;
    const float value = Merge(warp_part, kWarps, g, d, &total, &top);
    if (splits == 1) {
      output[i] = FromFloat<T>(value / total);
      continue;
    }
    mine->acc[g][d] = value;
    if (d == 0) {
      mine->sum[g] = total;
      mine->max[g] = top;
    }
  }
  if (splits == 1) return;
  cluster.sync();  // every block's part has arrived
  if (split != 0) return;
  for (int i = tid; i < group * kHeadDim; i += kThreads) {
    const int g = i / kHeadDim, d = i % kHeadDim;
    float total, top;
    const float value = Merge(block_parts, splits, g, d, &total, &top);
    output[i] = FromFloat<T>(value / total);
  }
}

template <typename T, int kHeadDim, int kGroup>
cudaError_t LaunchForGroup(const void* qkv, void* k, void* v, const int64_t* slots,
                           const int64_t* positions, bool positions_by_slot, void* out,
                           int batch, int heads, int kv_heads, int max_context, float scale,
                           cudaStream_t stream) {
  // Split every row's context over a cluster of blocks while rows x K/V
  // heads alone would leave SMs idle. The choice depends on the batch alone
  // (not on lengths) and changes at a batch size that is a decode bucket
  // (32), so a padded bucket and its rows split alike.
  const int splits = batch <= 32 ? 4 : 2;
  const size_t shared = splits * sizeof(Partial<kGroup, kHeadDim>);
  auto* kernel_function = &DecodeAttentionKernel<T, kHeadDim, kGroup>;
  cudaError_t e = cudaFuncSetAttribute(
      kernel_function, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
  if (e != cudaSuccess) return e;
  return kernel::LaunchClustered(
      /*overlap=*/true, splits, kernel_function, dim3(kv_heads, batch, splits), dim3(kThreads),
      shared, stream, static_cast<const T*>(qkv), static_cast<T*>(k), static_cast<T*>(v), slots,
      positions, positions_by_slot, static_cast<T*>(out), heads, kv_heads, max_context, scale);
}

template <typename T, int kHeadDim>
cudaError_t LaunchForHeadDim(int group, const void* qkv, void* k, void* v, const int64_t* slots,
                             const int64_t* positions, bool positions_by_slot, void* out,
                             int batch, int heads, int kv_heads, int max_context, float scale,
                             cudaStream_t stream) {
#define TANDEM_GROUP(G)                                                                      \
  return LaunchForGroup<T, kHeadDim, G>(qkv, k, v, slots, positions, positions_by_slot, out, \
                                        batch, heads, kv_heads, max_context, scale, stream)
  if (group <= 1) TANDEM_GROUP(1);
  if (group <= 2) TANDEM_GROUP(2);
  if (group <= 4) TANDEM_GROUP(4);
  TANDEM_GROUP(kMaxGroup);
#undef TANDEM_GROUP
}

}  // namespace

bool GroupedDecodeAttentionSupports(int head_dim, int group) {
  return (head_dim == 64 || head_dim == 128) && group >= 1 && group <= kMaxGroup;
}

cudaError_t LaunchGroupedDecodeAttention(KernelDType dtype, const void* qkv, void* k_cache,
                                         void* v_cache, const int64_t* slots,
                                         const int64_t* positions, bool positions_by_slot,
                                         void* out, int batch, int heads, int kv_heads,
                                         int head_dim, int max_context, float scale,
                                         cudaStream_t stream) {
  if (batch <= 0 || kv_heads <= 0 || heads % kv_heads != 0 ||
      !GroupedDecodeAttentionSupports(head_dim, heads / kv_heads)) {
    return cudaErrorInvalidValue;
  }
  return kernel::WithElementType(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    const int group = heads / kv_heads;
    return head_dim == 64
               ? LaunchForHeadDim<T, 64>(group, qkv, k_cache, v_cache, slots, positions,
                                         positions_by_slot, out, batch, heads, kv_heads,
                                         max_context, scale, stream)
               : LaunchForHeadDim<T, 128>(group, qkv, k_cache, v_cache, slots, positions,
                                          positions_by_slot, out, batch, heads, kv_heads,
                                          max_context, scale, stream);
  });
}

}  // namespace tandem
