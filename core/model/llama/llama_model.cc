#include "core/model/llama/llama_model.h"

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/model/attention_masks.h"

namespace tandem {

using at::indexing::Slice;

at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normed.to(x.scalar_type());
}

LlamaModel::LlamaModel(LlamaConfig config, LlamaWeights weights)
    : config_(std::move(config)),
      weights_(std::move(weights)),
      rope_(config_, weights_.embed_tokens.device()),
      scale_(1.0 / std::sqrt(static_cast<double>(config_.head_dim))) {}

KvCacheShape LlamaModel::kv_shape() const {
  KvCacheShape shape;
  shape.num_layers = config_.num_hidden_layers;
  shape.num_kv_heads = config_.num_key_value_heads;
  shape.head_dim = config_.head_dim;
  return shape;
}

LlamaModel::Qkv LlamaModel::Project(int64_t layer, const at::Tensor& h, const at::Tensor& cos,
                                    const at::Tensor& sin, int64_t rows) const {
  const LlamaLayerWeights& w = weights_.layers[layer];
  const int64_t D = config_.head_dim, Hq = config_.num_attention_heads,
                Hkv = config_.num_key_value_heads;
  const at::Tensor qkv = at::linear(h, w.qkv_weight, w.qkv_bias).narrow(0, 0, rows);
  Qkv out;
  out.q = qkv.narrow(1, 0, Hq * D).view({rows, Hq, D});
  out.k = qkv.narrow(1, Hq * D, Hkv * D).view({rows, Hkv, D});
  out.v = qkv.narrow(1, (Hq + Hkv) * D, Hkv * D).view({rows, Hkv, D});
  if (config_.qk_norm) {
    out.q = RmsNorm(out.q, w.q_norm, config_.rms_norm_eps);
    out.k = RmsNorm(out.k, w.k_norm, config_.rms_norm_eps);
  }
  out.q = RotaryEmbedding::Apply(out.q, cos, sin);
  out.k = RotaryEmbedding::Apply(out.k, cos, sin);
  return out;
}

at::Tensor LlamaModel::FinishBlock(int64_t layer, const at::Tensor& x,
                                   const at::Tensor& attn) const {
  const LlamaLayerWeights& w = weights_.layers[layer];
  const int64_t I = config_.intermediate_size;
  const at::Tensor h = x + at::linear(attn, w.o_weight);
  const at::Tensor gate_up = at::linear(RmsNorm(h, w.post_norm, config_.rms_norm_eps),
                                        w.gate_up_weight);  // [N, 2I]
  const at::Tensor act = at::silu(gate_up.narrow(1, 0, I)) * gate_up.narrow(1, I, I);
  return h + at::linear(act, w.down_weight);
}

at::Tensor LlamaModel::Logits(const at::Tensor& x) const {
  const at::Tensor h = RmsNorm(x, weights_.norm, config_.rms_norm_eps);
  const at::Tensor& head = weights_.lm_head.defined() ? weights_.lm_head : weights_.embed_tokens;
  return at::linear(h, head).to(at::kFloat);
}

at::Tensor LlamaModel::PrefillPacked(const PrefillPack& pack, KvCache* cache,
                                     bool all_logits) const {
  return PrefillWithAttention(pack, cache, all_logits, nullptr);
}

at::Tensor LlamaModel::PrefillWithAttention(const PrefillPack& pack, KvCache* cache,
                                            bool all_logits,
                                            const PrefillAttentionFn& attention) const {
  const int64_t T = pack.num_tokens, P = pack.padded_tokens;
  const at::Tensor positions = pack.positions.narrow(0, 0, T);
  at::Tensor x = at::embedding(weights_.embed_tokens, pack.tokens);  // [P, C]
  const auto [cos, sin] = rope_.CosSin(positions, x.scalar_type());
  for (int64_t i = 0; i < config_.num_hidden_layers; ++i) {
    const at::Tensor h = RmsNorm(x, weights_.layers[i].input_norm, config_.rms_norm_eps);
    // Only the real rows [0, T) reach the cache and attention.
    const Qkv qkv = Project(i, h, cos, sin, T);
    AppendPrefillKv(i, qkv.k, qkv.v, pack, cache);
    at::Tensor attn = attention ? attention(i, qkv.q, pack, cache)
                                : SegmentAttention(i, qkv.q, pack, cache);  // [T, Hq D]
    if (P > T) attn = at::cat({attn, at::zeros({P - T, attn.size(1)}, attn.options())});
    x = FinishBlock(i, x, attn);
  }
  return Logits(all_logits ? x.narrow(0, 0, T) : x.index_select(0, pack.last_rows));
}

