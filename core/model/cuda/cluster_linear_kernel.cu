// Projections of up to 64 rows with the LayerNorm before them or the
// residual add after them folded in (see LaunchClusterLinear).
//
// Above two rows GPT-2's decode step ran each layer as seven or eight
// kernels: two LayerNorms (each fused with the residual add before it), four
// projections (the skinny kernel up to 16 rows, else cuBLAS, whose fc2 adds
// a split-K reduce kernel) and the attention. Here one kernel per projection
// does it all, so a layer is five kernels:
//
//   - a block owns kColumns output columns (64 or 128) and one K slice of
//     all the rows; the S blocks of a column group (S = 1-8, one per slice)
//     form a thread-block cluster;
//   - before waiting for the previous kernel (programmatic dependent
//     launch) the block copies its weight tile [kColumns, slice] into shared
//     memory with cp.async: the weights stream while that kernel ends;
//   - after the wait it copies x's rows over its slice (zeros past `rows`);
//   - kNorm: each block takes its slice's per-row mean and sum of squared
//     deviations, the cluster exchanges them through distributed shared
//     memory and merges them in one step in a fixed order (Chan et al.'s
//     formula for equal counts: no E[x^2] - E[x]^2 cancellation, the same
//     result in every block), and the block normalizes its slice in place,
//     rounded to T as ATen's layer_norm output is;
//   - 8 warps (2 row halves x 4 column quarters) multiply with mma.sync
//     m16n8k16, fragments read by ldmatrix (shared rows padded by 16 bytes:
//     the 8 row addresses of a matrix fall in 8 different bank groups);
//   - the blocks' fp32 partial sums (in shared memory, from its start: over
//     the tiles the multiply no longer reads, and past them where the sums
//     are larger) are added by the cluster in a fixed order,
//     each block finishing a share of the tile: bias, then GELU or the
//     residual add.
//
// Where it pays (GPT-2 small bf16, H200, 2026-12-02,
// docs/results/bench/2026-12-02-h200-cluster-linear/): decode steps of 4
// and 8 rows, 433 -> 382 and 535 -> 414 us. Not yet at 16-64 rows: Nsight
// Compute times its LayerNorm projections at 64 rows at 11.8-12.7 us and
// the others at 7.5 us, against cuBLAS's 4.2-7.4 us, so the step lost more
// than the LayerNorm and reduce kernels it saves (64 rows 687 vs 603 us).
#include <cooperative_groups.h>

#include <cstdint>
#include <type_traits>

#include "core/model/cuda/kernel_math.cuh"
#include "core/model/cuda/mma.cuh"

namespace cg = cooperative_groups;

