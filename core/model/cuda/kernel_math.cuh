// Device helpers shared by the decode kernels: conversions between the
// activation type T (float, __half, __nv_bfloat16) and float, 16-byte vector
// loads, warp reductions, rank-ordered partial sums and launches. Included by
// .cu files only.
#ifndef TANDEM_CORE_CUDA_KERNEL_MATH_CUH_
#define TANDEM_CORE_CUDA_KERNEL_MATH_CUH_

#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "core/model/cuda/decode_kernels.h"

namespace tandem {
namespace kernel {

template <typename T>
struct ElementType {
  using type = T;
};

// Calls launch(ElementType<T>{}) with T the element type `dtype` names.
template <typename Launch>
cudaError_t WithElementType(KernelDType dtype, Launch&& launch) {
  switch (dtype) {
    case KernelDType::kFloat32: return launch(ElementType<float>{});
    case KernelDType::kFloat16: return launch(ElementType<__half>{});
    case KernelDType::kBFloat16: return launch(ElementType<__nv_bfloat16>{});
  }
  return cudaErrorInvalidValue;
}

__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ float ToFloat(__half x) { return __half2float(x); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T FromFloat(float x);
template <>
__device__ __forceinline__ float FromFloat<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half FromFloat<__half>(float x) { return __float2half(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}

// GPT-2's gelu_new (the tanh approximation), in float.
__device__ __forceinline__ float GeluTanh(float x) {
  const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

// x rounded to T's precision (where ATen would store an intermediate as T).
template <typename T>
__device__ __forceinline__ float Round(float x) { return ToFloat(FromFloat<T>(x)); }

// Elements of T in one 16-byte vector.
template <typename T>
struct Vec16 {
  static constexpr int kSize = 16 / sizeof(T);
};

// 16 bytes of T as floats. bf16 by bit operations, one instruction an element
// (its high half masked, its low half shifted; the generic conversion spends
// two on a high half: cuobjdump, 2026-12-02); exact like every conversion here.
template <typename T>
__device__ __forceinline__ void Unpack(const uint4& raw, float (&out)[Vec16<T>::kSize]) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      out[2 * i] = __uint_as_float(words[i] << 16);
      out[2 * i + 1] = __uint_as_float(words[i] & 0xffff0000u);
    }
  } else {
    const T* v = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int i = 0; i < Vec16<T>::kSize; ++i) out[i] = ToFloat(v[i]);
  }
}

// Raw 16-byte read-only load.
template <typename T>
__device__ __forceinline__ uint4 LoadRaw(const T* p) {
  return __ldg(reinterpret_cast<const uint4*>(p));
}

// Loads 16 bytes at p (16-byte aligned, read-only for the kernel's lifetime)
// as floats.
template <typename T>
__device__ __forceinline__ void LoadVec(const T* p, float (&out)[Vec16<T>::kSize]) {
  Unpack<T>(LoadRaw(p), out);
}

// The same for memory the kernel itself may have written (plain load).
template <typename T>
__device__ __forceinline__ void LoadVecCoherent(const T* p, float (&out)[Vec16<T>::kSize]) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  Unpack<T>(raw, out);
}

// log2 e: exp(x) = 2^(x log2 e), for softmaxes kept in log2 units.
constexpr float kLog2e = 1.4426950408889634f;

// 2^x on the multi-function unit (ex2.approx.ftz: ~2 ulp, -inf gives 0,
// subnormal results flush to 0). One instruction, where __expf also scales
// by log2 e and guards the subnormal range (five more).
__device__ __forceinline__ float Exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The least power of 2 at or above n (1 for n <= 1).
constexpr int RoundUpToPowerOf2(int n) { return n <= 1 ? 1 : 2 * RoundUpToPowerOf2((n + 1) / 2); }

