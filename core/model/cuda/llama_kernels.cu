// The Llama-style decode step's kernels (see llama_kernels.h).
#include "core/model/cuda/llama_kernels.h"

#include <algorithm>
#include <cstdint>

#include "core/model/cuda/kernel_math.cuh"

namespace tandem {
namespace {

using kernel::BlockSum;
using kernel::FromFloat;
using kernel::Round;
using kernel::ToFloat;
using kernel::Vec16;

constexpr int kNormThreads = 256;

// One block per row.
template <typename T>
__global__ void __launch_bounds__(kNormThreads)
RmsNormKernel(const T* __restrict__ x, const T* __restrict__ weight, float eps,
              T* __restrict__ out, int channels) {
  kernel::AllowNextKernel();
  kernel::WaitForPreviousKernel();
  const T* row = x + static_cast<size_t>(blockIdx.x) * channels;
  float squares = 0.0f;
  for (int c = threadIdx.x; c < channels; c += blockDim.x) {
    const float v = ToFloat(row[c]);
    squares += v * v;
  }
  const float inv = rsqrtf(BlockSum(squares) / channels + eps);
  T* o = out + static_cast<size_t>(blockIdx.x) * channels;
  for (int c = threadIdx.x; c < channels; c += blockDim.x) {
    o[c] = FromFloat<T>(ToFloat(weight[c]) * Round<T>(ToFloat(row[c]) * inv));
  }
}

// One block per row; thread t owns the 16-byte pieces t, t + blockDim.x, ...
// (kChunks of them at most), held in registers between the two passes.
template <typename T, int kChunks>
__global__ void __launch_bounds__(1024)
RmsNormVectorKernel(const T* __restrict__ x, const T* __restrict__ weight, float eps,
                    T* __restrict__ out, int channels) {
  constexpr int kVec = Vec16<T>::kSize;
  const T* row = x + static_cast<size_t>(blockIdx.x) * channels;
  T* o = out + static_cast<size_t>(blockIdx.x) * channels;
  kernel::AllowNextKernel();
  kernel::WaitForPreviousKernel();
  float v[kChunks][kVec];
  float squares = 0.0f;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int c = (k * blockDim.x + threadIdx.x) * kVec;
    if (c < channels) {
      kernel::LoadVec(row + c, v[k]);
#pragma unroll
      for (int i = 0; i < kVec; ++i) squares += v[k][i] * v[k][i];
    }
  }
  const float inv = rsqrtf(BlockSum(squares) / channels + eps);
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int c = (k * blockDim.x + threadIdx.x) * kVec;
    if (c < channels) {
      float w[kVec];
      kernel::LoadVec(weight + c, w);
      alignas(16) T packed[kVec];
#pragma unroll
      for (int i = 0; i < kVec; ++i) packed[i] = FromFloat<T>(w[i] * Round<T>(v[k][i] * inv));
      *reinterpret_cast<uint4*>(o + c) = *reinterpret_cast<const uint4*>(packed);
    }
  }
}

// One block per (row, query or key head); D / 2 threads, thread i owns the
// pair (i, i + D / 2). blockDim.x is rounded up to a warp multiple.
template <typename T>
__global__ void QkNormRopeKernel(T* __restrict__ qkv, const T* __restrict__ q_norm,
                                 const T* __restrict__ k_norm, float eps,
                                 const float* __restrict__ inv_freq,
                                 const int64_t* __restrict__ slots,
                                 const int64_t* __restrict__ positions, int64_t max_position,
                                 int heads, int kv_heads, int head_dim) {
  kernel::AllowNextKernel();
  const int m = blockIdx.x, head = blockIdx.y, half = head_dim / 2, i = threadIdx.x;
  const bool active = i < half;
  // qkv comes from the previous kernel; in a prefill, the positions may too.
  kernel::WaitForPreviousKernel();
  int64_t p = positions[slots != nullptr ? slots[m] : m];
  if (p > max_position) p = max_position;
  T* x = qkv + (static_cast<size_t>(m) * (heads + 2 * kv_heads) + head) * head_dim;
  float a = active ? ToFloat(x[i]) : 0.0f, b = active ? ToFloat(x[i + half]) : 0.0f;
  const T* norm = head < heads ? q_norm : k_norm;
  if (norm != nullptr) {
    const float inv = rsqrtf(BlockSum(a * a + b * b) / head_dim + eps);
    if (active) {
      a = Round<T>(ToFloat(norm[i]) * Round<T>(a * inv));
      b = Round<T>(ToFloat(norm[i + half]) * Round<T>(b * inv));
    }
  }
  if (!active) return;
  const float angle = static_cast<float>(p) * inv_freq[i];
  const float c = Round<T>(cosf(angle)), s = Round<T>(sinf(angle));
  // q * cos + rotate_half(q) * sin, each product rounded as ATen stores it.
  x[i] = FromFloat<T>(Round<T>(a * c) + Round<T>(-b * s));
  x[i + half] = FromFloat<T>(Round<T>(b * c) + Round<T>(a * s));
}

