// Batched projections on Hopper's warp-group tensor cores (see
// LaunchWgmmaLinear). Built for sm_90a only (wgmma).
//
// Above 32 rows the step's projections ran on cuBLAS, whose nvjet GEMMs
// start only after the kernel before them has ended: no programmatic
// dependent launch, and their weights stream after that end
// (docs/results/bench/2026-12-02-h200-cublas-edges/). Here a block of one
// warp group (128 threads) owns a tile of 64 rows x kN output columns over
// one K slice (K / kSplits):
//
// - Before waiting for the previous kernel one thread requests the whole
//   weight tile (kN x the slice, up to ~150 KB) through the tensor memory
//   accelerator (TMA: one bulk copy per 64-wide K block), so the weights
//   stream while that kernel finishes; the block copies its bias.
// - After the wait it requests x's 64 rows the same way, an mbarrier per K
//   block, and runs each block's four wgmma m64nNk16 (N = kN) as soon as it lands.
//   (Earlier versions copied with every thread's 16-byte cp.async: their
//   instruction stream, not memory, bounded them; the results folder.)
// - kSplits > 1: the blocks of a tile's slices form a thread-block cluster;
//   each writes its fp32 partial tile to shared memory and block q adds rank
//   by rank (the same order every run) the partials of its 64 / kSplits rows
//   through distributed shared memory, then the bias and GELU.
//
// Both operands are K-major in shared memory with the 128-byte swizzle
// (wgmma.cuh), which the TMA writes: a tile of R rows is slice / 64 blocks
// of R rows x 128 bytes (64 elements of K); 16-byte column group c of row r
// sits in block c / 8, row r, slot (c % 8) ^ (r % 8).
#include <cooperative_groups.h>
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <type_traits>

#include "core/model/cuda/kernel_math.cuh"
#include "core/model/cuda/mma.cuh"
#include "core/model/cuda/wgmma.cuh"

namespace cg = cooperative_groups;

namespace tandem {
namespace {

constexpr int kThreads = 128;     // one warp group
constexpr int kTileRows = 64;     // wgmma's M
constexpr int kMaxKBlocks = 16;   // 64-wide K blocks of a slice (one mbarrier each)
constexpr int kMaxShared = 227 * 1024;

// The tile shapes there are instantiations of: columns per block, K splits
// (blocks per cluster). ConfigFor picks one per problem.
constexpr WgmmaLinearConfig kConfigs[] = {{24, 1},  {48, 2},  {72, 1},  {72, 2},
                                          {96, 4},  {96, 8},  {144, 2}, {144, 4},
                                          {192, 2}, {192, 4}, {192, 8}};
constexpr int kConfigCount = sizeof(kConfigs) / sizeof(kConfigs[0]);

// Shared memory of a block: the operands (weights [chunks][kN], x
// [chunks][64]) or, after the multiplies, the fp32 partial tile [64][kN + 4];
// then the bias [kN] as float.
__host__ __device__ constexpr size_t OperandBytes(int n, int slice) {
  return static_cast<size_t>(n + kTileRows) * slice * 2;
}
__host__ __device__ constexpr size_t PartialBytes(int n) { return static_cast<size_t>(kTileRows) * (n + 4) * 4; }
// The operands, or the partial tile where it is larger.
__host__ __device__ constexpr size_t BodyBytes(int n, int slice, int splits) {
  const size_t partial = splits > 1 ? PartialBytes(n) : 0;
  return OperandBytes(n, slice) > partial ? OperandBytes(n, slice) : partial;
}
// The body, the bias [kN] as float, the mbarriers (1 + kMaxKBlocks), and
// 1024 bytes to align the body's start. All dynamic: a static __shared__
// array beside the 1024-aligned dynamic one counts 1024 bytes against the
// opt-in limit (the launch attribute then fails).
__host__ __device__ constexpr size_t SharedBytes(int n, int slice, int splits) {
  return BodyBytes(n, slice, splits) + n * 4 + 8 * (1 + kMaxKBlocks) + 1024;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // the device helpers of the sm_90a pass
__device__ __forceinline__ uint32_t SharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// An mbarrier of `count` arrivals (PTX ISA, mbarrier).
__device__ __forceinline__ void BarrierInit(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(SharedAddress(bar)), "r"(count)
               : "memory");
}

// This thread's arrival, announcing `bytes` of asynchronous copies to come.
__device__ __forceinline__ void BarrierExpect(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(SharedAddress(bar)),
               "r"(bytes)
               : "memory");
}

// Until the barrier's phase `phase` has completed (its copies landed).
__device__ __forceinline__ void BarrierWait(uint64_t* bar, uint32_t phase) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@done bra DONE;\n"
      "bra.uni WAIT;\n"
      "DONE:\n}\n" ::"r"(SharedAddress(bar)),
      "r"(phase)
      : "memory");
}

