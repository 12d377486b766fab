// The decode step's fused kernels (see decode_kernels.h): the projection with
// its LayerNorm, bias, GELU and residual fused, token embedding, and the
// per-slot state update. The LM head and greedy choice are in
// lm_head_kernel.cu.
#include <cmath>
#include <cstdint>

#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/kernel_math.cuh"
#include "core/model/cuda/projection.cuh"

namespace tandem {
namespace {

using kernel::FromFloat;
using kernel::GeluTanh;
using kernel::kChunk;
using kernel::kLinearWarps;
using kernel::Round;
using kernel::ToFloat;
using kernel::Vec16;
using kernel::WithElementType;

// Block: kLinearWarps warps, warp w computes output column n = block * 8 + w
// for all rows (kernel::WarpDotRows). The column's first weights and its bias
// are loaded, and the LayerNorm weights prefetched into L2, before waiting
// for the previous kernel (they are constant), so their latency overlaps
// that kernel. With kNorm, the block then computes each row's LayerNorm
// statistics. kNormInRegisters (one row, K <= kOneChunkK): the lane's
// LayerNorm weights are loaded into registers instead, so they are not an L2
// round trip after the statistics (GPT-2 small N=1 227.0 -> 210.6 us per
// step: docs/results/bench/2026-12-03-h200-n1-chain/), each warp computes
// the row's statistics from its own share of x in registers, with no block
// barrier (209.2 -> 204.8 us: docs/results/bench/2026-12-03-h200-n1-split/),
// and a warp takes kWarpCols consecutive columns n + j, n = (block * 8 + w)
// * kWarpCols, lane j * (32 / C) writing column n + j (C: kWarpCols rounded up
// to a power of 2; kernel::WarpScatter), so that the grid fits one block a
// multiprocessor (see LaunchLinearRows); kK > 0: K compiled in
// (kernel::WithCompiledK).
template <typename T, int kRows, bool kNorm, LinearEpilogue kEpilogue,
          bool kNormInRegisters = false, int kWarpCols = 1, int kK = 0>
__global__ void __launch_bounds__(kLinearWarps * 32)
FusedLinearKernel(const T* __restrict__ x, const T* __restrict__ norm_weight,
                  const T* __restrict__ norm_bias, float eps, const T* __restrict__ weight,
                  const T* __restrict__ bias, T* out, int rows, int K, int N) {
  static_assert(kK == 0 || kNormInRegisters, "K compiled in: the one-row LayerNorm");
  if constexpr (kK > 0) K = kK;
  static_assert(!kNormInRegisters || (kRows == 1 && kNorm), "one row's LayerNorm");
  static_assert(kWarpCols == 1 || kNormInRegisters, "several columns: the one-row LayerNorm");
  static_assert(kWarpCols >= 1 && kWarpCols <= 32, "one lane writes each column");
  static_assert(!kNormInRegisters || kEpilogue != LinearEpilogue::kBiasResidual,
                "the registers' path adds no residual");
  kernel::AllowNextKernel();
  __shared__ float mean[kRows], rstd[kRows];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int n = (blockIdx.x * kLinearWarps + warp) * kWarpCols;  // the warp's first column
  const bool active = n < N;
  uint4 chunk[kWarpCols][kChunk];
#pragma unroll
  for (int j = 0; j < kWarpCols; ++j) {
    const bool column = n + j < N;
    kernel::LoadFirstChunk(weight + static_cast<size_t>(column ? n + j : 0) * K, column, K,
                           chunk[j]);
  }
  // The lanes that write (one a column, kernel::WarpScatter) load their
  // column's bias; with kNormInRegisters lane l takes column
  // n + ColumnOf(l), else lane 0 takes column n.
  using Scatter = kernel::WarpScatter<kWarpCols>;
  const int lane_column = n + Scatter::ColumnOf(lane);
  const bool writer = Scatter::Writes(lane);
  const float b = writer && lane_column < N ? ToFloat(bias[lane_column]) : 0.0f;
  kernel::NormChunk norm;
  if constexpr (kNormInRegisters) kernel::LoadNormChunk(norm_weight, norm_bias, active, K, norm);
  if (!kNormInRegisters && kNorm && warp == kLinearWarps - 1) {
    kernel::WarpPrefetchL2(norm_weight, K * static_cast<int>(sizeof(T)));
    kernel::WarpPrefetchL2(norm_bias, K * static_cast<int>(sizeof(T)));
  }
  kernel::WaitForPreviousKernel();
  if constexpr (kNormInRegisters) {
    if (!active) return;
    const float sum = kernel::WarpNormDotRows<T, kWarpCols>(chunk, norm, x, K, eps);
    if (!writer || lane_column >= N) return;
    const float total = sum + b;
    out[lane_column] =
        FromFloat<T>(kEpilogue == LinearEpilogue::kBiasGelu ? GeluTanh(total) : total);
    return;
  } else {
    // kBiasResidual: lane 0's residuals (out, written by earlier kernels) read
    // now, beside the dot products, not after them (GPT-2 small N=2 295.7 ->
    // 292.8 us per step: docs/results/bench/2026-12-03-h200-bias-layernorm/).
    float residual[kEpilogue == LinearEpilogue::kBiasResidual ? kRows : 1];
    if constexpr (kEpilogue == LinearEpilogue::kBiasResidual) {
      if (active && lane == 0) {
#pragma unroll
        for (int m = 0; m < kRows; ++m) {
          residual[m] = m < rows ? ToFloat(out[static_cast<size_t>(m) * N + n]) : 0.0f;
        }
      }
    }
    if constexpr (kNorm) kernel::BlockNormStats(x, rows, K, eps, mean, rstd);
    if (!active) return;
    float acc[kRows];
    kernel::WarpDotRows<T, kRows, kNorm>(weight + static_cast<size_t>(n) * K, chunk[0], x,
                                         norm_weight, norm_bias, mean, rstd, rows, K, acc);
    if (lane != 0) return;
#pragma unroll
    for (int m = 0; m < kRows; ++m) {
      if (m >= rows) break;
      const size_t i = static_cast<size_t>(m) * N + n;
      if constexpr (kEpilogue == LinearEpilogue::kBias) {
        out[i] = FromFloat<T>(acc[m] + b);
      } else if constexpr (kEpilogue == LinearEpilogue::kBiasGelu) {
        out[i] = FromFloat<T>(GeluTanh(acc[m] + b));
      } else {
        out[i] = FromFloat<T>(residual[m] + kernel::Round<T>(acc[m] + b));
      }
    }
  }
}

template <typename T, int kRows, bool kNorm, LinearEpilogue kEpilogue,
          bool kNormInRegisters = false, int kWarpCols = 1, int kK = 0>
cudaError_t LaunchLinear(const void* x, const void* norm_weight, const void* norm_bias,
                         float eps, const void* weight, const void* bias, void* out, int rows,
                         int K, int N, cudaStream_t stream) {
  constexpr int kBlockCols = kLinearWarps * kWarpCols;
  return kernel::LaunchOverlapped(
      FusedLinearKernel<T, kRows, kNorm, kEpilogue, kNormInRegisters, kWarpCols, kK>,
      dim3((N + kBlockCols - 1) / kBlockCols), dim3(kLinearWarps * 32), 0, stream,
      static_cast<const T*>(x), static_cast<const T*>(norm_weight),
      static_cast<const T*>(norm_bias), eps, static_cast<const T*>(weight),
      static_cast<const T*>(bias), static_cast<T*>(out), rows, K, N);
}

// Picks the compiled variant: rows rounded up to 1, 2, 4 or 8. One row with
// its LayerNorm and K in one chunk: the LayerNorm weights in registers, and
// the fewest columns a warp (1 to 3) whose grid is one block a multiprocessor,
// else 4 (past 32 columns a multiprocessor, more blocks than multiprocessors).
// At one column a warp (80 registers a thread) three blocks fit a
// multiprocessor, but a grid that fills them (GPT-2 small's Q/K/V 288
// blocks, fc 384) leaves the kernels on either side of it no room to start
// early and load their weights before their wait. At 3 columns a warp (122
// registers) Q/K/V is 96 blocks and fc 128: GPT-2 small's N=1 198 -> 182 us
// per step. The rule is a heuristic: 2 and 4 columns a warp measured within
// ~2 us of 3 (docs/results/bench/2026-12-03-h200-resident-chain/).
template <typename T, bool kNorm, LinearEpilogue kEpilogue>
cudaError_t LaunchLinearRows(const void* x, const void* norm_weight, const void* norm_bias,
                             float eps, const void* weight, const void* bias, void* out,
                             int rows, int K, int N, cudaStream_t stream) {
#define TANDEM_LINEAR(R)                                                                  \
  return LaunchLinear<T, R, kNorm, kEpilogue>(x, norm_weight, norm_bias, eps, weight, bias, \
                                              out, rows, K, N, stream)
  if constexpr (kNorm && kEpilogue != LinearEpilogue::kBiasResidual) {
    if (rows <= 1 && K <= kernel::kOneChunkK<T>) {
      return kernel::WithCompiledK<T>(K, [&](auto compiled_k) {
        constexpr int kK = decltype(compiled_k)::value;
#define TANDEM_NORM_ROW(C)                                                                    \
  return LaunchLinear<T, 1, true, kEpilogue, true, C, kK>(x, norm_weight, norm_bias, eps,     \
                                                          weight, bias, out, rows, K, N, stream)
        const int multiprocessors = kernel::MultiprocessorCount();
        auto fits = [&](int cols) { return N <= multiprocessors * kLinearWarps * cols; };
        if (fits(1)) TANDEM_NORM_ROW(1);
        if (fits(2)) TANDEM_NORM_ROW(2);
        if (fits(3)) TANDEM_NORM_ROW(3);
        TANDEM_NORM_ROW(4);
#undef TANDEM_NORM_ROW
      });
    }
  }
  if (rows <= 1) TANDEM_LINEAR(1);
  if (rows <= 2) TANDEM_LINEAR(2);
  if (rows <= 4) TANDEM_LINEAR(4);
  TANDEM_LINEAR(8);
#undef TANDEM_LINEAR
}

// One block per row.
template <typename T>
__global__ void EmbedTokensKernel(const T* __restrict__ wte, const T* __restrict__ wpe,
                                  const int64_t* __restrict__ slots,
                                  const int64_t* __restrict__ tokens,
                                  const int64_t* __restrict__ positions, int64_t max_position,
                                  T* __restrict__ x, int channels) {
  kernel::AllowNextKernel();
  const int b = blockIdx.x;
  const int64_t r = slots != nullptr ? slots[b] : b;
  const T* token_row = wte + tokens[r] * channels;
  T* row = x + static_cast<size_t>(b) * channels;
  if (wpe == nullptr) {  // no learned positions (Llama): a gather
    if ((channels * sizeof(T)) % 16 == 0) {  // rows stay 16-byte aligned
      const int vectors = static_cast<int>(channels * sizeof(T) / 16);
      for (int v = threadIdx.x; v < vectors; v += blockDim.x) {
        reinterpret_cast<uint4*>(row)[v] = __ldg(reinterpret_cast<const uint4*>(token_row) + v);
      }
    } else {
      for (int c = threadIdx.x; c < channels; c += blockDim.x) row[c] = token_row[c];
    }
    return;
  }
  const int64_t position = positions[r] < max_position ? positions[r] : max_position;
  const T* position_row = wpe + position * channels;
  for (int c = threadIdx.x; c < channels; c += blockDim.x) {
    row[c] = FromFloat<T>(ToFloat(token_row[c]) + ToFloat(position_row[c]));
  }
}

// One block for all rows (rows <= kMaxFusedRows; warp m takes row m's
// statistics).
template <typename T>
__global__ void __launch_bounds__(kLinearWarps * 32)
LayerNormKernel(T* x, const T* residual, const T* __restrict__ weight,
                const T* __restrict__ bias, float eps, T* __restrict__ out, int rows,
                int channels) {
  kernel::AllowNextKernel();
  __shared__ float mean[kMaxFusedRows], rstd[kMaxFusedRows];
  if (threadIdx.x < 32) {  // constant: fetch it while the previous kernel finishes
    kernel::WarpPrefetchL2(weight, channels * static_cast<int>(sizeof(T)));
    kernel::WarpPrefetchL2(bias, channels * static_cast<int>(sizeof(T)));
  }
  kernel::WaitForPreviousKernel();
  if (residual != nullptr) {  // x = T(x + residual), as ATen's add rounds it
    for (int i = threadIdx.x; i < rows * channels; i += blockDim.x) {
      x[i] = FromFloat<T>(ToFloat(x[i]) + ToFloat(residual[i]));
    }
    __syncthreads();  // the block's writes, visible to its statistics
  }
  kernel::BlockNormStats(x, rows, channels, eps, mean, rstd);
  for (int i = threadIdx.x; i < rows * channels; i += blockDim.x) {
    const int m = i / channels, c = i % channels;
    out[i] = FromFloat<T>((ToFloat(x[i]) - mean[m]) * rstd[m] * ToFloat(weight[c]) +
                          ToFloat(bias[c]));
  }
}

// One block of kRowThreads per row (batches above kMaxFusedRows): thread t
// owns the row's 16-byte vectors t, t + kRowThreads, ... (kVecs at most),
// held in registers between the passes.
constexpr int kRowThreads = 128;

template <typename T, int kVecs>
__global__ void __launch_bounds__(kRowThreads)
RowLayerNormKernel(T* x, const T* residual, const T* __restrict__ weight,
                   const T* __restrict__ bias, float eps, T* __restrict__ out, int channels) {
  constexpr int kVec = Vec16<T>::kSize;
  kernel::AllowNextKernel();
  // The LayerNorm's weight and bias are constant: read before the wait, they
  // are not a round trip after the statistics (N=64 509 -> 504 us, N=256
  // 1,015 -> 1,010: docs/results/bench/2026-12-02-h200-prepared-measured/).
  uint4 gamma_raw[kVecs], beta_raw[kVecs];
#pragma unroll
  for (int u = 0; u < kVecs; ++u) {
    const int c = (u * kRowThreads + threadIdx.x) * kVec;
    if (c >= channels) continue;
    gamma_raw[u] = kernel::LoadRaw(weight + c);
    beta_raw[u] = kernel::LoadRaw(bias + c);
  }
  kernel::WaitForPreviousKernel();
  const size_t row = static_cast<size_t>(blockIdx.x) * channels;
  float v[kVecs][kVec];
  float sum = 0.0f;
#pragma unroll
  for (int u = 0; u < kVecs; ++u) {
    const int c = (u * kRowThreads + threadIdx.x) * kVec;
    if (c >= channels) continue;
    kernel::LoadVecCoherent(x + row + c, v[u]);
    if (residual != nullptr) {  // x = T(x + residual), as ATen's add rounds it
      float r[kVec];
      kernel::LoadVecCoherent(residual + row + c, r);
#pragma unroll
      for (int i = 0; i < kVec; ++i) v[u][i] = Round<T>(v[u][i] + r[i]);
      kernel::StoreVec(x + row + c, v[u]);
    }
#pragma unroll
    for (int i = 0; i < kVec; ++i) sum += v[u][i];
  }
  const float mean = kernel::BlockSum(sum) / channels;
  float squares = 0.0f;  // second pass over the registers: exact when |mean| >> std
#pragma unroll
  for (int u = 0; u < kVecs; ++u) {
    if ((u * kRowThreads + threadIdx.x) * kVec >= channels) continue;
#pragma unroll
    for (int i = 0; i < kVec; ++i) squares += (v[u][i] - mean) * (v[u][i] - mean);
  }
  const float rstd = rsqrtf(kernel::BlockSum(squares) / channels + eps);
#pragma unroll
  for (int u = 0; u < kVecs; ++u) {
    const int c = (u * kRowThreads + threadIdx.x) * kVec;
    if (c >= channels) continue;
    float gamma[kVec], beta[kVec], y[kVec];
    kernel::Unpack<T>(gamma_raw[u], gamma);
    kernel::Unpack<T>(beta_raw[u], beta);
#pragma unroll
    for (int i = 0; i < kVec; ++i) y[i] = (v[u][i] - mean) * rstd * gamma[i] + beta[i];
    kernel::StoreVec(out + row + c, y);
  }
}

__global__ void AdvanceSlotsKernel(SlotStatePointers state, const int64_t* __restrict__ slots,
                                   const int64_t* __restrict__ tokens, int batch) {
  kernel::AllowNextKernel();
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  const bool row = b < batch;
  // No kernel of the step before this one writes the slot list: read it
  // before waiting for the sampled tokens.
  const int64_t slot = row ? slots[b] : state.padding_slot;
  kernel::WaitForPreviousKernel();
  if (!row || slot == state.padding_slot) return;  // a padded row: discarded
  state.next_token[slot] = tokens[b];
  state.position[slot] += 1;
  state.rng_offset[slot] += 1;
}

// Thread r publishes row r (see LaunchPublishRows).
__global__ void PublishRowsKernel(const int64_t* __restrict__ tokens,
                                  const float* __restrict__ logprobs, int count,
                                  int64_t* host_tokens, float* host_logprobs) {
  kernel::AllowNextKernel();
  kernel::WaitForPreviousKernel();  // the step's tokens
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= count) return;
  host_tokens[r] = tokens[r];
  host_logprobs[r] = logprobs[r];
}

__global__ void SetPrefilledSlotsKernel(SlotStatePointers state, SlotParamsPointers params,
                                        PrefilledRows rows, int count) {
  kernel::AllowNextKernel();
  kernel::WaitForPreviousKernel();  // the sampled tokens
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= count) return;
  const int64_t slot = rows.slots[r];
  if (slot == state.padding_slot) return;
  state.next_token[slot] = rows.tokens[r];
  state.position[slot] = rows.positions[r];
  state.rng_offset[slot] = 1;
  params.temperature[slot] = rows.temperature[r];
  params.top_p[slot] = rows.top_p[r];
  params.min_p[slot] = rows.min_p[r];
  params.top_k[slot] = rows.top_k[r];
  params.seed[slot] = rows.seed[r];
}

