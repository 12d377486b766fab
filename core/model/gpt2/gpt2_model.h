// GPT-2's forward pass over KV slots, in plain ATen (any device). The CUDA
// fast path (core/model/cuda/gpt2_fused_decoder.h) builds on it.
#ifndef TANDEM_CORE_MODEL_GPT2_GPT2_MODEL_H_
#define TANDEM_CORE_MODEL_GPT2_GPT2_MODEL_H_

#include <cstdint>
#include <functional>
#include <utility>

#include <ATen/ATen.h>

#include "core/model/causal_lm.h"
#include "core/model/gpt2/gpt2_config.h"
#include "core/model/gpt2/gpt2_weights.h"
#include "core/model/kv_cache.h"

namespace tandem {

// Pre-norm blocks, tanh-GELU MLP, learned positions, tied or explicit LM
// head. Owns its weights; stateless otherwise. Threading: engine thread only.
class Gpt2Model : public CausalLm {
 public:
  // How a decode step attends in layer `layer`: given qkv [B, 3, H, D] and
  // the step's slots [B] and clamped positions [B], appends each row's K/V
  // to the cache and returns [B, H, D]. Empty: gather the slots and matmul.
  using DecodeAttentionFn =
      std::function<at::Tensor(int64_t layer, const at::Tensor& qkv, const at::Tensor& slots,
                               const at::Tensor& positions, KvCache* cache)>;

  // How a prefill attends in layer `layer`: given qkv [T, 3, H, D] of the
  // pack's real tokens, whose K/V are already in the cache, returns [T, H, D].
  // Empty: per-segment matmuls over the cache.
  using PrefillAttentionFn = std::function<at::Tensor(
      int64_t layer, const at::Tensor& qkv, const PrefillPack& pack, KvCache* cache)>;

  Gpt2Model(Gpt2Config config, Gpt2Weights weights);

  KvCacheShape kv_shape() const override;
  at::Tensor PrefillPacked(const PrefillPack& pack, KvCache* cache,
                           bool all_logits = false) const override;
  // PrefillPacked with the attention step supplied by the caller.
  at::Tensor PrefillWithAttention(const PrefillPack& pack, KvCache* cache, bool all_logits,
                                  const PrefillAttentionFn& attention) const;
  // Writes the K/V of the pack's real tokens, qkv [T, 3, H, D], at their
  // slots and positions of layer `layer`'s cache (padding rows stay out).
  static void AppendPrefillKv(int64_t layer, const at::Tensor& qkv, const PrefillPack& pack,
                              KvCache* cache);
  at::Tensor Decode(const at::Tensor& slots, const at::Tensor& tokens,
                    const at::Tensor& positions, int64_t attend_len,
                    KvCache* cache) const override;
  // Both as one forward: the pack's padded rows and the decode rows share
  // every projection and MLP GEMM (on the CPU a mixed step reads the
  // weights once instead of twice); attention as the two do it.
  std::pair<at::Tensor, at::Tensor> PrefillAndDecode(const PrefillPack& pack,
                                                     const at::Tensor& slots,
                                                     const at::Tensor& tokens,
                                                     const at::Tensor& positions,
                                                     int64_t attend_len,
                                                     KvCache* cache) const override;
  // Decode with the attention step supplied by the caller (the CUDA kernel);
  // `attend_len` is then unused.
  at::Tensor DecodeWithAttention(const at::Tensor& slots, const at::Tensor& tokens,
                                 const at::Tensor& positions, int64_t attend_len,
                                 KvCache* cache, const DecodeAttentionFn& attention) const;

  // The LM head: float32 [N, V] logits of h [N, C] (after the final
  // LayerNorm).
  at::Tensor HeadLogits(const at::Tensor& h) const;
  // The same in the model's dtype, before the conversion: [N, V], whose rows
  // may be strided (the padded head's output, narrowed to V columns).
  at::Tensor HeadProduct(const at::Tensor& h) const;

  const Gpt2Config& config() const { return config_; }
  const Gpt2Weights& weights() const { return weights_; }

 private:
  // The pack's attention in block `layer`: qkv [P, 3, H, D] (padded rows
  // included) -> [P, C], the real rows' K/V appended to the cache first;
  // `attention` (empty: SegmentAttention) as in PrefillWithAttention.
  at::Tensor PackAttention(int64_t layer, const at::Tensor& qkv, const PrefillPack& pack,
                           KvCache* cache, const PrefillAttentionFn& attention) const;
  // Causal attention of each segment's queries over its slot's cache.
  at::Tensor SegmentAttention(int64_t layer, const at::Tensor& qkv, const PrefillPack& pack,
                              KvCache* cache) const;
  // Gather + matmul attention over positions [0, attend_len) of each slot.
  at::Tensor GatherAttention(int64_t layer, const at::Tensor& qkv, const at::Tensor& slots,
                             const at::Tensor& positions, int64_t attend_len,
                             KvCache* cache) const;
  // Block `layer` on residual stream x [N, C]: LayerNorm, the Q/K/V
  // projection, `attend` (qkv [N, 3, H, D] -> [N, C]), the output
  // projection and the MLP, each with its residual.
  at::Tensor Block(int64_t layer, const at::Tensor& x,
                   const std::function<at::Tensor(const at::Tensor& qkv)>& attend) const;
  // The token and position embeddings of tokens [N] at positions [N].
  at::Tensor Embed(const at::Tensor& tokens, const at::Tensor& positions) const;
  // The MLP half of block `layer`, applied to residual stream x [N, C].
  at::Tensor MlpResidual(int64_t layer, const at::Tensor& x) const;
  at::Tensor Logits(const at::Tensor& x) const;  // [N, C] -> float32 [N, V]

  Gpt2Config config_;
  Gpt2Weights weights_;
  // On CUDA when the vocabulary V is not a multiple of 128: the LM head
  // [V', C] with zero rows up to V' (a multiple of 128); weights_.wte (or
  // lm_head) is then its first V rows, a view of the same memory.
  at::Tensor padded_head_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_GPT2_GPT2_MODEL_H_