// One box of a 2D tensor map (TMA) at columns c0, rows c1 into shared memory
// (1024-byte aligned for the 128-byte swizzle), completing on `bar`.
__device__ __forceinline__ void LoadBox(void* to, const CUtensorMap* map, int c0, int c1,
                                        uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%2, %3}], [%4];" ::"r"(SharedAddress(to)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(SharedAddress(bar))
      : "memory");
}

template <typename T>
__device__ __forceinline__ float Activate(float v, bool gelu) {
  return gelu ? kernel::GeluTanh(v) : v;
}

#endif

// Grid (N / kN, row tiles, kSplits), clusters of kSplits along z; x [rows,
// K], weight [N, K], bias [N], out [rows, N].
template <typename T, int kN, int kSplits>
__global__ void __launch_bounds__(kThreads, 1)
WgmmaLinearKernel(const __grid_constant__ CUtensorMap x_map,
                  const __grid_constant__ CUtensorMap weight_map, const T* __restrict__ bias,
                  T* __restrict__ out, int rows, int K, int N, bool gelu) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) uint4 shared_raw[];
  // The swizzle pattern repeats every 1024 bytes from a 1024-byte boundary.
  uint4* shared = reinterpret_cast<uint4*>(
      (reinterpret_cast<uintptr_t>(shared_raw) + 1023) & ~static_cast<uintptr_t>(1023));
  const int slice = K / kSplits, chunks = slice / 8;
  uint4* w_tile = shared;                   // kN rows
  uint4* x_tile = shared + chunks * kN;     // 64 rows
  float* bias_tile =
      reinterpret_cast<float*>(reinterpret_cast<char*>(shared) + BodyBytes(kN, slice, kSplits));
  // bars[0]: the weight tile; bars[1 + b]: x's K block b (8-byte aligned:
  // kN is a multiple of 8).
  uint64_t* bars = reinterpret_cast<uint64_t*>(bias_tile + kN);
  const int n0 = blockIdx.x * kN, m0 = blockIdx.y * kTileRows, split = blockIdx.z;
  const int k0 = split * slice, kblocks = slice / 64;
  kernel::AllowNextKernel();
  if (threadIdx.x == 0) {
    for (int i = 0; i <= kblocks; ++i) BarrierInit(&bars[i], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  // The weights and bias are constant: requested before the wait, one TMA
  // box (kN rows x 64 of K) per K block.
  if (threadIdx.x == 0) {
    BarrierExpect(&bars[0], kN * slice * 2);
    for (int b = 0; b < kblocks; ++b) {
      LoadBox(w_tile + b * kN * 8, &weight_map, k0 + 64 * b, n0, &bars[0]);
    }
  }
  for (int i = threadIdx.x; i < kN; i += kThreads) bias_tile[i] = kernel::ToFloat(bias[n0 + i]);
  kernel::WaitForPreviousKernel();  // x comes from the previous kernel
  // x's 64 rows, a box per K block (rows past `rows` come as zeros).
  if (threadIdx.x == 0) {
    for (int b = 0; b < kblocks; ++b) {
      BarrierExpect(&bars[1 + b], kTileRows * 128);
      LoadBox(x_tile + b * kTileRows * 8, &x_map, k0 + 64 * b, m0, &bars[1 + b]);
    }
  }
  // Loops not unrolled: copies of the accumulators along an unrolled loop
  // made ptxas serialize the multiplies (warning C7515).
  float d[kN / 2];  // set by the first multiply (scale_d 0)
  kernel::FenceAccumulators(d);
  kernel::WgmmaFence();
  // The descriptors of step 0. A K block's four k16 steps start 32 bytes
  // apart, and block b R * 128 bytes on (the address field counts 16 bytes).
  const uint64_t a0 = kernel::SwizzledDescriptor(x_tile);
  const uint64_t b0 = kernel::SwizzledDescriptor(w_tile);
  BarrierWait(&bars[0], 0);
#pragma unroll 1
  for (int b = 0; b < kblocks; ++b) {
    BarrierWait(&bars[1 + b], 0);
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      kernel::Wgmma<T, kN>::Run(d, a0 + b * kTileRows * 8 + 2 * s, b0 + b * kN * 8 + 2 * s,
                                b > 0 || s > 0 ? 1 : 0);
    }
  }
  kernel::WgmmaCommit();
  kernel::WgmmaWait<0>();
  kernel::FenceAccumulators(d);
  // Every warp's multiplies have read the operands, and the bias tile (plain
  // stores, which the mbarriers do not order) is visible.
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = 16 * warp + lane / 4, col0 = 2 * (lane % 4);
  if constexpr (kSplits == 1) {
#pragma unroll
    for (int i = 0; i < kN / 8; ++i) {
      const int col = 8 * i + col0;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row0 + 8 * h;
        if (m0 + row >= rows) continue;
        const float v0 = Activate<T>(d[4 * i + 2 * h] + bias_tile[col], gelu);
        const float v1 = Activate<T>(d[4 * i + 2 * h + 1] + bias_tile[col + 1], gelu);
        *reinterpret_cast<uint32_t*>(out + static_cast<size_t>(m0 + row) * N + n0 + col) =
            kernel::PackPair<T>(v0, v1);
      }
    }
  } else {
    constexpr int kStride = kN + 4;  // floats per partial row
    float* partial = reinterpret_cast<float*>(shared);
#pragma unroll
    for (int i = 0; i < kN / 8; ++i) {
      const int col = 8 * i + col0;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        *reinterpret_cast<float2*>(partial + (row0 + 8 * h) * kStride + col) =
            make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
      }
    }
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();  // every block's partial tile is written
    constexpr int kRowsEach = kTileRows / kSplits, kQuads = kN / 4;
    for (int e = threadIdx.x; e < kRowsEach * kQuads; e += kThreads) {
      const int row = split * kRowsEach + e / kQuads, col = (e % kQuads) * 4;
      const float4 sum = kernel::SumInRankOrder<kSplits>(kSplits, [&](int r) {
        return cluster.map_shared_rank(partial, r) + row * kStride + col;
      });
      if (m0 + row >= rows) continue;
      const uint32_t lo = kernel::PackPair<T>(Activate<T>(sum.x + bias_tile[col], gelu),
                                              Activate<T>(sum.y + bias_tile[col + 1], gelu));
      const uint32_t hi = kernel::PackPair<T>(Activate<T>(sum.z + bias_tile[col + 2], gelu),
                                              Activate<T>(sum.w + bias_tile[col + 3], gelu));
      *reinterpret_cast<uint2*>(out + static_cast<size_t>(m0 + row) * N + n0 + col) =
          make_uint2(lo, hi);
    }
    cluster.sync();  // no block exits while another reads its shared memory
  }