// Thread i copies 16 bytes: row r = i / per_row, then K or V, head, vector.
__global__ void AppendKvKernel(const uint4* __restrict__ qkv, uint4* k_cache, uint4* v_cache,
                               const int64_t* __restrict__ slots,
                               const int64_t* __restrict__ positions, int rows, int heads,
                               int vectors, int max_context) {
  kernel::AllowNextKernel();
  kernel::WaitForPreviousKernel();  // qkv
  const int per_part = heads * vectors, per_row = 2 * per_part;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(rows) * per_row) return;
  const int r = static_cast<int>(i / per_row), j = static_cast<int>(i % per_row);
  const int part = j / per_part, h = (j % per_part) / vectors, v = j % vectors;
  const uint4 value = qkv[(static_cast<int64_t>(r) * 3 + 1 + part) * per_part + h * vectors + v];
  const int64_t at = ((slots[r] * heads + h) * max_context + positions[r]) * vectors + v;
  (part == 0 ? k_cache : v_cache)[at] = value;
}

}  // namespace

cudaError_t LaunchSetPrefilledSlots(const SlotStatePointers& state,
                                    const SlotParamsPointers& params, const PrefilledRows& rows,
                                    int count, cudaStream_t stream) {
  if (count <= 0) return cudaErrorInvalidValue;
  const int threads = 128;
  return kernel::LaunchOverlapped(SetPrefilledSlotsKernel, dim3((count + threads - 1) / threads),
                                  dim3(threads), 0, stream, state, params, rows, count);
}