// Reduce-scatter of kCount sums over the warp (kCount <= 32): lane l ends
// with the warp's sum of v[WarpScatter<kCount>::ColumnOf(l)], where lanes l
// with l % kStep == 0 hold columns 0, 1, ... Each halving step sends half of
// a lane's values to its xor partner, so each sum takes the pairs of
// WarpSum's butterfly in its order (x + y and y + x are the same float): the
// same bits as WarpSum(v[i]), with kC - 1 + log2(kStep) shuffles instead of
// 5 kCount (3 columns: 6 instead of 15; GPT-2 small N=1 150.4-150.5 ->
// 149.9-150.1 us a step in its projections with the LayerNorm:
// docs/results/bench/2026-12-04-h200-context-cap/call5-shift-scatter-order/).
template <int kCount>
struct WarpScatter {
  static_assert(kCount >= 1 && kCount <= 32, "at most one column a lane");
  static constexpr int kC = RoundUpToPowerOf2(kCount);
  static constexpr int kStep = 32 / kC;  // lanes a column
  __device__ static int ColumnOf(int lane) { return lane / kStep; }
  // Whether `lane` is the first of its column's lanes and the column is real.
  __device__ static bool Writes(int lane) {
    return lane % kStep == 0 && lane / kStep < kCount;
  }
};

template <int kCount>
__device__ __forceinline__ float WarpSumScatter(const float (&v)[kCount]) {
  constexpr int kC = WarpScatter<kCount>::kC;
  float s[kC];
#pragma unroll
  for (int i = 0; i < kC; ++i) s[i] = i < kCount ? v[i] : 0.0f;
  const int lane = threadIdx.x % 32;
  // Values [0, count) of a lane are columns base + [0, count); the lane
  // keeps the upper half where its `offset` bit is set.
#pragma unroll
  for (int count = kC, offset = 16; count > 1; count /= 2, offset /= 2) {
    const bool upper = (lane & offset) != 0;
#pragma unroll
    for (int i = 0; i < count / 2; ++i) {
      const float send = upper ? s[i] : s[i + count / 2];
      const float keep = upper ? s[i + count / 2] : s[i];
      s[i] = keep + __shfl_xor_sync(0xffffffffu, send, offset);
    }
  }
#pragma unroll
  for (int offset = WarpScatter<kCount>::kStep / 2; offset > 0; offset >>= 1) {
    s[0] += __shfl_xor_sync(0xffffffffu, s[0], offset);
  }
  return s[0];
}

__device__ __forceinline__ float WarpMax(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024); every
// thread gets it. Every thread of the block must call it.
__device__ __forceinline__ float BlockSum(float v) {
  __shared__ float partial[32];
  v = WarpSum(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < warps; ++w) total += partial[w];
  __syncthreads();  // partial is reused by the next call
  return total;
}

// Stores kSize floats at p (16-byte aligned) as one 16-byte vector of T.
template <typename T>
__device__ __forceinline__ void StoreVec(T* p, const float (&v)[Vec16<T>::kSize]) {
  alignas(16) T packed[Vec16<T>::kSize];
#pragma unroll
  for (int i = 0; i < Vec16<T>::kSize; ++i) packed[i] = FromFloat<T>(v[i]);
  *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(packed);
}

// Asks L2 to fetch the 128-byte line holding p (a hint: no data moves into
// registers, so it is safe on memory another kernel may still write).
__device__ __forceinline__ void PrefetchL2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

// Programmatic dependent launch (Hopper): a kernel launched with
// LaunchOverlapped may start while the previous kernel in the stream still
// runs, and so may that one: before WaitForPreviousKernel nothing written by
// the chain of overlapped kernels before it is guaranteed visible. So before
// the wait a kernel reads only memory written before the step's first kernel,
// which is launched plainly (see Launch) or starts a CUDA graph: the weights,
// and the step's inputs (slot ids, per-slot state). After the wait,
// everything earlier kernels wrote is visible. AllowNextKernel lets the next
// kernel start early.
//
// The wait stays where the source puts it. In straight-line code ptxas
// schedules griddepcontrol.wait (SASS ACQBULK) among a kernel's first
// instructions, ahead of the read-only weight loads written before it, so the
// weights streamed only after the previous kernel ended (cuobjdump -sass,
// 2026-12-01: GemvKernel, FusedLinearKernel without the norm, LmHeadKernel
// issued no load before the wait). A branch ptxas cannot fold keeps the wait
// in a basic block of its own after those loads: blockDim.x is never 0, so
// the trap never runs (docs/results/bench/2026-12-01-h200-wait-placement/).
__device__ __forceinline__ void WaitForPreviousKernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (blockDim.x == 0u) {
    asm volatile("trap;" ::: "memory");
  } else {
    asm volatile("griddepcontrol.wait;" ::: "memory");
  }