#endif
}

bool IsHopper() {
  static const bool hopper = [] {
    int device = 0, major = 0, minor = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    return major == 9 && minor == 0;
  }();
  return hopper;
}

bool Fits(const WgmmaLinearConfig& c, int rows, int K, int N, int max_blocks) {
  if (N % c.columns != 0 || K % (c.splits * 64) != 0) return false;
  const int slice = K / c.splits;
  if (slice / 64 > kMaxKBlocks) return false;
  if (SharedBytes(c.columns, slice, c.splits) > kMaxShared) return false;
  const long blocks = static_cast<long>((rows + kTileRows - 1) / kTileRows) * (N / c.columns) *
                      c.splits;
  return blocks <= max_blocks;
}

// The config with the most blocks within max_blocks; among those the least
// data a block reads after the wait (x's slice) plus reads through
// distributed shared memory (the partial tiles). -1: none fits.
int ConfigWithin(int rows, int K, int N, int max_blocks, int splits) {
  int best = -1;
  long best_blocks = 0, best_cost = 0;
  for (int i = 0; i < kConfigCount; ++i) {
    const WgmmaLinearConfig& c = kConfigs[i];
    if (!Fits(c, rows, K, N, max_blocks) || (splits > 0 && c.splits != splits)) continue;
    const long blocks = static_cast<long>((rows + kTileRows - 1) / kTileRows) *
                        (N / c.columns) * c.splits;
    const long cost = static_cast<long>(kTileRows) * (K / c.splits) * 2 +
                      (c.splits > 1 ? static_cast<long>(kTileRows) * c.columns * 4 : 0);
    if (best < 0 || blocks > best_blocks || (blocks == best_blocks && cost < best_cost)) {
      best = i;
      best_blocks = blocks;
      best_cost = cost;
    }
  }
  return best;
}

