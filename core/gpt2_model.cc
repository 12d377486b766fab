#include "core/gpt2_model.h"

#include <cmath>
#include <limits>
#include <tuple>

#if TANDEM_WITH_CUDA
#include "core/cuda/decode_ops.h"
#endif

namespace tandem {

using at::indexing::Slice;

Gpt2Model::Gpt2Model(Gpt2Config config, Gpt2Weights weights)
    : config_(std::move(config)), weights_(std::move(weights)) {
#if TANDEM_WITH_CUDA
  if (weights_.wte.is_cuda()) {
    // Keep each projection's logical [K, N] shape but store it as [N, K]
    // (each output's weights contiguous), the layout the fused decode kernels
    // read; ATen's matmuls take either layout without copies.
    for (Gpt2LayerWeights& w : weights_.layers) {
      for (at::Tensor* weight : {&w.attn_weight, &w.attn_proj_weight, &w.mlp_fc_weight,
                                 &w.mlp_proj_weight}) {
        *weight = weight->t().contiguous().t();
      }
    }
    attention_kernel_ = AttentionKernelSupports(weights_.wte.scalar_type(), config_.head_dim());
    fused_decode_ = FusedDecodeSupports(weights_.wte.scalar_type(), config_.n_embd,
                                        config_.inner_size(), config_.head_dim());
  }
#endif
}

at::Tensor Gpt2Model::MlpResidual(int64_t layer, const at::Tensor& x) const {
  const Gpt2LayerWeights& w = weights_.layers[layer];
  const at::Tensor h = at::layer_norm(x, {config_.n_embd}, w.ln_2_weight,
                                      w.ln_2_bias, config_.layer_norm_epsilon);
#if TANDEM_WITH_CUDA
  // cuBLASLt fuses bias and tanh-GELU into the GEMM's epilogue.
  const at::Tensor inner =
      h.is_cuda() ? at::_addmm_activation(w.mlp_fc_bias, h, w.mlp_fc_weight, 1, 1,
                                          /*use_gelu=*/true)
                  : at::gelu(at::addmm(w.mlp_fc_bias, h, w.mlp_fc_weight), "tanh");
#else
  const at::Tensor inner =
      at::gelu(at::addmm(w.mlp_fc_bias, h, w.mlp_fc_weight), "tanh");
#endif
  return x + at::addmm(w.mlp_proj_bias, inner, w.mlp_proj_weight);
}

at::Tensor Gpt2Model::Logits(const at::Tensor& x) const {
  const at::Tensor h = at::layer_norm(x, {config_.n_embd}, weights_.ln_f_weight,
                                      weights_.ln_f_bias, config_.layer_norm_epsilon);
  const at::Tensor& head =
      weights_.lm_head.defined() ? weights_.lm_head : weights_.wte;
  return at::matmul(h, head.t()).to(at::kFloat);
}

at::Tensor Gpt2Model::Prefill(int64_t slot, const at::Tensor& tokens,
                              KvCache* cache, bool all_logits) const {
  const int64_t T = tokens.size(0), C = config_.n_embd, H = config_.n_head,
                D = config_.head_dim();
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  const at::Tensor positions = at::arange(T, tokens.options());
  at::Tensor x = at::embedding(weights_.wte, tokens) +
                 at::embedding(weights_.wpe, positions);  // [T, C]
  const at::Tensor future = at::ones({T, T}, tokens.options().dtype(at::kBool)).triu(1);
  cache->EnsureLength(T);
  for (int64_t i = 0; i < config_.n_layer; ++i) {
    const Gpt2LayerWeights& w = weights_.layers[i];
    const at::Tensor h = at::layer_norm(x, {C}, w.ln_1_weight, w.ln_1_bias,
                                        config_.layer_norm_epsilon);
    // [T, 3C] -> [3, H, T, D]
    const at::Tensor qkv =
        at::addmm(w.attn_bias, h, w.attn_weight).view({T, 3, H, D}).permute({1, 2, 0, 3});
    const at::Tensor q = qkv[0], k = qkv[1], v = qkv[2];
    cache->keys(i)[slot].narrow(1, 0, T).copy_(k);
    cache->values(i)[slot].narrow(1, 0, T).copy_(v);
    at::Tensor scores = at::matmul(q, k.transpose(-1, -2)) * scale;  // [H, T, T]
    scores.masked_fill_(future, -std::numeric_limits<float>::infinity());
    const at::Tensor attn = at::matmul(at::softmax(scores, -1), v)  // [H, T, D]
                                .permute({1, 0, 2})
                                .reshape({T, C});
    x = x + at::addmm(w.attn_proj_bias, attn, w.attn_proj_weight);
    x = MlpResidual(i, x);
  }
  return Logits(all_logits ? x : x.narrow(0, T - 1, 1));
}

at::Tensor Gpt2Model::Decode(const at::Tensor& slots, const at::Tensor& tokens,
                             const at::Tensor& raw_positions, int64_t attend_len,
                             KvCache* cache) const {
  const int64_t B = tokens.size(0), C = config_.n_embd, H = config_.n_head,
                D = config_.head_dim();
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  // A sequence that already finished may run one extra (discarded) step in
  // the pipelined engine; clamping keeps its writes inside its own slot.
#if TANDEM_WITH_CUDA
  if (UsesFusedDecode(B, *cache)) {
    return DecodeFused(slots, tokens, raw_positions, /*by_slot=*/false, /*greedy=*/false, cache)
        .logits;
  }
#endif
  const at::Tensor positions = raw_positions.clamp_max(cache->max_context() - 1);
  at::Tensor x = at::embedding(weights_.wte, tokens) +
                 at::embedding(weights_.wpe, positions);  // [B, C]
  const bool use_kernel = UsesDecodeKernel(*cache);
  at::Tensor beyond;  // [B, 1, attend_len]: true past each sequence's end
  if (!use_kernel) {
    cache->EnsureLength(attend_len);
    beyond = (at::arange(attend_len, positions.options()).unsqueeze(0) >
              positions.unsqueeze(1)).unsqueeze(1);
  }
  for (int64_t i = 0; i < config_.n_layer; ++i) {
    const Gpt2LayerWeights& w = weights_.layers[i];
    const at::Tensor h = at::layer_norm(x, {C}, w.ln_1_weight, w.ln_1_bias,
                                        config_.layer_norm_epsilon);
    const at::Tensor qkv = at::addmm(w.attn_bias, h, w.attn_weight).view({B, 3, H, D});
    at::Tensor& k_cache = cache->keys(i);
    at::Tensor& v_cache = cache->values(i);
    at::Tensor attn;  // [B, C]
#if TANDEM_WITH_CUDA
    if (use_kernel) {
      // Appends K/V and attends over each slot's own length in one launch.
      attn = DecodeAttention(qkv, k_cache, v_cache, slots, positions, /*positions_by_slot=*/false,
                             scale)
                 .reshape({B, C});
    }
#endif
    if (!use_kernel) {
      const at::Tensor q = qkv.select(1, 0), k = qkv.select(1, 1), v = qkv.select(1, 2);
      k_cache.index_put_({slots, Slice(), positions}, k);  // [B, H, D]
      v_cache.index_put_({slots, Slice(), positions}, v);
      const at::Tensor keys = k_cache.index_select(0, slots).narrow(2, 0, attend_len);
      const at::Tensor values = v_cache.index_select(0, slots).narrow(2, 0, attend_len);
      at::Tensor scores =
          at::matmul(q.unsqueeze(2), keys.transpose(-1, -2)).squeeze(2) * scale;  // [B, H, L]
      scores.masked_fill_(beyond, -std::numeric_limits<float>::infinity());
      attn = at::matmul(at::softmax(scores, -1).unsqueeze(2), values).reshape({B, C});
    }
    x = x + at::addmm(w.attn_proj_bias, attn, w.attn_proj_weight);
    x = MlpResidual(i, x);
  }
  return Logits(x);
}

#if TANDEM_WITH_CUDA
Gpt2Model::SlotDecode Gpt2Model::DecodeSlots(const at::Tensor& slots,
                                             const at::Tensor& slot_tokens,
                                             const at::Tensor& slot_positions, bool greedy,
                                             KvCache* cache) const {
  if (UsesFusedDecode(slots.size(0), *cache)) {
    return DecodeFused(slots, slot_tokens, slot_positions, /*by_slot=*/true, greedy, cache);
  }
  SlotDecode out{Decode(slots, slot_tokens.index_select(0, slots),
                        slot_positions.index_select(0, slots), /*attend_len=*/0, cache)};
  if (greedy) std::tie(out.tokens, out.logprobs) = GreedyTokens(out.logits);
  return out;
}

Gpt2Model::SlotDecode Gpt2Model::DecodeFused(const at::Tensor& slots, const at::Tensor& tokens,
                                             const at::Tensor& positions, bool by_slot,
                                             bool greedy, KvCache* cache) const {
  // Five kernels per layer; positions past the context are clamped inside.
  const int64_t B = slots.size(0), C = config_.n_embd, H = config_.n_head,
                D = config_.head_dim();
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  const double eps = config_.layer_norm_epsilon;
  const at::Tensor index = by_slot ? slots : at::Tensor();  // how tokens, positions are read
  at::Tensor x = EmbedTokens(weights_.wte, weights_.wpe, index, tokens, positions,
                             cache->max_context() - 1);  // [B, C], the residual stream
  for (int64_t i = 0; i < config_.n_layer; ++i) {
    const Gpt2LayerWeights& w = weights_.layers[i];
    const at::Tensor qkv = NormLinear(x, {w.ln_1_weight, w.ln_1_bias, eps}, w.attn_weight.t(),
                                      w.attn_bias, /*gelu=*/false)
                               .view({B, 3, H, D});
    const at::Tensor attn =
        DecodeAttention(qkv, cache->keys(i), cache->values(i), slots, positions, by_slot, scale)
            .view({B, C});
    LinearAddResidual(attn, w.attn_proj_weight.t(), w.attn_proj_bias, x);
    const at::Tensor inner = NormLinear(x, {w.ln_2_weight, w.ln_2_bias, eps},
                                        w.mlp_fc_weight.t(), w.mlp_fc_bias, /*gelu=*/true);
    LinearAddResidual(inner, w.mlp_proj_weight.t(), w.mlp_proj_bias, x);
  }
  const at::Tensor h = LayerNorm(x, {weights_.ln_f_weight, weights_.ln_f_bias, eps});
  const at::Tensor& head = weights_.lm_head.defined() ? weights_.lm_head : weights_.wte;
  SlotDecode out{LmHeadLogits(h, head)};
  if (greedy) std::tie(out.tokens, out.logprobs) = GreedyTokens(out.logits);
  return out;
}
#endif

bool Gpt2Model::UsesFusedDecode(int64_t rows, const KvCache& cache) const {
#if TANDEM_WITH_CUDA
  return fused_decode_ && UsesDecodeKernel(cache) && rows <= kMaxFusedRows;
#else
  (void)rows;
  (void)cache;
  return false;
#endif
}

bool Gpt2Model::UsesDecodeKernel(const KvCache& cache) const {
#if TANDEM_WITH_CUDA
  return use_decode_kernel_ && attention_kernel_ && cache.keys_const(0).is_cuda() &&
         !cache.grows();
#else
  (void)cache;
  return false;
#endif
}

}  // namespace tandem
