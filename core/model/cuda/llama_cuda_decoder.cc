#include "core/model/cuda/llama_cuda_decoder.h"

#include <cmath>
#include <utility>

#include "core/model/cuda/cuda_support.h"
#include "core/model/cuda/decode_ops.h"
#include "core/model/cuda/gemv_kernel.h"
#include "core/model/cuda/llama_ops.h"
#include "core/model/cuda/prefill_attention.h"

namespace tandem {

LlamaCudaDecoder::LlamaCudaDecoder(LlamaConfig config, LlamaWeights weights)
    : model_(std::move(config), std::move(weights)) {
  const at::ScalarType dtype = model_.weights().embed_tokens.scalar_type();
  const LlamaConfig& c = model_.config();
  const int64_t D = c.head_dim;
  decode_kernels_ =
      AttentionKernelSupports(dtype, D, c.num_attention_heads / c.num_key_value_heads);
  prefill_kernel_ = AttentionKernelSupports(dtype, D) && PrefillAttentionSupports(dtype, D);
  const KernelDType type = KernelDTypeOf(dtype);
  gemv_kernels_ = GemvSupports(type, static_cast<int>(c.hidden_size)) &&
                  GemvSupports(type, static_cast<int>(c.num_attention_heads * D)) &&
                  GemvSupports(type, static_cast<int>(c.intermediate_size));
  const auto options = model_.weights().embed_tokens.options();
  zero_hidden_ = at::zeros({c.hidden_size}, options);
  zero_gate_up_ = at::zeros({2 * int64_t{c.intermediate_size}}, options);
  zero_qkv_ = at::zeros({(int64_t{c.num_attention_heads} + 2 * c.num_key_value_heads) * D},
                        options);
}

namespace {

// x weight^T (+ bias when defined) through cuBLAS.
at::Tensor Dense(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return bias.defined() ? at::addmm(bias, x, weight.t()) : at::mm(x, weight.t());
}

}  // namespace

at::Tensor LlamaCudaDecoder::PrefillPacked(const PrefillPack& pack, KvCache* cache,
                                           bool all_logits) const {
  if (!prefill_kernel_) return model_.PrefillPacked(pack, cache, all_logits);
  const LlamaConfig& c = model_.config();
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
  if (!decode_kernels_) {  // LlamaModel's forward with the attention kernel
    return model_.PrefillWithAttention(
        pack, cache, all_logits,
        [scale](int64_t layer, const at::Tensor& q, const PrefillPack& p, KvCache* kv) {
          return PrefillAttention(q, kv->keys(layer), kv->values(layer), p, scale)
              .view({q.size(0), -1});
        });
  }
  // The pack's P padded rows as one batch of the cuBLAS decode path (the
  // embedding, RMSNorm, Q/K norm + RoPE and SwiGLU kernels); only the T real
  // rows reach the cache and attention.
  const LlamaWeights& w = model_.weights();
  const int64_t T = pack.num_tokens, P = pack.padded_tokens, Hq = c.num_attention_heads,
                Hkv = c.num_key_value_heads, D = c.head_dim;
  const double eps = c.rms_norm_eps;
  at::Tensor x = EmbedTokens(w.embed_tokens, at::Tensor(), at::Tensor(), pack.tokens,
                             at::Tensor(), 0);  // [P, C]
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const LlamaLayerWeights& l = w.layers[i];
    at::Tensor qkv = QkvProjection(x, l, Path::kCublas).view({P, Hq + 2 * Hkv, D});
    QkNormRope(qkv, Hq, l.q_norm, l.k_norm, eps, model_.rope().inv_freq(), at::Tensor(),
               pack.positions, cache->max_context() - 1);
    const at::Tensor real = qkv.narrow(0, 0, T);
    LlamaModel::AppendPrefillKv(i, real.narrow(1, Hq, Hkv), real.narrow(1, Hq + Hkv, Hkv), pack,
                                cache);
    at::Tensor attn = PrefillAttention(real.narrow(1, 0, Hq), cache->keys(i), cache->values(i),
                                       pack, scale)
                          .view({T, Hq * D});
    if (P > T) attn = at::cat({attn, at::zeros({P - T, Hq * D}, attn.options())});
    AddOutputAndMlp(attn, l, Path::kCublas, x);
  }
  const at::Tensor rows = all_logits ? x.narrow(0, 0, T) : x.index_select(0, pack.last_rows);
  const at::Tensor& head = w.lm_head.defined() ? w.lm_head : w.embed_tokens;
  return at::mm(FusedRmsNorm(rows, w.norm, eps), head.t()).to(at::kFloat);
}

at::Tensor LlamaCudaDecoder::Decode(const at::Tensor& slots, const at::Tensor& tokens,
                                    const at::Tensor& positions, int64_t attend_len,
                                    KvCache* cache) const {
  if (!decode_kernels_) return model_.Decode(slots, tokens, positions, attend_len, cache);
  return Step(slots, tokens, positions, /*by_slot=*/false, /*greedy=*/false, cache).logits;
}