template <typename T>
__global__ void SwiGluKernel(const T* __restrict__ gate_up, T* __restrict__ out, int inner,
                             int64_t total) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t m = k / inner, j = k % inner;
    const T* row = gate_up + m * 2 * inner;
    const float g = ToFloat(row[j]);
    const float act = Round<T>(g / (1.0f + expf(-g)));
    out[k] = FromFloat<T>(act * ToFloat(row[inner + j]));
  }
}

}  // namespace

cudaError_t LaunchRmsNorm(KernelDType dtype, const void* x, const void* weight, float eps,
                          void* out, int rows, int channels, cudaStream_t stream) {
  if (rows <= 0 || channels <= 0) return cudaErrorInvalidValue;
  return kernel::WithElementType(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    // The vector kernel: each thread loads its 16-byte pieces once, all in
    // flight together (the scalar loop's dependent loads made a 2048-channel
    // row take ~9 us).
    constexpr int kVec = Vec16<T>::kSize;
    const int vectors = channels / kVec;
    const bool aligned = channels % kVec == 0 &&
                         reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                         reinterpret_cast<uintptr_t>(weight) % 16 == 0 &&
                         reinterpret_cast<uintptr_t>(out) % 16 == 0;
    const int threads = std::min(1024, ((vectors + 31) / 32) * 32);
    const int chunks = (vectors + threads - 1) / threads;
    auto launch_vector = [&](auto kernel_function) {
      return kernel::LaunchOverlapped(kernel_function, dim3(rows), dim3(threads), 0, stream,
                            static_cast<const T*>(x), static_cast<const T*>(weight), eps,
                            static_cast<T*>(out), channels);
    };
    if (aligned && chunks <= 1) return launch_vector(&RmsNormVectorKernel<T, 1>);
    if (aligned && chunks <= 2) return launch_vector(&RmsNormVectorKernel<T, 2>);
    if (aligned && chunks <= 4) return launch_vector(&RmsNormVectorKernel<T, 4>);
    return kernel::LaunchOverlapped(&RmsNormKernel<T>, dim3(rows), dim3(kNormThreads), 0, stream,
                          static_cast<const T*>(x), static_cast<const T*>(weight), eps,
                          static_cast<T*>(out), channels);
  });
}

cudaError_t LaunchQkNormRope(KernelDType dtype, void* qkv, const void* q_norm,
                             const void* k_norm, float eps, const float* inv_freq,
                             const int64_t* slots, const int64_t* positions,
                             int64_t max_position, int rows, int heads, int kv_heads,
                             int head_dim, cudaStream_t stream) {
  if (rows <= 0 || head_dim <= 0 || head_dim % 2 != 0 || head_dim > 2048) {
    return cudaErrorInvalidValue;
  }
  const int threads = ((head_dim / 2 + 31) / 32) * 32;
  return kernel::WithElementType(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    return kernel::LaunchOverlapped(&QkNormRopeKernel<T>, dim3(rows, heads + kv_heads),
                          dim3(threads), 0, stream, static_cast<T*>(qkv),
                          static_cast<const T*>(q_norm), static_cast<const T*>(k_norm), eps,
                          inv_freq, slots, positions, max_position, heads, kv_heads, head_dim);
  });
}

cudaError_t LaunchSwiGlu(KernelDType dtype, const void* gate_up, void* out, int rows, int inner,
                         cudaStream_t stream) {
  if (rows <= 0 || inner <= 0) return cudaErrorInvalidValue;
  const int64_t total = static_cast<int64_t>(rows) * inner;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((total + threads - 1) / threads, 4096));
  return kernel::WithElementType(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    return kernel::Launch(false, &SwiGluKernel<T>, dim3(blocks), dim3(threads), 0, stream,
                          static_cast<const T*>(gate_up), static_cast<T*>(out), inner, total);
  });
}

}  // namespace tandem