cudaError_t LaunchAppendKv(const void* qkv, void* k_cache, void* v_cache, const int64_t* slots,
                           const int64_t* positions, int rows, int heads, int head_bytes,
                           int max_context, cudaStream_t stream) {
  if (rows <= 0 || heads <= 0 || head_bytes <= 0 || head_bytes % 16 != 0 ||
      reinterpret_cast<uintptr_t>(qkv) % 16 != 0) {
    return cudaErrorInvalidValue;
  }
  const int vectors = head_bytes / 16, threads = 256;
  const int64_t total = static_cast<int64_t>(rows) * 2 * heads * vectors;
  return kernel::LaunchOverlapped(
      AppendKvKernel, dim3(static_cast<unsigned>((total + threads - 1) / threads)), dim3(threads),
      0, stream, static_cast<const uint4*>(qkv), static_cast<uint4*>(k_cache),
      static_cast<uint4*>(v_cache), slots, positions, rows, heads, vectors, max_context);
}

cudaError_t LaunchFusedLinear(KernelDType dtype, LinearEpilogue epilogue, const void* x,
                              const void* norm_weight, const void* norm_bias, float eps,
                              const void* weight, const void* bias, void* out, int rows, int K,
                              int N, cudaStream_t stream) {
  if (rows < 1 || rows > kMaxFusedRows || K <= 0 || N <= 0) return cudaErrorInvalidValue;
  // The patterns compiled: GPT-2's (the residual projections take no
  // LayerNorm, the others do) and a plain kBias without one (Llama's
  // projections, whose RMSNorm runs before them).
  const bool norm = norm_weight != nullptr && norm_bias != nullptr;
  if ((epilogue == LinearEpilogue::kBiasResidual && norm) ||
      (epilogue == LinearEpilogue::kBiasGelu && !norm)) {
    return cudaErrorInvalidValue;
  }
  return WithElementType(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    if (K % Vec16<T>::kSize != 0) return cudaErrorInvalidValue;
#define TANDEM_EPILOGUE(NORM, E)                                                             \
  return LaunchLinearRows<T, NORM, E>(x, norm_weight, norm_bias, eps, weight, bias, out, rows, \
                                      K, N, stream)
    switch (epilogue) {
      case LinearEpilogue::kBias:
        if (!norm) TANDEM_EPILOGUE(false, LinearEpilogue::kBias);
        TANDEM_EPILOGUE(true, LinearEpilogue::kBias);
      case LinearEpilogue::kBiasGelu: TANDEM_EPILOGUE(true, LinearEpilogue::kBiasGelu);
      case LinearEpilogue::kBiasResidual: TANDEM_EPILOGUE(false, LinearEpilogue::kBiasResidual);
      case LinearEpilogue::kSwiGlu: return cudaErrorInvalidValue;
    }
#undef TANDEM_EPILOGUE
    return cudaErrorInvalidValue;
  });
}

