// Projections of a few dozen rows on tensor cores (see LaunchSkinnyLinear).
//
// At 64 rows a decode projection reads 1-5 MB of weights and does little
// math, so cuBLAS's GEMMs (5-6 us each, a split-K reduce kernel besides)
// are bound by their own latency. Here a block of 16 warps owns 32 output
// columns (8 per column warp, one mma n-tile) and one K slice, which its 4
// K-warps share (summed through shared memory); 16 warps hide each
// other's latency (with 4 warps per block, up to 64 rows took 9.5 us where
// cuBLAS takes 5.5). The launch bound allows two blocks per multiprocessor
// (64 registers; the 1- and 2-tile instantiations, up to 32 rows, do not
// spill), but the grid covers only half the GPU (SplitsFor, 72-96 blocks
// for GPT-2 small on an H200), so in the two-halves step the other half's
// chain finds room beside it. Each thread loads all of its
// weights into registers (and the block its tile's bias into shared memory)
// before waiting for the previous kernel
// (programmatic dependent launch), so the weight stream overlaps that
// kernel's tail. After the wait the block copies x's rows over its K slice
// into shared memory in one round of asynchronous copies (read straight into
// fragments chunk by chunk, x cost an L2 round trip per chunk), then
// multiplies. A K split over S blocks is reduced through the cluster's
// distributed shared memory (the S blocks of a column group form one
// cluster), so there is no second kernel.
//
// mma.sync m16n8k16 with a permuted K: a k-step's 16 fragment slots (thread
// t of a quad holds slots 2t, 2t+1, 2t+8, 2t+9) take the actual k's
// 8t..8t+3 (step 0) and 8t+4..8t+7 (step 1) of a 32-wide chunk, the same
// for A (x) and B (weights), so a thread reads 16 contiguous bytes of a
// weight row and of each x row per chunk. A dot product does not depend on
// the order of its terms, only on the rounding of the fp32 accumulation.
#include <cooperative_groups.h>

#include <cstdint>
#include <type_traits>

#include "core/model/cuda/kernel_math.cuh"
#include "core/model/cuda/mma.cuh"

namespace cg = cooperative_groups;