void LlamaModel::AppendPrefillKv(int64_t layer, const at::Tensor& k, const at::Tensor& v,
                                 const PrefillPack& pack, KvCache* cache) {
  const at::Tensor positions = pack.positions.narrow(0, 0, pack.num_tokens);
  cache->keys(layer).index_put_({pack.slots, Slice(), positions}, k);
  cache->values(layer).index_put_({pack.slots, Slice(), positions}, v);
}

at::Tensor LlamaModel::SegmentAttention(int64_t layer, const at::Tensor& q,
                                        const PrefillPack& pack, KvCache* cache) const {
  const int64_t Hkv = config_.num_key_value_heads, G = config_.kv_groups(),
                D = config_.head_dim;
  std::vector<at::Tensor> outputs;
  int64_t row = 0;
  for (const PrefillSegment& seg : pack.segments) {
    const auto n = static_cast<int64_t>(seg.tokens.size());
    const int64_t end = seg.start + n;
    // Query head h = kv * G + g: [n, Hq, D] -> [Hkv, G n, D].
    const at::Tensor qs = q.narrow(0, row, n).permute({1, 0, 2}).reshape({Hkv, G * n, D});
    const at::Tensor keys = cache->keys(layer)[seg.slot].narrow(1, 0, end);  // [Hkv, end, D]
    const at::Tensor values = cache->values(layer)[seg.slot].narrow(1, 0, end);
    at::Tensor scores = at::matmul(qs, keys.transpose(-1, -2)) * scale_;  // [Hkv, G n, end]
    // Query i sits at position start + i and sees keys [0, start + i]: only
    // the segment's own keys (the last n) are masked, above the diagonal.
    scores.narrow(-1, seg.start, n)
        .masked_fill_(FutureKeyMask(n, G, q.device()), -std::numeric_limits<float>::infinity());
    const at::Tensor probs = at::softmax(scores, -1, at::kFloat).to(q.scalar_type());
    outputs.push_back(
        at::matmul(probs, values).view({Hkv * G, n, D}).permute({1, 0, 2}).reshape({n, -1}));
    row += n;
  }
  return outputs.size() == 1 ? outputs[0] : at::cat(outputs, 0);
}

at::Tensor LlamaModel::GatherAttention(int64_t layer, const at::Tensor& q,
                                       const at::Tensor& slots, const at::Tensor& positions,
                                       int64_t attend_len, KvCache* cache) const {
  const int64_t B = q.size(0), Hkv = config_.num_key_value_heads, G = config_.kv_groups(),
                D = config_.head_dim;
  // [B, 1, 1, attend_len]: true past each row's position.
  const at::Tensor beyond = PastPositionMask(positions, attend_len).view({B, 1, 1, attend_len});
  // Narrowed before the gather: copies [B, KVH, attend_len, D], not every
  // slot position up to the context.
  const at::Tensor keys = cache->keys(layer).narrow(2, 0, attend_len).index_select(0, slots);
  const at::Tensor values = cache->values(layer).narrow(2, 0, attend_len).index_select(0, slots);
  at::Tensor scores =
      at::matmul(q.view({B, Hkv, G, D}), keys.transpose(-1, -2)) * scale_;  // [B, Hkv, G, L]
  scores.masked_fill_(beyond, -std::numeric_limits<float>::infinity());
  const at::Tensor probs = at::softmax(scores, -1, at::kFloat).to(q.scalar_type());
  return at::matmul(probs, values).reshape({B, Hkv * G * D});
}

at::Tensor LlamaModel::Decode(const at::Tensor& slots, const at::Tensor& tokens,
                              const at::Tensor& raw_positions, int64_t attend_len,
                              KvCache* cache) const {
  const int64_t B = tokens.size(0);
  const at::Tensor positions = raw_positions.clamp_max(cache->max_context() - 1);
  at::Tensor x = at::embedding(weights_.embed_tokens, tokens);  // [B, C]
  const auto [cos, sin] = rope_.CosSin(positions, x.scalar_type());
  for (int64_t i = 0; i < config_.num_hidden_layers; ++i) {
    const at::Tensor h = RmsNorm(x, weights_.layers[i].input_norm, config_.rms_norm_eps);
    const Qkv qkv = Project(i, h, cos, sin, B);
    cache->keys(i).index_put_({slots, Slice(), positions}, qkv.k);
    cache->values(i).index_put_({slots, Slice(), positions}, qkv.v);
    x = FinishBlock(i, x, GatherAttention(i, qkv.q, slots, positions, attend_len, cache));
  }
  return Logits(x);
}

}  // namespace tandem