namespace tandem {
namespace {

constexpr int kThreads = 256;           // 8 warps
constexpr int kRowWarps = 2;            // each takes 32 rows (two 16-row mma tiles)
constexpr int kColumnWarps = 4;         // each takes kColumns / 4 columns
constexpr int kRows = kMaxClusterLinearRows;  // the tile's rows: the whole batch
constexpr int kMaxSplits = 8;           // blocks per cluster (portable cluster size)
constexpr int kPad = 8;                 // elements after each shared row of x and w
constexpr int kPartialPad = 8;          // floats after each row of the partial sums
constexpr int kSharedLimit = 227 * 1024;  // a block's shared memory on sm_90

static_assert(kRows == 32 * kRowWarps, "two 16-row tiles per row warp");

enum Flags : int { kNorm = 1, kGelu = 2, kResidual = 4 };

// Dynamic shared memory for a tile of `columns` and a K slice of `slice`
// (bytes; every part 16-byte aligned): the weight and x tiles (whose space the
// partial sums reuse once the multiply is done), the per-row statistics,
// then the constants copied before the wait with the weights: the
// LayerNorm's weight and bias over the slice and the tile's bias (read from
// global memory after the wait, they were ~0.4 us slower a kernel).
struct SharedLayout {
  size_t stats, norm, bias, bytes;
  __host__ __device__ __forceinline__ SharedLayout(int columns, int slice) {
    const size_t tiles = static_cast<size_t>(columns + kRows) * (slice + kPad) * 2;
    const size_t partial = static_cast<size_t>(kRows) * (columns + kPartialPad) * sizeof(float);
    stats = tiles > partial ? tiles : partial;
    norm = stats + kRows * sizeof(float2);
    bias = norm + static_cast<size_t>(2) * slice * 2;
    bytes = bias + static_cast<size_t>(columns) * 2;
  }
};

size_t SharedBytes(int columns, int slice) { return SharedLayout(columns, slice).bytes; }

// The widest K slice a block of `columns` (64 or 128) takes: its tiles fit in
// shared memory. Found once per width (every launch asks, twice).
int MaxSlice(int columns) {
  auto widest = [](int width) {
    int slice = 16;
    while (SharedBytes(width, slice + 16) <= kSharedLimit) slice += 16;
    return slice;
  };
  static const int for64 = widest(64), for128 = widest(128);
  return columns == 128 ? for128 : for64;
}

// The cluster's blocks, or the block alone when the launch has no cluster (S = 1).
struct Blocks {
  int count;
  __device__ __forceinline__ void Sync() const {
    if (count > 1) {
      cg::this_cluster().sync();
    } else {
      __syncthreads();
    }
  }
  // `p` (in this block's shared memory) in block `rank`'s.
  template <typename P>
  __device__ __forceinline__ P* Of(P* p, int rank) const {
    return count > 1 ? cg::this_cluster().map_shared_rank(p, rank) : p;
  }
};

// Row r's statistics over the K slice the 4 threads t = 4r .. 4r + 3 share:
// {mean, sum of squared deviations}.
template <typename T>
__device__ __forceinline__ float2 SliceStats(const T* row, int slice, int part) {
  float sum = 0.0f;
#pragma unroll 4
  for (int k = part; k < slice; k += 4) sum += kernel::ToFloat(row[k]);
  sum = kernel::QuadSum(sum);
  const float mean = sum / slice;
  float squares = 0.0f;
#pragma unroll 4
  for (int k = part; k < slice; k += 4) {
    const float d = kernel::ToFloat(row[k]) - mean;
    squares += d * d;
  }
  return make_float2(mean, kernel::QuadSum(squares));
}

// kNorm: replaces the block's x tile [kRows, slice] with T(layer_norm(x)
// * weight + bias) over the whole rows, whose other slices the cluster's
// other blocks hold; norm_weight, norm_bias: the slice's (shared memory).
// Every thread of every block of the cluster calls it.
template <typename T>
__device__ void NormalizeSlice(const Blocks& blocks, T* x_tile, int stride, float2* stats,
                               const T* norm_weight, const T* norm_bias, float eps, int slice,
                               int K) {
  const int r = threadIdx.x / 4, part = threadIdx.x % 4;  // 4 threads a row
  T* row = x_tile + r * stride;
  const float2 own = SliceStats(row, slice, part);
  if (part == 0) stats[r] = own;
  blocks.Sync();  // every block's statistics are written
  // Every block's statistics read at once: one round trip through
  // distributed shared memory, not one per block.
  float2 parts[kMaxSplits];
#pragma unroll
  for (int s = 0; s < kMaxSplits; ++s) {
    if (s < blocks.count) parts[s] = blocks.Of(stats, s)[r];
  }
  float mean = 0.0f;
#pragma unroll
  for (int s = 0; s < kMaxSplits; ++s) {
    if (s < blocks.count) mean += parts[s].x;
  }
  mean /= blocks.count;  // equal slices: the mean of the slices' means
  float squares = 0.0f;
#pragma unroll
  for (int s = 0; s < kMaxSplits; ++s) {
    if (s < blocks.count) {
      const float d = parts[s].x - mean;
      squares += parts[s].y + slice * d * d;
    }
  }
  const float rstd = rsqrtf(squares / K + eps);
#pragma unroll 4
  for (int k = part; k < slice; k += 4) {
    const float gamma = kernel::ToFloat(norm_weight[k]);
    const float beta = kernel::ToFloat(norm_bias[k]);
    row[k] = kernel::FromFloat<T>((kernel::ToFloat(row[k]) - mean) * rstd * gamma + beta);
  }
  __syncthreads();
}

// The output of one column from its summed dot product (see LinearEpilogue);
// `residual` is read with kResidual only.
template <typename T, int kFlags>
__device__ __forceinline__ T Finish(float acc, float bias, T residual) {
  float v = acc + bias;
  if constexpr ((kFlags & kGelu) != 0) v = kernel::GeluTanh(v);
  if constexpr ((kFlags & kResidual) != 0) v = kernel::ToFloat(residual) + kernel::Round<T>(v);
  return kernel::FromFloat<T>(v);
}

// x [rows, K], w [N, K], bias [N], out [rows, N] (with kResidual also the
// residual it adds to, in place); norm_weight / norm_bias [K] with kNorm.
// Grid (N / kColumns, 1, S), clusters of S along z; block z takes K's slice
// [z * K / S, (z + 1) * K / S).
template <typename T, int kColumns, int kFlags>
__global__ void __launch_bounds__(kThreads, 2)
ClusterLinearKernel(const T* x, const T* __restrict__ norm_weight,
                    const T* __restrict__ norm_bias, float eps, const T* __restrict__ w,
                    const T* __restrict__ bias, T* out, int rows, int K, int N) {
  constexpr int kWarpColumns = kColumns / kColumnWarps;  // 32 or 16
  constexpr int kPairs = kWarpColumns / 16;               // ldmatrix.x4 of B per k step
  extern __shared__ __align__(16) unsigned char shared[];
  const int splits = static_cast<int>(gridDim.z), split = static_cast<int>(blockIdx.z);
  const Blocks blocks{splits};
  const int slice = K / splits, stride = slice + kPad, vectors = slice / 8;
  const int n0 = static_cast<int>(blockIdx.x) * kColumns, k0 = split * slice;
  T* w_tile = reinterpret_cast<T*>(shared);     // [kColumns][stride]
  T* x_tile = w_tile + kColumns * stride;       // [kRows][stride]
  float* partial = reinterpret_cast<float*>(shared);  // [kRows][kColumns + pad], after the multiply
  const SharedLayout layout(kColumns, slice);
  float2* stats = reinterpret_cast<float2*>(shared + layout.stats);     // [kRows]
  T* norm_tile = reinterpret_cast<T*>(shared + layout.norm);            // [2][slice]
  T* bias_tile = reinterpret_cast<T*>(shared + layout.bias);            // [kColumns]
  // The weights and the other constants, copied before the previous kernel ends.
  for (int i = threadIdx.x; i < kColumns * vectors; i += kThreads) {
    const int c = i / vectors, v = (i % vectors) * 8;
    kernel::CopyAsync16(w_tile + c * stride + v, w + static_cast<size_t>(n0 + c) * K + k0 + v,
                        true);
  }
  if (threadIdx.x < kColumns / 8) {
    kernel::CopyAsync16(bias_tile + 8 * threadIdx.x, bias + n0 + 8 * threadIdx.x, true);
  }
  if constexpr ((kFlags & kNorm) != 0) {
    for (int i = threadIdx.x; i < 2 * vectors; i += kThreads) {
      const int half = i / vectors, v = (i % vectors) * 8;
      kernel::CopyAsync16(norm_tile + half * slice + v,
                          (half == 0 ? norm_weight : norm_bias) + k0 + v, true);
    }
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
  kernel::AllowNextKernel();
  kernel::WaitForPreviousKernel();
  // The epilogue's 4-column groups: block z finishes e = z * kThreads + i,
  // stepping by S * kThreads. With kResidual the first group's residual is
  // read now, so that its round trip overlaps the multiply.
  constexpr int kGroups = kColumns / 4;
  const int first = split * kThreads + threadIdx.x;
  uint2 first_residual = make_uint2(0u, 0u);
  if constexpr ((kFlags & kResidual) != 0) {
    if (first < rows * kGroups) {
      first_residual = *reinterpret_cast<const uint2*>(
          out + static_cast<size_t>(first / kGroups) * N + n0 + (first % kGroups) * 4);
    }
  }
  for (int i = threadIdx.x; i < kRows * vectors; i += kThreads) {
    const int r = i / vectors, v = (i % vectors) * 8;
    const bool real = r < rows;
    kernel::CopyAsync16(x_tile + r * stride + v,
                        x + static_cast<size_t>(real ? r : 0) * K + k0 + v, real);
  }
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  if constexpr ((kFlags & kNorm) != 0) {
    NormalizeSlice(blocks, x_tile, stride, stats, norm_tile, norm_tile + slice, eps, slice, K);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row_warp = warp / kColumnWarps, column_warp = warp % kColumnWarps;
  float acc[2][2 * kPairs][4] = {};
  // ldmatrix row addresses: A (x) tile m rows 16m + lane % 16, k + 8 (lane / 16);
  // B (w) pair p rows 16p + lane % 8 + 8 (lane / 16), k + 8 ((lane / 8) % 2).
  const T* a_base = x_tile + (32 * row_warp + lane % 16) * stride + 8 * (lane / 16);
  const T* b_base = w_tile + (column_warp * kWarpColumns + lane % 8 + 8 * (lane / 16)) * stride +
                    8 * ((lane / 8) % 2);
  const int tiles = rows > 32 * row_warp + 16 ? 2 : (rows > 32 * row_warp ? 1 : 0);
  if (tiles > 0) {
#pragma unroll 2
    for (int k = 0; k < slice; k += 16) {
      uint32_t a[2][4], b[kPairs][4];
#pragma unroll
      for (int m = 0; m < 2; ++m) {
        if (m < tiles) kernel::LoadMatrices<false>(a[m], a_base + 16 * m * stride + k);
      }
#pragma unroll
      for (int p = 0; p < kPairs; ++p) {
        kernel::LoadMatrices<false>(b[p], b_base + 16 * p * stride + k);
      }
#pragma unroll
      for (int m = 0; m < 2; ++m) {
        if (m >= tiles) continue;
#pragma unroll
        for (int p = 0; p < kPairs; ++p) {
          kernel::Mma<T>(acc[m][2 * p], a[m], b[p][0], b[p][1]);
          kernel::Mma<T>(acc[m][2 * p + 1], a[m], b[p][2], b[p][3]);
        }
      }
    }
  }
  __syncthreads();  // the multiply is done with the tiles the partial sums overwrite
  // Fragment (m, j): rows 32 row_warp + 16 m + g (+ 8), columns 8 j + 2q (+ 1).
  constexpr int kPartialStride = kColumns + kPartialPad;
  const int g = lane / 4, q = lane % 4;
#pragma unroll
  for (int m = 0; m < 2; ++m) {
#pragma unroll
    for (int j = 0; j < 2 * kPairs; ++j) {
      const int r = 32 * row_warp + 16 * m + g, c = column_warp * kWarpColumns + 8 * j + 2 * q;
      *reinterpret_cast<float2*>(partial + r * kPartialStride + c) =
          make_float2(acc[m][j][0], acc[m][j][1]);
      *reinterpret_cast<float2*>(partial + (r + 8) * kPartialStride + c) =
          make_float2(acc[m][j][2], acc[m][j][3]);
    }
  }
  blocks.Sync();  // every block's partial sums are written
  for (int e = first; e < rows * kGroups; e += splits * kThreads) {
    const int r = e / kGroups, c = (e % kGroups) * 4;
    const float4 sum = kernel::SumInRankOrder<kMaxSplits>(
        splits, [&](int s) { return blocks.Of(partial, s) + r * kPartialStride + c; });
    const int n = n0 + c;
    T* o = out + static_cast<size_t>(r) * N + n;
    alignas(8) T result[4];
    alignas(8) T residual[4];
    *reinterpret_cast<uint2*>(residual) =
        (kFlags & kResidual) == 0 ? make_uint2(0u, 0u)
        : e == first              ? first_residual
                                  : *reinterpret_cast<const uint2*>(o);
    const float sums[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      result[i] = Finish<T, kFlags>(sums[i], kernel::ToFloat(bias_tile[c + i]), residual[i]);
    }
    *reinterpret_cast<uint2*>(o) = *reinterpret_cast<const uint2*>(result);
  }
  blocks.Sync();  // no block exits while another reads its shared memory
}

// A projection's launch shape: tile columns and K splits.
struct Shape {
  int columns = 0;  // 0: not supported
  int splits = 0;
};

// K split 8 ways where the slices stay whole 16-element mma steps (else 4,
// 2, 1); 128-column tiles where that still gives a block per
// multiprocessor and the tile fits, else 64.
Shape ShapeFor(int K, int N) {
  Shape shape;
  int splits = kMaxSplits;
  while (splits > 1 && K % (16 * splits) != 0) splits /= 2;
  if (K <= 0 || N <= 0 || K % (16 * splits) != 0) return shape;
  const int slice = K / splits;
  if (N % 128 == 0 && (N / 128) * splits >= kernel::MultiprocessorCount() &&
      slice <= MaxSlice(128)) {
    shape.columns = 128;
  } else if (N % 64 == 0 && slice <= MaxSlice(64)) {
    shape.columns = 64;
  } else {
    return shape;
  }
  shape.splits = splits;
  return shape;
}

// The shared-memory attribute and MultiprocessorCount are taken once per
// process, on the device current then (as in the skinny kernel): one GPU.
template <typename T, int kColumns, int kFlags>
cudaError_t LaunchKernel(const Shape& shape, const void* x, const void* norm_weight,
                         const void* norm_bias, float eps, const void* weight, const void* bias,
                         void* out, int rows, int K, int N, cudaStream_t stream) {
  auto* function = ClusterLinearKernel<T, kColumns, kFlags>;
  // The most dynamic shared memory any slice of this tile width needs, allowed once.
  static const cudaError_t allowed = cudaFuncSetAttribute(
      function, cudaFuncAttributeMaxDynamicSharedMemorySize,
      static_cast<int>(SharedBytes(kColumns, MaxSlice(kColumns))));
  if (allowed != cudaSuccess) return allowed;
  const dim3 grid(N / kColumns, 1, shape.splits);
  return kernel::LaunchClustered(
      /*overlap=*/true, shape.splits, function, grid, dim3(kThreads),
      SharedBytes(kColumns, K / shape.splits), stream, static_cast<const T*>(x),
      static_cast<const T*>(norm_weight), static_cast<const T*>(norm_bias), eps,
      static_cast<const T*>(weight), static_cast<const T*>(bias), static_cast<T*>(out), rows, K,
      N);
}

template <typename T, int kFlags>
cudaError_t LaunchColumns(const Shape& shape, const void* x, const void* norm_weight,
                          const void* norm_bias, float eps, const void* weight,
                          const void* bias, void* out, int rows, int K, int N,
                          cudaStream_t stream) {
  return shape.columns == 128
             ? LaunchKernel<T, 128, kFlags>(shape, x, norm_weight, norm_bias, eps, weight, bias,
                                            out, rows, K, N, stream)
             : LaunchKernel<T, 64, kFlags>(shape, x, norm_weight, norm_bias, eps, weight, bias,
                                           out, rows, K, N, stream);
}

// What ClusterLinearSupports asks besides the shape.
bool SupportsRowsOf(KernelDType dtype, LinearEpilogue epilogue, int rows) {
  return dtype != KernelDType::kFloat32 && rows >= 1 && rows <= kMaxClusterLinearRows &&
         epilogue != LinearEpilogue::kSwiGlu;
}

}  // namespace

bool ClusterLinearSupports(KernelDType dtype, LinearEpilogue epilogue, int rows, int K, int N) {
  return SupportsRowsOf(dtype, epilogue, rows) && ShapeFor(K, N).columns != 0;
}

cudaError_t LaunchClusterLinear(KernelDType dtype, LinearEpilogue epilogue, const void* x,
                                const void* norm_weight, const void* norm_bias, float eps,
                                const void* weight, const void* bias, void* out, int rows,
                                int K, int N, cudaStream_t stream) {
  // ClusterLinearSupports, with the shape found once.
  if (!SupportsRowsOf(dtype, epilogue, rows)) return cudaErrorInvalidValue;
  const Shape shape = ShapeFor(K, N);
  if (shape.columns == 0) return cudaErrorInvalidValue;
  // The LayerNorm takes both pointers (LaunchFusedLinear's rule); one alone is an error.
  const bool norm = norm_weight != nullptr && norm_bias != nullptr;
  if ((norm_weight != nullptr) != (norm_bias != nullptr)) return cudaErrorInvalidValue;
  if (norm && epilogue == LinearEpilogue::kBiasResidual) return cudaErrorInvalidValue;
  auto typed = [&](auto type) -> cudaError_t {
    using T = typename decltype(type)::type;
    if constexpr (std::is_same_v<T, float>) {
      return cudaErrorInvalidValue;
    } else {
      auto launch = [&](auto flags) {
        return LaunchColumns<T, decltype(flags)::value>(shape, x, norm_weight, norm_bias, eps,
                                                        weight, bias, out, rows, K, N, stream);
      };
      switch (epilogue) {
        case LinearEpilogue::kBias:
          return norm ? launch(std::integral_constant<int, kNorm>{})
                      : launch(std::integral_constant<int, 0>{});
        case LinearEpilogue::kBiasGelu:
          return norm ? launch(std::integral_constant<int, kNorm | kGelu>{})
                      : launch(std::integral_constant<int, kGelu>{});
        case LinearEpilogue::kBiasResidual:
          return launch(std::integral_constant<int, kResidual>{});
        default:
          return cudaErrorInvalidValue;
      }
    }
  };
  return kernel::WithElementType(dtype, typed);
}

}  // namespace tandem
