// Tensor-core helpers the fp16 / bf16 kernels share (packed-prefill
// attention, skinny and cluster projections): mma.sync m16n8k16 with
// fp32 accumulation, packing two floats into one register of T pairs,
// ldmatrix fragments, cp.async copies into shared memory and sums over the
// 4 lanes of a fragment row.
// Fragment layouts (PTX ISA, mma.m16n8k16 for 16-bit types): lane l, g = l / 4,
// q = l % 4. A (16x16): a0 a1 row g, columns 2q, 2q + 1; a2 a3 row g + 8; a4
// a5 / a6 a7 the same rows at columns + 8. B (16x8): b0 b1 rows (k) 2q, 2q + 1
// of column g; b2 b3 rows + 8. C / D (16x8): c0 c1 row g, columns 2q, 2q + 1;
// c2 c3 row g + 8. The lower-indexed element of a pair is the low half.
#ifndef TANDEM_CORE_MODEL_CUDA_MMA_CUH_
#define TANDEM_CORE_MODEL_CUDA_MMA_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace tandem::kernel {

// D += A (16x16, row-major fragments) * B (16x8, column-major fragments), T
// = __half or __nv_bfloat16.
template <typename T>
__device__ __forceinline__ void Mma(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                    uint32_t a3, uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
        "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  } else {
    static_assert(std::is_same_v<T, __half>, "mma.sync takes fp16 or bf16");
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
        "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
}

template <typename T>
__device__ __forceinline__ void Mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                    uint32_t b1) {
  Mma<T>(d, a[0], a[1], a[2], a[3], b0, b1);
}

// Two floats as a pair of T in one register (x in the low half).
template <typename T>
__device__ __forceinline__ uint32_t PackPair(float x, float y) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(x, y);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(x, y);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}

// Four 8x8 matrices of 16-bit elements from shared memory; lane i gives the
// address of row i % 8 of matrix i / 8. kTranspose: each matrix transposed.
template <bool kTranspose>
__device__ __forceinline__ void LoadMatrices(uint32_t (&r)[4], const void* row) {
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(row));
  if constexpr (kTranspose) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  }
}

// 16 bytes from global to shared memory, asynchronously (cp.async, through
// L2 only); zeros instead where `real` is false (`global` is not read then,
// but must still be a valid address). Completed by cp.async.wait_all.
__device__ __forceinline__ void CopyAsync16(void* shared, const void* global, bool real) {
  const auto dst = static_cast<uint32_t>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(global),
               "r"(real ? 16 : 0));
}

// Max and sum over the 4 lanes that share a fragment row (l / 4).
__device__ __forceinline__ float QuadMax(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float QuadSum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

}  // namespace tandem::kernel

#endif  // TANDEM_CORE_MODEL_CUDA_MMA_CUH_