#endif
}
__device__ __forceinline__ void AllowNextKernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// The multiprocessors of the current device (looked up once per process).
inline int MultiprocessorCount() {
  static const int count = [] {
    int device = 0, n = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device);
    return n > 0 ? n : 1;
  }();
  return count;
}

// How many blocks of `threads` threads of `kernel` one multiprocessor holds
// at once (at least 1; a failed query counts 1 and is cleared, so that a
// later launch check does not report it). Queries no stream, so it may run
// under CUDA graph capture; callers keep the answer per kernel.
template <typename... Params>
int ResidentBlocksPerMultiprocessor(void (*kernel)(Params...), int threads) {
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    per_sm = 1;
  }
  return per_sm > 0 ? per_sm : 1;
}

// Launches `kernel` with programmatic stream serialization allowed (see
// above) when `overlap`, else as a plain launch, which starts only after all
// earlier work in the stream has finished and its writes are visible. Works
// eagerly and under CUDA graph capture.
// With cluster > 1, blocks along z form thread-block clusters of that many
// (Hopper; gridDim.z must be a multiple): they may read each other's shared
// memory (cooperative_groups::this_cluster()).
template <typename... Params, typename... Args>
cudaError_t LaunchClustered(bool overlap, unsigned cluster, void (*kernel)(Params...), dim3 grid,
                            dim3 block, size_t shared, cudaStream_t stream, Args... args) {
  cudaLaunchAttribute attribute[2];
  int count = 0;
  if (overlap) {
    attribute[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[count++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster > 1) {
    attribute[count].id = cudaLaunchAttributeClusterDimension;
    attribute[count++].val.clusterDim = {1, 1, cluster};
  }
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = count;
  return cudaLaunchKernelEx(&config, kernel, args...);
}

// The sum of the float4s at part(0) .. part(count - 1) (1 <= count <= kMaxParts;
// typically one per block of a cluster, in distributed shared memory): all
// read at once (one round trip), then added in rank order, so every run gives
// the same sums.
template <int kMaxParts, typename Part>
__device__ __forceinline__ float4 SumInRankOrder(int count, Part part) {
  float4 parts[kMaxParts];
#pragma unroll
  for (int s = 0; s < kMaxParts; ++s) {
    if (s < count) parts[s] = *reinterpret_cast<const float4*>(part(s));
  }
  float4 sum = parts[0];
#pragma unroll
  for (int s = 1; s < kMaxParts; ++s) {
    if (s < count) {
      sum.x += parts[s].x;
      sum.y += parts[s].y;
      sum.z += parts[s].z;
      sum.w += parts[s].w;
    }
  }
  return sum;
}

template <typename... Params, typename... Args>
cudaError_t Launch(bool overlap, void (*kernel)(Params...), dim3 grid, dim3 block,
                   size_t shared, cudaStream_t stream, Args... args) {
  return LaunchClustered(overlap, 1, kernel, grid, block, shared, stream, args...);
}

template <typename... Params, typename... Args>
cudaError_t LaunchOverlapped(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared,
                             cudaStream_t stream, Args... args) {
  return Launch(true, kernel, grid, block, shared, stream, args...);
}

}  // namespace kernel
}  // namespace tandem

#endif  // TANDEM_CORE_CUDA_KERNEL_MATH_CUH_
