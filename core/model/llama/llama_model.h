// The Llama-style decoder over KV slots, in plain ATen (any device):
// RMSNorm, RoPE (llama3 scaling), grouped-query attention, SwiGLU MLP; Q/K/V
// biases (Qwen2) and per-head Q/K RMSNorm (Qwen3) by configuration.
#ifndef TANDEM_CORE_MODEL_LLAMA_LLAMA_MODEL_H_
#define TANDEM_CORE_MODEL_LLAMA_LLAMA_MODEL_H_

#include <cstdint>
#include <functional>

#include <ATen/ATen.h>

#include "core/model/causal_lm.h"
#include "core/model/kv_cache.h"
#include "core/model/llama/llama_config.h"
#include "core/model/llama/llama_weights.h"
#include "core/model/llama/rotary_embedding.h"

namespace tandem {

// Owns its weights; stateless otherwise. Threading: engine thread only.
// The cache holds K/V heads only ([S, Hkv, L, D]); each group of
// Hq / Hkv query heads reads its K/V head without copies.
class LlamaModel : public CausalLm {
 public:
  // How a prefill attends in layer `layer`: given the queries q [T, Hq, D]
  // (normed and rotated) of the pack's real tokens, whose K/V are already in
  // the cache, returns [T, Hq D]. Empty: per-segment matmuls over the cache.
  using PrefillAttentionFn = std::function<at::Tensor(
      int64_t layer, const at::Tensor& q, const PrefillPack& pack, KvCache* cache)>;

  LlamaModel(LlamaConfig config, LlamaWeights weights);

  KvCacheShape kv_shape() const override;
  at::Tensor PrefillPacked(const PrefillPack& pack, KvCache* cache,
                           bool all_logits = false) const override;
  // PrefillPacked with the attention step supplied by the caller.
  at::Tensor PrefillWithAttention(const PrefillPack& pack, KvCache* cache, bool all_logits,
                                  const PrefillAttentionFn& attention) const;
  // Writes the pack's real tokens' keys and values, k and v [T, Hkv, D], at
  // their slots and positions of layer `layer`'s cache (padding rows stay
  // out).
  static void AppendPrefillKv(int64_t layer, const at::Tensor& k, const at::Tensor& v,
                              const PrefillPack& pack, KvCache* cache);
  at::Tensor Decode(const at::Tensor& slots, const at::Tensor& tokens,
                    const at::Tensor& positions, int64_t attend_len,
                    KvCache* cache) const override;

  const LlamaConfig& config() const { return config_; }
  const LlamaWeights& weights() const { return weights_; }
  const RotaryEmbedding& rope() const { return rope_; }
  // x [N, C] + o_proj(attn) and then + MLP: the rest of block `layer`.
  at::Tensor FinishBlock(int64_t layer, const at::Tensor& x, const at::Tensor& attn) const;
  at::Tensor Logits(const at::Tensor& x) const;  // [N, C] -> float32 [N, V]

 private:
  struct Qkv {
    at::Tensor q;     // [N, Hq, D], normed (Qwen3) and rotated
    at::Tensor k, v;  // [N, Hkv, D]
  };
  // Layer `layer`'s projections of the first `rows` of the normed rows
  // h [N, C], rotated by cos / sin [rows, D] (RotaryEmbedding::CosSin of
  // their positions, computed once per forward for every layer).
  Qkv Project(int64_t layer, const at::Tensor& h, const at::Tensor& cos, const at::Tensor& sin,
              int64_t rows) const;
  // Causal attention of each segment's queries over its slot: [T, Hq D].
  at::Tensor SegmentAttention(int64_t layer, const at::Tensor& q, const PrefillPack& pack,
                              KvCache* cache) const;
  // Each decode row over positions [0, its own] of its slot: [B, Hq D].
  at::Tensor GatherAttention(int64_t layer, const at::Tensor& q, const at::Tensor& slots,
                             const at::Tensor& positions, int64_t attend_len,
                             KvCache* cache) const;
  LlamaConfig config_;
  LlamaWeights weights_;
  RotaryEmbedding rope_;
  double scale_;  // 1 / sqrt(head_dim)
};

// transformers' LlamaRMSNorm: normalized in float32, cast back, then scaled.
at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_LLAMA_LLAMA_MODEL_H_
