// Hopper warp-group matrix multiplies (wgmma, sm_90a): shared-memory matrix
// descriptors for the layout without swizzling, and the fences and groups
// around wgmma.mma_async (the shapes are in wgmma_ops.cuh). Included by .cu
// files built for sm_90a only; elsewhere the bodies compile to nothing.
//
// Layout (PTX ISA, "Shared Memory Matrix Layout", no swizzle, K-major): the
// operand is made of core matrices of 8 rows x 16 bytes (8 elements of K),
// each stored as 128 contiguous bytes (row r at +16 r). Kernels here store a
// tile of R rows x KS columns as chunk (row r, 16-byte column group c) at
// byte (c * R + r) * 16: core matrices adjacent along M / N are 128 bytes
// apart (the descriptor's stride byte offset), along K R * 16 bytes (its
// leading byte offset), and the k16 step s of an instruction starts at byte
// 2 s R 16.
#ifndef TANDEM_CORE_MODEL_CUDA_WGMMA_CUH_
#define TANDEM_CORE_MODEL_CUDA_WGMMA_CUH_

#include <cstdint>

#include "core/model/cuda/wgmma_ops.cuh"

namespace tandem::kernel {

// The descriptor of the operand at `shared` (16-byte aligned), no swizzle:
// `leading` bytes between core matrices along K, `stride` along M / N.
__device__ __forceinline__ uint64_t MatrixDescriptor(const void* shared, uint32_t leading,
                                                     uint32_t stride) {
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(shared));
  return static_cast<uint64_t>((address & 0x3FFFF) >> 4) |
         static_cast<uint64_t>((leading >> 4) & 0x3FFF) << 16 |
         static_cast<uint64_t>((stride >> 4) & 0x3FFF) << 32;
}

// The descriptor of a K-major operand in the 128-byte swizzled layout at
// `shared` (1024-byte aligned for the first k16 step; later steps of the
// same 64-wide K block start 32 bytes further): rows of 128 bytes (64
// elements of K), 16-byte slot j of row r stored at slot j ^ (r % 8), 8-row
// groups 1024 bytes apart (stride byte offset); the leading byte offset is
// unused (1) when an instruction's K (16) stays within one row.
__device__ __forceinline__ uint64_t SwizzledDescriptor(const void* shared) {
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(shared));
  return static_cast<uint64_t>((address & 0x3FFFF) >> 4) | static_cast<uint64_t>(1) << 16 |
         static_cast<uint64_t>(1024 >> 4) << 32 | static_cast<uint64_t>(1) << 62;
}

// Before the first wgmma of a warp group (and after any other instruction
// touched its accumulators).
__device__ __forceinline__ void WgmmaFence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}

// Closes the wgmma instructions issued since the last commit into a group.
__device__ __forceinline__ void WgmmaCommit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}

// Waits until at most kPending committed groups are still running.
template <int kPending>
__device__ __forceinline__ void WgmmaWait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
#endif
}

// Makes this thread's earlier generic-proxy writes to shared memory (plain
// stores, cp.async) visible to the async proxy that wgmma reads through;
// then a barrier before the wgmma.
__device__ __forceinline__ void FenceProxyAsync() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

// Keeps the compiler from moving reads of the accumulators above the
// WgmmaWait that completes them (the asm statements above do not name them).
template <int kRegs>
__device__ __forceinline__ void FenceAccumulators(float (&d)[kRegs]) {
#pragma unroll
  for (int i = 0; i < kRegs; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

}  // namespace tandem::kernel

#endif  // TANDEM_CORE_MODEL_CUDA_WGMMA_CUH_