CausalLm::SlotDecode LlamaCudaDecoder::DecodeSlots(const at::Tensor& slots,
                                                   const at::Tensor& slot_tokens,
                                                   const at::Tensor& slot_positions,
                                                   bool greedy, KvCache* cache) const {
  if (!decode_kernels_) {
    return CausalLm::DecodeSlots(slots, slot_tokens, slot_positions, greedy, cache);
  }
  return Step(slots, slot_tokens, slot_positions, /*by_slot=*/true, greedy, cache);
}

at::Tensor LlamaCudaDecoder::QkvProjection(const at::Tensor& x, const LlamaLayerWeights& l,
                                           Path path) const {
  const double eps = model_.config().rms_norm_eps;
  if (path == Path::kGemv) return NormProjection(x, l.input_norm, eps, l.qkv_weight, l.qkv_bias);
  const at::Tensor h = FusedRmsNorm(x, l.input_norm, eps);
  if (path == Path::kCublas) return Dense(h, l.qkv_weight, l.qkv_bias);
  return SmallBatchLinear(h, l.qkv_weight, l.qkv_bias.defined() ? l.qkv_bias : zero_qkv_);
}

void LlamaCudaDecoder::AddOutputAndMlp(const at::Tensor& attn, const LlamaLayerWeights& l,
                                       Path path, at::Tensor& x) const {
  const double eps = model_.config().rms_norm_eps;
  switch (path) {
    case Path::kGemv:  // in place
      ProjectionAddResidual(attn, l.o_weight, x);
      ProjectionAddResidual(NormSwiGluProjection(x, l.post_norm, eps, l.gate_up_weight),
                            l.down_weight, x);
      return;
    case Path::kFusedLinear: {  // in place
      LinearAddResidual(attn, l.o_weight, zero_hidden_, /*cluster=*/false, x);
      const at::Tensor gate_up =
          SmallBatchLinear(FusedRmsNorm(x, l.post_norm, eps), l.gate_up_weight, zero_gate_up_);
      LinearAddResidual(SwiGlu(gate_up), l.down_weight, zero_hidden_, /*cluster=*/false, x);
      return;
    }
    case Path::kCublas: {  // the residual added in the GEMMs
      x = at::addmm(x, attn, l.o_weight.t());
      const at::Tensor gate_up = at::mm(FusedRmsNorm(x, l.post_norm, eps), l.gate_up_weight.t());
      x = at::addmm(x, SwiGlu(gate_up), l.down_weight.t());
      return;
    }
  }
}

CausalLm::SlotDecode LlamaCudaDecoder::Step(const at::Tensor& slots, const at::Tensor& tokens,
                                            const at::Tensor& positions, bool by_slot,
                                            bool greedy, KvCache* cache) const {
  const LlamaConfig& c = model_.config();
  const LlamaWeights& w = model_.weights();
  const int64_t B = slots.size(0), Hq = c.num_attention_heads, Hkv = c.num_key_value_heads,
                D = c.head_dim;
  const double eps = c.rms_norm_eps, scale = 1.0 / std::sqrt(static_cast<double>(D));
  const at::Tensor index = by_slot ? slots : at::Tensor();  // how positions are read
  const Path path = gemv_kernels_ && B == 1 ? Path::kGemv
                    : B <= kMaxFusedRows        ? Path::kFusedLinear
                                                : Path::kCublas;
  // RoPE (and Qwen3's Q/K norms) inside the attention kernel where it can.
  const bool rope_in_attention =
      DecodeAttentionRotates(static_cast<int>(B), static_cast<int>(Hq), static_cast<int>(Hkv));
  // One gather kernel, the step's first, a plain launch (see LaunchEmbedTokens).
  at::Tensor x = EmbedTokens(w.embed_tokens, at::Tensor(), index, tokens, at::Tensor(), 0);
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const LlamaLayerWeights& l = w.layers[i];
    at::Tensor qkv = QkvProjection(x, l, path).view({B, Hq + 2 * Hkv, D});
    const DecodeRope rope{model_.rope().inv_freq(), l.q_norm, l.k_norm, eps};
    if (!rope_in_attention) {
      QkNormRope(qkv, Hq, l.q_norm, l.k_norm, eps, rope.inv_freq, index, positions,
                 cache->max_context() - 1);
    }
    const at::Tensor attn =
        GroupedDecodeAttention(qkv, Hq, cache->keys(i), cache->values(i), slots, positions,
                               by_slot, scale, rope_in_attention ? &rope : nullptr)
            .view({B, Hq * D});
    AddOutputAndMlp(attn, l, path, x);
  }
  const at::Tensor& head = w.lm_head.defined() ? w.lm_head : w.embed_tokens;
  const at::Tensor logits = at::mm(FusedRmsNorm(x, w.norm, eps), head.t());
  if (greedy) return GreedyDecode(logits, /*convert=*/false);
  return {logits.to(at::kFloat)};
}

}  // namespace tandem
