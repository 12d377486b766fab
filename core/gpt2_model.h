// GPT-2's forward pass over static KV slots.
#ifndef TANDEM_CORE_GPT2_MODEL_H_
#define TANDEM_CORE_GPT2_MODEL_H_

#include <cstdint>

#include <ATen/ATen.h>

#include "core/gpt2_config.h"
#include "core/gpt2_weights.h"
#include "core/kv_cache.h"

namespace tandem {

// Stateless apart from its weights: K/V live in the KvCache passed in.
// Threading: engine thread only (the cache is written in place).
class Gpt2Model {
 public:
  Gpt2Model(Gpt2Config config, Gpt2Weights weights);

  // Runs a prompt `tokens` [T] (int64, on the model's device) for `slot`,
  // writing its K/V at positions [0, T). Returns float32 logits [T, V] when
  // `all_logits`, else the last position's logits [1, V].
  at::Tensor Prefill(int64_t slot, const at::Tensor& tokens, KvCache* cache,
                     bool all_logits = false) const;

  // One decode step for B sequences: `slots`, `tokens`, `positions` are [B]
  // int64 on the device; token b is written at position positions[b] of slot
  // slots[b] (clamped to max_context - 1), and attends to positions
  // [0, positions[b]]. On CUDA a kernel reads each slot up to its own length
  // and `attend_len` is ignored, so the step has static shapes (CUDA graphs);
  // elsewhere `attend_len` must be > every position (the host knows it:
  // max(positions) + 1). Never synchronizes with the host. Returns float32
  // logits [B, V].
  at::Tensor Decode(const at::Tensor& slots, const at::Tensor& tokens,
                    const at::Tensor& positions, int64_t attend_len,
                    KvCache* cache) const;

#if TANDEM_WITH_CUDA
  // What DecodeSlots returns: logits [B, V] float32, and with `greedy` each
  // row's greedy token [B] int64 and its log-probability [B] float32.
  struct SlotDecode {
    at::Tensor logits;
    at::Tensor tokens;
    at::Tensor logprobs;
  };
  // One decode step as the CUDA runner runs it: row b is slot slots[b] [B],
  // and its token and position are slot_tokens[slots[b]] and
  // slot_positions[slots[b]] (per-slot state [S] int64 on the device); as
  // Decode otherwise. With `greedy`, also picks each row's greedy token (the
  // first maximum) on the device. Never synchronizes with the host.
  SlotDecode DecodeSlots(const at::Tensor& slots, const at::Tensor& slot_tokens,
                         const at::Tensor& slot_positions, bool greedy, KvCache* cache) const;
#endif
  // Off: CUDA decode uses the gather + matmul path too (tests compare both).
  void set_use_decode_kernel(bool use) { use_decode_kernel_ = use; }
  // The attention kernel (CUDA cache, kernel on).
  bool UsesDecodeKernel(const KvCache& cache) const;
  // The fused decode path: attention kernel plus fused projections, for
  // batches of at most kMaxFusedRows rows (larger batches use cuBLAS).
  bool UsesFusedDecode(int64_t rows, const KvCache& cache) const;

  const Gpt2Config& config() const { return config_; }
  const Gpt2Weights& weights() const { return weights_; }

 private:
  // The MLP half of block `layer`, applied to residual stream x [N, C].
  at::Tensor MlpResidual(int64_t layer, const at::Tensor& x) const;
  at::Tensor Logits(const at::Tensor& x) const;  // [N, C] -> float32 [N, V]

#if TANDEM_WITH_CUDA
  // Decode through the fused kernels: embedding, then per layer
  // LN+QKV, attention, out-projection+residual, LN+FC+GELU, projection+residual,
  // then LN, LM head (+ greedy choice). `tokens` and `positions` are per row
  // [B], or per slot [S] when `by_slot`.
  SlotDecode DecodeFused(const at::Tensor& slots, const at::Tensor& tokens,
                         const at::Tensor& positions, bool by_slot, bool greedy,
                         KvCache* cache) const;
#endif

  Gpt2Config config_;
  Gpt2Weights weights_;  // on CUDA, projections are stored transposed (see the constructor)
  bool use_decode_kernel_ = true;
  bool attention_kernel_ = false;  // the dtype and head size suit the attention kernel
  bool fused_decode_ = false;      // ... and the other shapes suit the fused kernels
};

}  // namespace tandem

#endif  // TANDEM_CORE_GPT2_MODEL_H_