namespace tandem {
namespace {

constexpr int kColumnWarps = 4;                  // 8 output columns each
constexpr int kKWarps = 4;                       // warps sharing a column group's K slice
constexpr int kThreads = 32 * kColumnWarps * kKWarps;
constexpr int kColumns = 8 * kColumnWarps;       // output columns per block
constexpr int kMaxWarpChunks = 6;                // 32-wide K chunks of weights a warp holds
constexpr int kMaxChunks = kKWarps * kMaxWarpChunks;  // per block
constexpr int kMaxSplits = 8;                    // blocks per cluster (portable size)
constexpr int kMaxRows = kMaxSkinnyRows;

using kernel::Mma;

// bias: the block's column's bias as float (shared memory, read before the wait).
template <typename T, bool kGelu>
__device__ __forceinline__ T Finish(float acc, float bias) {
  float v = acc + bias;
  if constexpr (kGelu) v = kernel::GeluTanh(v);
  return kernel::FromFloat<T>(v);
}

// Dynamic shared memory: x's tiles over a K slice of `chunks` chunks. A row
// is XStride elements: rows start 64 bytes apart modulo 128, so the 8 lanes
// of a 16-byte load phase (fragment rows g, g + 1; 16 bytes at 16 t) hit 8
// different 16-byte bank groups (rows 16 bytes apart, as before, put row g,
// t + 1 on row g + 1, t's banks: Nsight Compute counted 54 % of the
// kernel's shared wavefronts excessive).
__host__ __device__ constexpr int XStride(int chunks) {
  return chunks * 32 + (chunks % 2 == 0 ? 32 : 0);
}
// Then the tile's bias as floats (read before the wait).
template <typename T>
__host__ __device__ constexpr size_t TileBytes(int tiles, int chunks) {
  return static_cast<size_t>(tiles) * 16 * XStride(chunks) * sizeof(T);
}
template <typename T>
size_t SharedBytes(int tiles, int chunks) {
  return TileBytes<T>(tiles, chunks) + kColumns * sizeof(float);
}

// x [rows, K], w [N, K], bias [N], out [rows, N]; grid (N / kColumns, 1, S),
// clusters of S along z; block z takes K's slice [z * chunks * 32, ...), its
// chunk c going to K-warp c % kKWarps. kTiles: 16-row tiles (rows <= 16 *
// kTiles).
template <typename T, int kTiles, bool kGelu>
__global__ void __launch_bounds__(kThreads, 2)
SkinnyLinearKernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                   T* __restrict__ out, int rows, int K, int N, int chunks) {
  // Per K-warp; rows padded to kPartialStride floats so a warp's float2
  // stores (rows g, columns 2t) fill 16 distinct 8-byte bank pairs per phase.
  constexpr int kPartialStride = kColumns + 8;
  __shared__ __align__(16) float partial[kKWarps][kTiles * 16][kPartialStride];
  __shared__ __align__(16) float sums[kTiles * 16][kColumns];              // the block's
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int column_warp = warp % kColumnWarps, k_warp = warp / kColumnWarps;
  const int column = blockIdx.x * kColumns + column_warp * 8;  // the warp's first column
  const int split = blockIdx.z, splits = gridDim.z;
  const int width = chunks * 32;  // the block's K slice
  // The weights first: constant, so read before the previous kernel ends.
  // Chunk j of this warp is the slice's chunk k_warp + kKWarps * j.
  uint4 weights[kMaxWarpChunks];
  const T* w_row = w + static_cast<size_t>(column + g) * K + split * width + 8 * t;
#pragma unroll
  for (int j = 0; j < kMaxWarpChunks; ++j) {
    const int c = k_warp + kKWarps * j;
    if (c < chunks) weights[j] = kernel::LoadRaw(w_row + 32 * c);
  }
  // The tile's bias too (constant), for the epilogue, after x's tile in
  // dynamic shared memory; visible to every thread after the barrier that
  // follows the multiply.
  extern __shared__ __align__(16) unsigned char x_bytes[];
  float* const tile_bias = reinterpret_cast<float*>(x_bytes + TileBytes<T>(kTiles, chunks));
  if (threadIdx.x < kColumns) {
    tile_bias[threadIdx.x] = kernel::ToFloat(bias[blockIdx.x * kColumns + threadIdx.x]);
  }
  kernel::AllowNextKernel();
  kernel::WaitForPreviousKernel();
  // x's rows over the slice, into shared memory in one round of
  // asynchronous copies (rows past `rows` zero-filled).
  T* x_tile = reinterpret_cast<T*>(x_bytes);
  const int stride = XStride(chunks), vectors = width / 8;
  for (int i = threadIdx.x; i < kTiles * 16 * vectors; i += kThreads) {
    const int r = i / vectors, k = (i % vectors) * 8;
    const bool real = r < rows;
    const T* src = x + static_cast<size_t>(real ? r : 0) * K + split * width + k;
    kernel::CopyAsync16(x_tile + r * stride + k, src, real);
  }
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  float acc[kTiles][4];
#pragma unroll
  for (int m = 0; m < kTiles; ++m) acc[m][0] = acc[m][1] = acc[m][2] = acc[m][3] = 0.0f;
#pragma unroll
  for (int j = 0; j < kMaxWarpChunks; ++j) {
    const int c = k_warp + kKWarps * j;
    if (c < chunks) {
      const int k = 32 * c + 8 * t;
#pragma unroll
      for (int m = 0; m < kTiles; ++m) {
        const int r0 = m * 16 + g;
        const uint4 a0 = *reinterpret_cast<const uint4*>(x_tile + r0 * stride + k);
        const uint4 a1 = *reinterpret_cast<const uint4*>(x_tile + (r0 + 8) * stride + k);
        Mma<T>(acc[m], a0.x, a1.x, a0.y, a1.y, weights[j].x, weights[j].y);
        Mma<T>(acc[m], a0.z, a1.z, a0.w, a1.w, weights[j].z, weights[j].w);
      }
    }
  }
  // Fragment: acc[m][0..1] at (row 16m + g, columns 2t, 2t + 1 of the
  // warp's 8), acc[m][2..3] at row 16m + g + 8.
  const int col = column_warp * 8 + 2 * t;
#pragma unroll
  for (int m = 0; m < kTiles; ++m) {
    *reinterpret_cast<float2*>(&partial[k_warp][m * 16 + g][col]) = make_float2(acc[m][0], acc[m][1]);
    *reinterpret_cast<float2*>(&partial[k_warp][m * 16 + g + 8][col]) =
        make_float2(acc[m][2], acc[m][3]);
  }
  __syncthreads();
  // The K-warps' sums, one element per thread and pass.
  for (int e = threadIdx.x; e < rows * kColumns; e += kThreads) {
    const int r = e / kColumns, c = e % kColumns;
    float sum = 0.0f;
#pragma unroll
    for (int kw = 0; kw < kKWarps; ++kw) sum += partial[kw][r][c];
    if (splits == 1) {
      const int n = blockIdx.x * kColumns + c;
      out[static_cast<size_t>(r) * N + n] = Finish<T, kGelu>(sum, tile_bias[c]);
    } else {
      sums[r][c] = sum;
    }
  }
  if (splits == 1) return;
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every block's sums are written
  // Block z finishes 4-column groups z * kThreads + i, stepping by S *
  // kThreads (rows interleaved over the cluster), every block's sums added
  // in rank order.
  constexpr int kGroups = kColumns / 4;
  for (int e = split * kThreads + threadIdx.x; e < rows * kGroups; e += splits * kThreads) {
    const int r = e / kGroups, c = (e % kGroups) * 4;
    const float4 sum = kernel::SumInRankOrder<kMaxSplits>(
        splits, [&](int s) { return cluster.map_shared_rank(&sums[r][c], s); });
    const int n = blockIdx.x * kColumns + c;
    T* o = out + static_cast<size_t>(r) * N + n;
    o[0] = Finish<T, kGelu>(sum.x, tile_bias[c]);
    o[1] = Finish<T, kGelu>(sum.y, tile_bias[c + 1]);
    o[2] = Finish<T, kGelu>(sum.z, tile_bias[c + 2]);
    o[3] = Finish<T, kGelu>(sum.w, tile_bias[c + 3]);
  }
  cluster.sync();  // no block exits while another reads its shared memory
}

// Splits of K: as few as keep a block's weights within kMaxChunks and give
// at least one block per two multiprocessors. Half the GPU because the
// two-halves step runs two such kernels side by side (cuBLAS's GEMMs at 32
// rows use 48-96 blocks): with 16 chunks and a block per multiprocessor
// (144-192 blocks, launched early and waiting there) the other half's
// kernels found no room and 32-row halves were slower than cuBLAS (GPT-2
// small bf16, H200: N=64 608 vs 588 us; half the GPU: 556,
// docs/results/bench/2026-12-02-h200-skinny-banks/).
int SplitsFor(int K, int N) {
  const int column_blocks = N / kColumns;
  const int target = kernel::MultiprocessorCount() / 2;
  int splits = 1;
  while (splits < kMaxSplits && K % (64 * splits) == 0 &&
         (K / (32 * splits) > kMaxChunks || column_blocks * splits < target)) {
    splits *= 2;
  }
  return splits;
}

// One instantiation's launch; allows it the most dynamic shared memory it
// can need (above the default 48 KB) on first use.
template <typename T, int kTiles, bool kGelu>
cudaError_t LaunchKernel(dim3 grid, int splits, size_t shared, cudaStream_t stream,
                         const void* x, const void* weight, const void* bias, void* out,
                         int rows, int K, int N, int chunks) {
  static const cudaError_t allowed =
      cudaFuncSetAttribute(SkinnyLinearKernel<T, kTiles, kGelu>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(SharedBytes<T>(kTiles, kMaxChunks)));
  if (allowed != cudaSuccess) return allowed;
  return kernel::LaunchClustered(/*overlap=*/true, splits, SkinnyLinearKernel<T, kTiles, kGelu>,
                                 grid, dim3(kThreads), shared, stream, static_cast<const T*>(x),
                                 static_cast<const T*>(weight), static_cast<const T*>(bias),
                                 static_cast<T*>(out), rows, K, N, chunks);
}

template <typename T, bool kGelu>
cudaError_t LaunchTiles(const void* x, const void* weight, const void* bias, void* out, int rows,
                        int K, int N, cudaStream_t stream) {
  const int splits = SplitsFor(K, N);
  const int chunks = K / (32 * splits);
  if (K % (32 * splits) != 0 || chunks > kMaxChunks) return cudaErrorInvalidValue;
  const dim3 grid(N / kColumns, 1, splits);
  const int tiles = (rows + 15) / 16;
  const size_t shared = SharedBytes<T>(tiles, chunks);
  // One instantiation per 16-row tile count (kMaxRows / 16 = 4).
  static_assert(kMaxRows == 64, "one launcher per tile count");
  constexpr decltype(&LaunchKernel<T, 1, kGelu>) kByTiles[] = {
      LaunchKernel<T, 1, kGelu>, LaunchKernel<T, 2, kGelu>, LaunchKernel<T, 3, kGelu>,
      LaunchKernel<T, 4, kGelu>};
  if (tiles < 1 || tiles > 4) return cudaErrorInvalidValue;
  return kByTiles[tiles - 1](grid, splits, shared, stream, x, weight, bias, out, rows, K, N,
                             chunks);
}

}  // namespace

bool SkinnyLinearSupports(KernelDType dtype, int rows, int K, int N) {
  if (dtype == KernelDType::kFloat32 || rows < 1 || rows > kMaxRows) return false;
  if (K <= 0 || N <= 0 || K % 32 != 0 || N % kColumns != 0) return false;
  const int splits = SplitsFor(K, N);
  return K % (32 * splits) == 0 && K / (32 * splits) <= kMaxChunks;
}

cudaError_t LaunchSkinnyLinear(KernelDType dtype, bool gelu, const void* x, const void* weight,
                               const void* bias, void* out, int rows, int K, int N,
                               cudaStream_t stream) {
  if (!SkinnyLinearSupports(dtype, rows, K, N)) return cudaErrorInvalidValue;
  auto typed = [&](auto type) -> cudaError_t {
    using T = typename decltype(type)::type;
    if constexpr (std::is_same_v<T, float>) {
      return cudaErrorInvalidValue;
    } else {
      return gelu ? LaunchTiles<T, true>(x, weight, bias, out, rows, K, N, stream)
                  : LaunchTiles<T, false>(x, weight, bias, out, rows, K, N, stream);
    }
  };
  return kernel::WithElementType(dtype, typed);
}

}  // namespace tandem