// The tile the step runs, the most blocks then the least data after the
// wait; -1 (cuBLAS runs it) where none fits:
// - one K slice (no cluster) in one wave of blocks;
// - where no one-slice tile fits the shape (its K past kMaxKBlocks x 64 or
//   shared memory: GPT-2's fc2, K = 3072), K split over a cluster, in at
//   most half a wave.
// While a shape runs here, a one-slice shape's sums run in the same order
// whatever the batch, and so do fc2's (only 8-way splits fit it); past the
// rows where cuBLAS takes over they differ. In tandem-linear-bench at 64-256 rows
// the split tiles of shapes that fit in one slice lost to cuBLAS, and so did
// the grids of more than one wave and fc2's split grids of a whole wave;
// fc2's in half a wave took GPT-2 small N=64 477 -> 448 us per step, N=128
// 655 -> 641 (docs/results/bench/2026-12-03-h200-wgmma-tma/).
int ConfigFor(int rows, int K, int N, int max_blocks) {
  bool one_slice = false;
  for (const WgmmaLinearConfig& c : kConfigs) {
    one_slice = one_slice || (c.splits == 1 && Fits(c, 1, K, N, /*max_blocks=*/1 << 30));
  }
  if (one_slice) return ConfigWithin(rows, K, N, max_blocks, /*splits=*/1);
  return ConfigWithin(rows, K, N, max_blocks / 2, /*splits=*/0);
}

using EncodeTiled = PFN_cuTensorMapEncodeTiled_v12000;

// cuTensorMapEncodeTiled, through the runtime (no link to the driver
// library); null where the driver lacks it.
EncodeTiled Encoder() {
  static const EncodeTiled encode = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000,
                                         cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();  // not this thread's next launch's error
      return static_cast<EncodeTiled>(nullptr);
    }
    return reinterpret_cast<EncodeTiled>(function);
  }();
  return encode;
}