cudaError_t LaunchEmbedTokens(KernelDType dtype, const void* wte, const void* wpe,
                              const int64_t* slots, const int64_t* tokens,
                              const int64_t* positions, int64_t max_position, void* x,
                              int batch, int channels, cudaStream_t stream) {
  if (batch <= 0) return cudaErrorInvalidValue;
  return WithElementType(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    // A plain launch: the step's first kernel, it orders the step after all
    // earlier work (prefills writing the slot state), so the step's later
    // kernels may read their inputs before their wait.
    return kernel::Launch(/*overlap=*/false, EmbedTokensKernel<T>, dim3(batch), dim3(256), 0,
                          stream, static_cast<const T*>(wte), static_cast<const T*>(wpe), slots,
                          tokens, positions, max_position, static_cast<T*>(x), channels);
  });
}

cudaError_t LaunchLayerNorm(KernelDType dtype, void* x, const void* residual,
                            const void* weight, const void* bias, float eps, void* out,
                            int rows, int channels, cudaStream_t stream) {
  if (rows < 1 || channels <= 0) return cudaErrorInvalidValue;
  return WithElementType(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    if (channels % Vec16<T>::kSize != 0) return cudaErrorInvalidValue;
    if (rows <= kMaxFusedRows) {
      return kernel::LaunchOverlapped(LayerNormKernel<T>, dim3(1), dim3(kLinearWarps * 32), 0,
                                      stream, static_cast<T*>(x),
                                      static_cast<const T*>(residual),
                                      static_cast<const T*>(weight),
                                      static_cast<const T*>(bias), eps, static_cast<T*>(out),
                                      rows, channels);
    }
    // A block per row, its vectors in registers (up to 8 per thread).
    const int per_thread = (channels / Vec16<T>::kSize + kRowThreads - 1) / kRowThreads;
    auto launch = [&](auto kernel_function) {
      return kernel::LaunchOverlapped(kernel_function, dim3(rows), dim3(kRowThreads), 0, stream,
                                      static_cast<T*>(x), static_cast<const T*>(residual),
                                      static_cast<const T*>(weight),
                                      static_cast<const T*>(bias), eps, static_cast<T*>(out),
                                      channels);
    };
    if (per_thread <= 1) return launch(RowLayerNormKernel<T, 1>);
    if (per_thread <= 2) return launch(RowLayerNormKernel<T, 2>);
    if (per_thread <= 4) return launch(RowLayerNormKernel<T, 4>);
    if (per_thread <= 8) return launch(RowLayerNormKernel<T, 8>);
    return cudaErrorInvalidValue;
  });
}

cudaError_t LaunchPublishRows(const int64_t* tokens, const float* logprobs, int count,
                              int64_t* host_tokens, float* host_logprobs, cudaStream_t stream) {
  if (count <= 0) return cudaErrorInvalidValue;
  const int threads = 128;
  return kernel::LaunchOverlapped(PublishRowsKernel, dim3((count + threads - 1) / threads),
                                  dim3(threads), 0, stream, tokens, logprobs, count, host_tokens,
                                  host_logprobs);
}

cudaError_t LaunchAdvanceSlots(const SlotStatePointers& state, const int64_t* slots,
                               const int64_t* tokens, int batch, cudaStream_t stream) {
  if (batch <= 0) return cudaErrorInvalidValue;
  const int threads = 128;
  return kernel::LaunchOverlapped(AdvanceSlotsKernel, dim3((batch + threads - 1) / threads),
                                  dim3(threads), 0, stream, state, slots, tokens, batch);
}

}  // namespace tandem
