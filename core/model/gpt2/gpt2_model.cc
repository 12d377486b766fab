#include "core/model/gpt2/gpt2_model.h"

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/model/attention_masks.h"

namespace tandem {

using at::indexing::Slice;

namespace {

// Rows of the LM head stored on CUDA: the vocabulary rounded up to this, so
// the logits' rows (the GEMM's leading dimension) stay 16-byte aligned and
// cuBLAS picks its tensor-core kernels (GPT-2's 50,257 is odd: it took an
// sm75 kernel with 1-element alignment, 155 us of a 64-row step).
constexpr int64_t kHeadRowMultiple = 128;

}  // namespace

Gpt2Model::Gpt2Model(Gpt2Config config, Gpt2Weights weights)
    : config_(std::move(config)), weights_(std::move(weights)) {
  at::Tensor& head = weights_.lm_head.defined() ? weights_.lm_head : weights_.wte;
  const int64_t V = head.size(0);
  if (head.is_cuda() && V % kHeadRowMultiple != 0) {
    padded_head_ = at::zeros({(V / kHeadRowMultiple + 1) * kHeadRowMultiple, head.size(1)},
                             head.options());
    padded_head_.narrow(0, 0, V).copy_(head);
    head = padded_head_.narrow(0, 0, V);  // the same bytes: no second copy of the head
  }
}

KvCacheShape Gpt2Model::kv_shape() const {
  KvCacheShape shape;
  shape.num_layers = config_.n_layer;
  shape.num_kv_heads = config_.n_head;
  shape.head_dim = config_.head_dim();
  return shape;
}

at::Tensor Gpt2Model::Embed(const at::Tensor& tokens, const at::Tensor& positions) const {
  return at::embedding(weights_.wte, tokens) + at::embedding(weights_.wpe, positions);
}

at::Tensor Gpt2Model::Block(int64_t layer, const at::Tensor& x,
                            const std::function<at::Tensor(const at::Tensor& qkv)>& attend) const {
  const Gpt2LayerWeights& w = weights_.layers[layer];
  const int64_t N = x.size(0), C = config_.n_embd;
  const at::Tensor h =
      at::layer_norm(x, {C}, w.ln_1_weight, w.ln_1_bias, config_.layer_norm_epsilon);
  const at::Tensor qkv =
      at::addmm(w.attn_bias, h, w.attn_weight).view({N, 3, config_.n_head, config_.head_dim()});
  return MlpResidual(layer, x + at::addmm(w.attn_proj_bias, attend(qkv), w.attn_proj_weight));
}

at::Tensor Gpt2Model::MlpResidual(int64_t layer, const at::Tensor& x) const {
  const Gpt2LayerWeights& w = weights_.layers[layer];
  const at::Tensor h = at::layer_norm(x, {config_.n_embd}, w.ln_2_weight,
                                      w.ln_2_bias, config_.layer_norm_epsilon);
  // On CUDA, cuBLASLt fuses bias and tanh-GELU into the GEMM's epilogue.
  const at::Tensor inner =
      h.is_cuda() ? at::_addmm_activation(w.mlp_fc_bias, h, w.mlp_fc_weight, 1, 1,
                                          /*use_gelu=*/true)
                  : at::gelu(at::addmm(w.mlp_fc_bias, h, w.mlp_fc_weight), "tanh");
  return x + at::addmm(w.mlp_proj_bias, inner, w.mlp_proj_weight);
}

at::Tensor Gpt2Model::Logits(const at::Tensor& x) const {
  return HeadLogits(at::layer_norm(x, {config_.n_embd}, weights_.ln_f_weight,
                                   weights_.ln_f_bias, config_.layer_norm_epsilon));
}

at::Tensor Gpt2Model::HeadLogits(const at::Tensor& h) const {
  return HeadProduct(h).to(at::kFloat).contiguous();
}

at::Tensor Gpt2Model::HeadProduct(const at::Tensor& h) const {
  const at::Tensor& head = weights_.lm_head.defined() ? weights_.lm_head : weights_.wte;
  if (padded_head_.defined()) {  // the padding's columns dropped
    return at::matmul(h, padded_head_.t()).narrow(-1, 0, head.size(0));
  }
  return at::matmul(h, head.t());
}

at::Tensor Gpt2Model::PrefillPacked(const PrefillPack& pack, KvCache* cache,
                                     bool all_logits) const {
  return PrefillWithAttention(pack, cache, all_logits, nullptr);
}

at::Tensor Gpt2Model::PrefillWithAttention(const PrefillPack& pack, KvCache* cache,
                                           bool all_logits,
                                           const PrefillAttentionFn& attention) const {
  const int64_t T = pack.num_tokens;
  at::Tensor x = Embed(pack.tokens, pack.positions);  // [P, C]
  for (int64_t i = 0; i < config_.n_layer; ++i) {
    x = Block(i, x, [&](const at::Tensor& qkv) {
      return PackAttention(i, qkv, pack, cache, attention);
    });
  }
  return Logits(all_logits ? x.narrow(0, 0, T) : x.index_select(0, pack.last_rows));
}

at::Tensor Gpt2Model::PackAttention(int64_t layer, const at::Tensor& qkv,
                                    const PrefillPack& pack, KvCache* cache,
                                    const PrefillAttentionFn& attention) const {
  const int64_t T = pack.num_tokens, P = pack.padded_tokens, C = config_.n_embd;
  // [P, 3, H, D] -> the real rows [T, 3, H, D]; padding rows stay out of the cache.
  const at::Tensor real = qkv.narrow(0, 0, T);
  AppendPrefillKv(layer, real, pack, cache);
  at::Tensor attn = (attention ? attention(layer, real, pack, cache)
                               : SegmentAttention(layer, real, pack, cache))
                        .reshape({T, C});
  if (P > T) attn = at::cat({attn, at::zeros({P - T, C}, attn.options())});
  return attn;  // [P, C]
}

std::pair<at::Tensor, at::Tensor> Gpt2Model::PrefillAndDecode(
    const PrefillPack& pack, const at::Tensor& slots, const at::Tensor& tokens,
    const at::Tensor& raw_positions, int64_t attend_len, KvCache* cache) const {
  const int64_t P = pack.padded_tokens, B = tokens.size(0), C = config_.n_embd;
  const at::Tensor positions = raw_positions.clamp_max(cache->max_context() - 1);
  // Rows [0, P): the pack; [P, P + B): the decode rows.
  at::Tensor x = at::cat({Embed(pack.tokens, pack.positions), Embed(tokens, positions)});
  for (int64_t i = 0; i < config_.n_layer; ++i) {
    x = Block(i, x, [&](const at::Tensor& qkv) {
      const at::Tensor decoded =
          GatherAttention(i, qkv.narrow(0, P, B), slots, positions, attend_len, cache);
      return at::cat({PackAttention(i, qkv.narrow(0, 0, P), pack, cache, nullptr),
                      decoded.reshape({B, C})});
    });
  }
  // One LM head over both parts' rows (on the CPU its weights are most of
  // a small model's): each segment's last token, then the decode rows.
  const int64_t S = pack.last_rows.size(0);
  const at::Tensor logits =
      Logits(at::cat({x.narrow(0, 0, P).index_select(0, pack.last_rows), x.narrow(0, P, B)}));
  return {logits.narrow(0, 0, S), logits.narrow(0, S, B)};
}

void Gpt2Model::AppendPrefillKv(int64_t layer, const at::Tensor& qkv, const PrefillPack& pack,
                                KvCache* cache) {
  const at::Tensor positions = pack.positions.narrow(0, 0, pack.num_tokens);
  cache->keys(layer).index_put_({pack.slots, Slice(), positions}, qkv.select(1, 1));
  cache->values(layer).index_put_({pack.slots, Slice(), positions}, qkv.select(1, 2));
}

at::Tensor Gpt2Model::SegmentAttention(int64_t layer, const at::Tensor& qkv,
                                       const PrefillPack& pack, KvCache* cache) const {
  const double scale = 1.0 / std::sqrt(static_cast<double>(config_.head_dim()));
  std::vector<at::Tensor> outputs;
  int64_t row = 0;
  for (const PrefillSegment& seg : pack.segments) {
    const auto n = static_cast<int64_t>(seg.tokens.size());
    const int64_t end = seg.start + n;
    // [H, n, D], contiguous: a strided query makes the CPU's batched matmul
    // several times slower at long contexts.
    const at::Tensor q = qkv.narrow(0, row, n).select(1, 0).transpose(0, 1).contiguous();
    const at::Tensor keys = cache->keys(layer)[seg.slot].narrow(1, 0, end);   // [H, end, D]
    const at::Tensor values = cache->values(layer)[seg.slot].narrow(1, 0, end);
    at::Tensor scores = at::matmul(q, keys.transpose(-1, -2)).mul_(scale);  // [H, n, end]
    // Query i sits at position start + i and sees keys [0, start + i]: only
    // the segment's own keys (the last n) are masked, above the diagonal.
    scores.narrow(-1, seg.start, n)
        .masked_fill_(FutureKeyMask(n, 1, qkv.device()), -std::numeric_limits<float>::infinity());
    outputs.push_back(at::matmul(at::softmax(scores, -1), values).transpose(0, 1));  // [n, H, D]
    row += n;
  }
  return outputs.size() == 1 ? outputs[0] : at::cat(outputs, 0);
}

at::Tensor Gpt2Model::GatherAttention(int64_t layer, const at::Tensor& qkv,
                                      const at::Tensor& slots, const at::Tensor& positions,
                                      int64_t attend_len, KvCache* cache) const {
  const int64_t B = qkv.size(0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(config_.head_dim()));
  // [B, 1, attend_len]: true past each sequence's end.
  const at::Tensor beyond = PastPositionMask(positions, attend_len).unsqueeze(1);
  at::Tensor& k_cache = cache->keys(layer);
  at::Tensor& v_cache = cache->values(layer);
  const at::Tensor q = qkv.select(1, 0), k = qkv.select(1, 1), v = qkv.select(1, 2);
  k_cache.index_put_({slots, Slice(), positions}, k);  // [B, H, D]
  v_cache.index_put_({slots, Slice(), positions}, v);
  // Narrowed before the gather: copies [B, H, attend_len, D], not every slot
  // position up to the context.
  const at::Tensor keys = k_cache.narrow(2, 0, attend_len).index_select(0, slots);
  const at::Tensor values = v_cache.narrow(2, 0, attend_len).index_select(0, slots);
  at::Tensor scores =
      at::matmul(q.unsqueeze(2), keys.transpose(-1, -2)).squeeze(2) * scale;  // [B, H, L]
  scores.masked_fill_(beyond, -std::numeric_limits<float>::infinity());
  return at::matmul(at::softmax(scores, -1).unsqueeze(2), values).view({B, config_.n_head, -1});
}

at::Tensor Gpt2Model::Decode(const at::Tensor& slots, const at::Tensor& tokens,
                             const at::Tensor& positions, int64_t attend_len,
                             KvCache* cache) const {
  return DecodeWithAttention(slots, tokens, positions, attend_len, cache, nullptr);
}

at::Tensor Gpt2Model::DecodeWithAttention(const at::Tensor& slots, const at::Tensor& tokens,
                                          const at::Tensor& raw_positions, int64_t attend_len,
                                          KvCache* cache,
                                          const DecodeAttentionFn& attention) const {
  const int64_t B = tokens.size(0), C = config_.n_embd;
  const at::Tensor positions = raw_positions.clamp_max(cache->max_context() - 1);
  at::Tensor x = Embed(tokens, positions);  // [B, C]
  for (int64_t i = 0; i < config_.n_layer; ++i) {
    x = Block(i, x, [&](const at::Tensor& qkv) {
      return (attention ? attention(i, qkv, slots, positions, cache)
                        : GatherAttention(i, qkv, slots, positions, attend_len, cache))
          .reshape({B, C});
    });
  }
  return Logits(x);
}

}  // namespace tandem