// A TMA map of a row-major [rows, K] matrix of T: boxes of box_rows rows x
// 64 of K, 128-byte swizzle, rows past `rows` read as zeros.
template <typename T>
bool EncodeRows(CUtensorMap* map, const void* base, int rows, int K, int box_rows) {
  const EncodeTiled encode = Encoder();
  if (encode == nullptr) return false;
  const CUtensorMapDataType type = std::is_same_v<T, __half> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                             : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(K), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(K) * sizeof(T)};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t steps[2] = {1, 1};
  return encode(map, type, 2, const_cast<void*>(base), dims, strides, box, steps,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <typename T, int kN, int kSplits>
cudaError_t LaunchConfig(bool gelu, const void* x, const void* weight, const void* bias,
                         void* out, int rows, int K, int N, cudaStream_t stream) {
  const size_t shared = SharedBytes(kN, K / kSplits, kSplits);
  static const cudaError_t allowed =
      cudaFuncSetAttribute(WgmmaLinearKernel<T, kN, kSplits>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxShared);
  if (allowed != cudaSuccess) return allowed;
  CUtensorMap x_map, weight_map;
  if (!EncodeRows<T>(&x_map, x, rows, K, kTileRows) ||
      !EncodeRows<T>(&weight_map, weight, N, K, kN)) {
    return cudaErrorInvalidValue;
  }
  const dim3 grid(N / kN, (rows + kTileRows - 1) / kTileRows, kSplits);
  return kernel::LaunchClustered(/*overlap=*/true, kSplits, WgmmaLinearKernel<T, kN, kSplits>,
                                 grid, dim3(kThreads), shared, stream, x_map, weight_map,
                                 static_cast<const T*>(bias), static_cast<T*>(out), rows, K, N,
                                 gelu);
}

template <typename T, int kIndex = 0>
cudaError_t LaunchIndex(int index, bool gelu, const void* x, const void* weight, const void* bias,
                        void* out, int rows, int K, int N, cudaStream_t stream) {
  if constexpr (kIndex < kConfigCount) {
    if (index == kIndex) {
      return LaunchConfig<T, kConfigs[kIndex].columns, kConfigs[kIndex].splits>(
          gelu, x, weight, bias, out, rows, K, N, stream);
    }
    return LaunchIndex<T, kIndex + 1>(index, gelu, x, weight, bias, out, rows, K, N, stream);
  } else {
    return cudaErrorInvalidValue;
  }
}

int BlocksAllowed(int max_blocks) {
  return max_blocks > 0 ? max_blocks : kernel::MultiprocessorCount();
}

}  // namespace

int WgmmaLinearConfigCount() { return kConfigCount; }
WgmmaLinearConfig WgmmaLinearConfigAt(int index) { return kConfigs[index]; }

bool WgmmaLinearConfigFits(int config, int rows, int K, int N) {
  return config >= 0 && config < kConfigCount && rows >= 1 &&
         Fits(kConfigs[config], rows, K, N, /*max_blocks=*/1 << 30);
}

int WgmmaLinearConfigFor(int rows, int K, int N, int max_blocks) {
  return ConfigFor(rows, K, N, BlocksAllowed(max_blocks));
}

bool WgmmaLinearSupports(KernelDType dtype, int rows, int K, int N, int max_blocks) {
  if (dtype == KernelDType::kFloat32 || rows < 1 || K <= 0 || N <= 0 || !IsHopper() ||
      Encoder() == nullptr) {
    return false;
  }
  return ConfigFor(rows, K, N, BlocksAllowed(max_blocks)) >= 0;
}

cudaError_t LaunchWgmmaLinear(KernelDType dtype, bool gelu, const void* x, const void* weight,
                              const void* bias, void* out, int rows, int K, int N, int max_blocks,
                              cudaStream_t stream, int config) {
  if (dtype == KernelDType::kFloat32 || rows < 1 || K <= 0 || N <= 0 || !IsHopper()) {
    return cudaErrorInvalidValue;
  }
  if (config < 0) config = ConfigFor(rows, K, N, BlocksAllowed(max_blocks));
  if (config < 0 || config >= kConfigCount ||
      !Fits(kConfigs[config], rows, K, N, /*max_blocks=*/1 << 30)) {
    return cudaErrorInvalidValue;
  }
  auto typed = [&](auto type) -> cudaError_t {
    using T = typename decltype(type)::type;
    if constexpr (std::is_same_v<T, float>) {
      return cudaErrorInvalidValue;
    } else {
      return LaunchIndex<T>(config, gelu, x, weight, bias, out, rows, K, N, stream);
    }
  };
  return kernel::WithElementType(dtype, typed);
}

}  // namespace tandem
