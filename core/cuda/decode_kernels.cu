// The decode step's fused kernels (see decode_kernels.h): the projection with
// its LayerNorm, bias, GELU and residual fused, token embedding, greedy
// token choice, and the per-slot state update.
#include <cfloat>
#include <climits>
#include <cmath>

#include "core/cuda/decode_kernels.h"
#include "core/cuda/kernel_math.cuh"

namespace tandem {
namespace {

using kernel::FromFloat;
using kernel::LoadRaw;
using kernel::LoadVec;
using kernel::LoadVecCoherent;
using kernel::Unpack;
using kernel::Round;
using kernel::ToFloat;
using kernel::Vec16;
using kernel::WarpSum;

constexpr int kLinearWarps = 8;  // output columns per block: one per warp

__device__ __forceinline__ float GeluTanh(float x) {
  const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

// Block: kLinearWarps warps, warp w computes output column n = block * 8 + w
// for all rows; lanes stride over K with 16-byte loads of the weight row and
// of x, kChunk vectors at a time, the next chunk's weights loading while the
// current one is multiplied. The first chunk is loaded before waiting for the
// previous kernel (weights are constant), so its latency overlaps that kernel.
// With kNorm, the block first computes each row's mean and 1/std (warp m
// takes row m, two passes) and normalizes x on the fly.
template <typename T, int kRows, bool kNorm, LinearEpilogue kEpilogue>
__global__ void __launch_bounds__(kLinearWarps * 32)
FusedLinearKernel(const T* __restrict__ x, const T* __restrict__ norm_weight,
                  const T* __restrict__ norm_bias, float eps, const T* __restrict__ weight,
                  const T* __restrict__ bias, T* out, float* __restrict__ logits, int rows,
                  int K, int N) {
  constexpr int kVec = Vec16<T>::kSize;
  constexpr int kChunk = 4;
  constexpr int stride = 32 * kVec;  // elements between a lane's vectors
  kernel::AllowNextKernel();
  __shared__ float mean[kRows], rstd[kRows];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int n = blockIdx.x * kLinearWarps + warp;
  const bool active = n < N;
  const int first = lane * kVec;  // this lane's first element
  const T* w_row = weight + static_cast<size_t>(active ? n : 0) * K;
  uint4 w_chunk[kChunk];
#pragma unroll
  for (int c = 0; c < kChunk; ++c) {
    const int k = first + c * stride;
    if (active && k < K) w_chunk[c] = LoadRaw(w_row + k);
  }
  kernel::WaitForPreviousKernel();
  if constexpr (kNorm) {
    for (int m = warp; m < rows; m += kLinearWarps) {
      const T* row = x + static_cast<size_t>(m) * K;
      float sum = 0.0f;
      for (int k = first; k < K; k += stride) {
        float v[kVec];
        LoadVecCoherent(row + k, v);
#pragma unroll
        for (int i = 0; i < kVec; ++i) sum += v[i];
      }
      const float mu = WarpSum(sum) / K;
      float squares = 0.0f;  // second pass (L1 hits): exact even when |mean| >> std
      for (int k = first; k < K; k += stride) {
        float v[kVec];
        LoadVecCoherent(row + k, v);
#pragma unroll
        for (int i = 0; i < kVec; ++i) squares += (v[i] - mu) * (v[i] - mu);
      }
      const float variance = WarpSum(squares) / K;
      if (lane == 0) {
        mean[m] = mu;
        rstd[m] = rsqrtf(variance + eps);
      }
    }
    __syncthreads();
  }
  float acc[kRows];
#pragma unroll
  for (int m = 0; m < kRows; ++m) acc[m] = 0.0f;
  for (int k0 = first; active && k0 < K; k0 += kChunk * stride) {
    uint4 w_next[kChunk];
#pragma unroll
    for (int c = 0; c < kChunk; ++c) {
      const int k = k0 + (kChunk + c) * stride;
      if (k < K) w_next[c] = LoadRaw(w_row + k);
    }
#pragma unroll
    for (int c = 0; c < kChunk; ++c) {
      const int k = k0 + c * stride;
      if (k >= K) break;
      float w[kVec], gamma[kVec], beta[kVec];
      Unpack<T>(w_chunk[c], w);
      if constexpr (kNorm) {
        LoadVec(norm_weight + k, gamma);
        LoadVec(norm_bias + k, beta);
      }
#pragma unroll
      for (int m = 0; m < kRows; ++m) {
        if (m < rows) {
          float v[kVec];
          LoadVecCoherent(x + static_cast<size_t>(m) * K + k, v);
#pragma unroll
          for (int i = 0; i < kVec; ++i) {
            float xi = v[i];
            if constexpr (kNorm) xi = Round<T>((xi - mean[m]) * rstd[m] * gamma[i] + beta[i]);
            acc[m] += w[i] * xi;
          }
        }
      }
    }
#pragma unroll
    for (int c = 0; c < kChunk; ++c) w_chunk[c] = w_next[c];
  }
#pragma unroll
  for (int m = 0; m < kRows; ++m) acc[m] = WarpSum(acc[m]);
  if (!active || lane != 0) return;
  float b = 0.0f;
  if constexpr (kEpilogue != LinearEpilogue::kLogits) b = ToFloat(bias[n]);
#pragma unroll
  for (int m = 0; m < kRows; ++m) {
    if (m >= rows) break;
    const size_t i = static_cast<size_t>(m) * N + n;
    if constexpr (kEpilogue == LinearEpilogue::kLogits) {
      logits[i] = Round<T>(acc[m]);
    } else if constexpr (kEpilogue == LinearEpilogue::kBias) {
      out[i] = FromFloat<T>(acc[m] + b);
    } else if constexpr (kEpilogue == LinearEpilogue::kBiasGelu) {
      out[i] = FromFloat<T>(GeluTanh(acc[m] + b));
    } else {
      out[i] = FromFloat<T>(ToFloat(out[i]) + Round<T>(acc[m] + b));
    }
  }
}

template <typename T, int kRows, bool kNorm, LinearEpilogue kEpilogue>
cudaError_t LaunchLinear(const void* x, const void* norm_weight, const void* norm_bias,
                         float eps, const void* weight, const void* bias, void* out,
                         float* logits, int rows, int K, int N, cudaStream_t stream) {
  const int columns = kLinearWarps;
  const int blocks = (N + columns - 1) / columns;
  return kernel::LaunchOverlapped(
      FusedLinearKernel<T, kRows, kNorm, kEpilogue>, dim3(blocks), dim3(kLinearWarps * 32), 0,
      stream, static_cast<const T*>(x), static_cast<const T*>(norm_weight),
      static_cast<const T*>(norm_bias), eps, static_cast<const T*>(weight),
      static_cast<const T*>(bias), static_cast<T*>(out), logits, rows, K, N);
}

// Picks the compiled variant: rows rounded up to 1, 2, 4 or 8.
template <typename T, bool kNorm, LinearEpilogue kEpilogue>
cudaError_t LaunchLinearRows(const void* x, const void* norm_weight, const void* norm_bias,
                             float eps, const void* weight, const void* bias, void* out,
                             float* logits, int rows, int K, int N, cudaStream_t stream) {
#define TANDEM_LINEAR(R)                                                                  \
  return LaunchLinear<T, R, kNorm, kEpilogue>(x, norm_weight, norm_bias, eps, weight, bias, \
                                              out, logits, rows, K, N, stream)
  if (rows <= 1) TANDEM_LINEAR(1);
  if (rows <= 2) TANDEM_LINEAR(2);
  if (rows <= 4) TANDEM_LINEAR(4);
  TANDEM_LINEAR(8);
#undef TANDEM_LINEAR
}

template <typename T>
cudaError_t LaunchLinearTyped(LinearEpilogue epilogue, const void* x, const void* norm_weight,
                              const void* norm_bias, float eps, const void* weight,
                              const void* bias, void* out, float* logits, int rows, int K,
                              int N, cudaStream_t stream) {
  const bool norm = norm_weight != nullptr;
#define TANDEM_EPILOGUE(NORM, E)                                                          \
  return LaunchLinearRows<T, NORM, E>(x, norm_weight, norm_bias, eps, weight, bias, out, \
                                      logits, rows, K, N, stream)
  switch (epilogue) {
    case LinearEpilogue::kBias:
      if (norm) TANDEM_EPILOGUE(true, LinearEpilogue::kBias);
      TANDEM_EPILOGUE(false, LinearEpilogue::kBias);
    case LinearEpilogue::kBiasGelu:
      if (norm) TANDEM_EPILOGUE(true, LinearEpilogue::kBiasGelu);
      TANDEM_EPILOGUE(false, LinearEpilogue::kBiasGelu);
    case LinearEpilogue::kBiasResidual:
      if (norm) return cudaErrorInvalidValue;  // not a GPT-2 pattern
      TANDEM_EPILOGUE(false, LinearEpilogue::kBiasResidual);
    case LinearEpilogue::kLogits:
      if (norm) TANDEM_EPILOGUE(true, LinearEpilogue::kLogits);
      TANDEM_EPILOGUE(false, LinearEpilogue::kLogits);
  }
#undef TANDEM_EPILOGUE
  return cudaErrorInvalidValue;
}

template <typename T>
__global__ void EmbedTokensKernel(const T* __restrict__ wte, const T* __restrict__ wpe,
                                  const int64_t* __restrict__ tokens,
                                  const int64_t* __restrict__ positions, int64_t max_position,
                                  T* __restrict__ x, int channels) {
  kernel::AllowNextKernel();
  kernel::WaitForPreviousKernel();
  const int b = blockIdx.x;
  const int64_t position = positions[b] < max_position ? positions[b] : max_position;
  const T* token_row = wte + tokens[b] * channels;
  const T* position_row = wpe + position * channels;
  for (int c = threadIdx.x; c < channels; c += blockDim.x) {
    x[static_cast<size_t>(b) * channels + c] =
        FromFloat<T>(ToFloat(token_row[c]) + ToFloat(position_row[c]));
  }
}

constexpr int kGreedyThreads = 1024;
constexpr int kNoIndex = INT_MAX;  // a thread or warp that saw no logit

// Whether candidate (value, index) beats the current (best, best_index) for
// argmax as torch.argmax defines it: NaN is the maximum, ties go to the first
// index, and an empty candidate never wins.
__device__ __forceinline__ bool Beats(float value, int index, float best, int best_index) {
  if (index == kNoIndex) return false;
  if (best_index == kNoIndex) return true;
  const bool value_nan = value != value, best_nan = best != best;
  if (value_nan != best_nan) return value_nan;
  if (value_nan || value == best) return index < best_index;
  return value > best;
}

// One block per row: the first index of the maximum, then the log-softmax
// normalizer max + log(sum(exp(x - max))).
__global__ void __launch_bounds__(kGreedyThreads)
GreedyTokensKernel(const float* __restrict__ logits, int vocab, int64_t* __restrict__ tokens,
                   float* __restrict__ logprobs) {
  __shared__ float best_values[kGreedyThreads / 32];
  __shared__ int best_indices[kGreedyThreads / 32];
  __shared__ float sums[kGreedyThreads / 32];
  kernel::AllowNextKernel();
  kernel::WaitForPreviousKernel();
  const int b = blockIdx.x, tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const float* row = logits + static_cast<size_t>(b) * vocab;
  float best = -INFINITY;
  int index = kNoIndex;
  for (int i = tid; i < vocab; i += kGreedyThreads) {
    const float v = row[i];
    if (Beats(v, i, best, index)) {
      best = v;
      index = i;
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, best, offset);
    const int other_index = __shfl_xor_sync(0xffffffffu, index, offset);
    if (Beats(other, other_index, best, index)) {
      best = other;
      index = other_index;
    }
  }
  if (lane == 0) {
    best_values[warp] = best;
    best_indices[warp] = index;
  }
  __syncthreads();
  best = best_values[0];
  index = best_indices[0];
  for (int w = 1; w < kGreedyThreads / 32; ++w) {
    if (Beats(best_values[w], best_indices[w], best, index)) {
      best = best_values[w];
      index = best_indices[w];
    }
  }
  float sum = 0.0f;
  for (int i = tid; i < vocab; i += kGreedyThreads) sum += __expf(row[i] - best);
  sum = WarpSum(sum);
  if (lane == 0) sums[warp] = sum;
  __syncthreads();
  if (tid == 0) {
    float total = 0.0f;
    for (int w = 0; w < kGreedyThreads / 32; ++w) total += sums[w];
    tokens[b] = index;  // vocab >= 1, so some thread saw a logit
    logprobs[b] = row[index] - best - logf(total);
  }
}

__global__ void AdvanceSlotsKernel(SlotStatePointers state, const int64_t* __restrict__ slots,
                                   const int64_t* __restrict__ tokens, int batch,
                                   bool* __restrict__ stops) {
  kernel::AllowNextKernel();
  kernel::WaitForPreviousKernel();
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  const int64_t slot = slots[b], token = tokens[b];
  if (slot == state.padding_slot) {  // a padded row: its output is discarded
    stops[b] = true;
    return;
  }
  const int64_t remaining = state.remaining[slot];
  bool stop = remaining <= 1 || (token == state.eos_token_id && !state.ignore_eos[slot]);
  for (int j = 0; j < state.max_stop_ids; ++j) {
    stop |= state.stop_ids[slot * state.max_stop_ids + j] == token;
  }
  stops[b] = stop;
  state.next_token[slot] = token;
  state.position[slot] += 1;
  state.rng_offset[slot] += 1;
  state.remaining[slot] = remaining - 1;
}

}  // namespace

cudaError_t LaunchFusedLinear(KernelDType dtype, LinearEpilogue epilogue, const void* x,
                              const void* norm_weight, const void* norm_bias, float eps,
                              const void* weight, const void* bias, void* out, float* logits,
                              int rows, int K, int N, cudaStream_t stream) {
  if (rows < 1 || rows > kMaxFusedRows || K <= 0 || N <= 0) return cudaErrorInvalidValue;
  switch (dtype) {
    case KernelDType::kFloat32:
      if (K % 4 != 0) return cudaErrorInvalidValue;
      return LaunchLinearTyped<float>(epilogue, x, norm_weight, norm_bias, eps, weight, bias,
                                      out, logits, rows, K, N, stream);
    case KernelDType::kFloat16:
      if (K % 8 != 0) return cudaErrorInvalidValue;
      return LaunchLinearTyped<__half>(epilogue, x, norm_weight, norm_bias, eps, weight, bias,
                                       out, logits, rows, K, N, stream);
    case KernelDType::kBFloat16:
      if (K % 8 != 0) return cudaErrorInvalidValue;
      return LaunchLinearTyped<__nv_bfloat16>(epilogue, x, norm_weight, norm_bias, eps, weight,
                                              bias, out, logits, rows, K, N, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchEmbedTokens(KernelDType dtype, const void* wte, const void* wpe,
                              const int64_t* tokens, const int64_t* positions,
                              int64_t max_position, void* x, int batch, int channels,
                              cudaStream_t stream) {
  if (batch <= 0) return cudaErrorInvalidValue;
  const int threads = 256;
  switch (dtype) {
    case KernelDType::kFloat32:
      return kernel::LaunchOverlapped(EmbedTokensKernel<float>, dim3(batch), dim3(threads), 0,
                                      stream, static_cast<const float*>(wte),
                                      static_cast<const float*>(wpe), tokens, positions,
                                      max_position, static_cast<float*>(x), channels);
    case KernelDType::kFloat16:
      return kernel::LaunchOverlapped(EmbedTokensKernel<__half>, dim3(batch), dim3(threads), 0,
                                      stream, static_cast<const __half*>(wte),
                                      static_cast<const __half*>(wpe), tokens, positions,
                                      max_position, static_cast<__half*>(x), channels);
    case KernelDType::kBFloat16:
      return kernel::LaunchOverlapped(
          EmbedTokensKernel<__nv_bfloat16>, dim3(batch), dim3(threads), 0, stream,
          static_cast<const __nv_bfloat16*>(wte), static_cast<const __nv_bfloat16*>(wpe), tokens,
          positions, max_position, static_cast<__nv_bfloat16*>(x), channels);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchGreedyTokens(const float* logits, int batch, int vocab, int64_t* tokens,
                               float* logprobs, cudaStream_t stream) {
  if (batch <= 0 || vocab <= 0) return cudaErrorInvalidValue;
  return kernel::LaunchOverlapped(GreedyTokensKernel, dim3(batch), dim3(kGreedyThreads), 0,
                                  stream, logits, vocab, tokens, logprobs);
}

cudaError_t LaunchAdvanceSlots(const SlotStatePointers& state, const int64_t* slots,
                               const int64_t* tokens, int batch, bool* stops,
                               cudaStream_t stream) {
  if (batch <= 0) return cudaErrorInvalidValue;
  const int threads = 128;
  return kernel::LaunchOverlapped(AdvanceSlotsKernel, dim3((batch + threads - 1) / threads),
                                  dim3(threads), 0, stream, state, slots, tokens, batch, stops);
}

}  // namespace tandem
