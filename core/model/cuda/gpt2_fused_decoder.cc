#include "core/model/cuda/gpt2_fused_decoder.h"

#include <cmath>
#include <tuple>
#include <utility>

#include <c10/cuda/CUDAGuard.h>

#include "core/model/cuda/cuda_support.h"
#include "core/model/cuda/decode_ops.h"
#include "core/model/cuda/prefill_attention.h"

namespace tandem {
namespace {

// Stores each projection [K, N] as [N, K] in memory, keeping its shape.
Gpt2Weights WithTransposedProjections(Gpt2Weights weights) {
  for (Gpt2LayerWeights& w : weights.layers) {
    for (at::Tensor* weight : {&w.attn_weight, &w.attn_proj_weight, &w.mlp_fc_weight,
                               &w.mlp_proj_weight}) {
      *weight = weight->t().contiguous().t();
    }
  }
  return weights;
}

}  // namespace

Gpt2FusedDecoder::Gpt2FusedDecoder(Gpt2Config config, Gpt2Weights weights)
    : model_(std::move(config), WithTransposedProjections(std::move(weights))) {
  const at::ScalarType dtype = model_.weights().wte.scalar_type();
  const Gpt2Config& c = model_.config();
  attention_kernel_ = AttentionKernelSupports(dtype, c.head_dim());
  prefill_kernel_ = PrefillAttentionSupports(dtype, c.head_dim());
  fused_decode_ = FusedDecodeSupports(dtype, c.n_embd, c.inner_size(), c.head_dim());
  cluster_decode_ = fused_decode_ && ClusterLayerSupports(dtype, c.n_embd, c.inner_size());
  if (FusesMixedSteps()) {
    side_ = std::make_unique<SideStream>(model_.weights().wte.device().index());
  }
  if (fused_decode_) {
    halves_ = std::make_unique<SideStream>(model_.weights().wte.device().index());
    head_workspace_ = RowHeadWorkspace(model_.weights().wte.device());
  }
}

bool Gpt2FusedDecoder::UsesFusedDecode(int64_t rows) const {
  return fused_decode_ &&
         (rows <= kMaxGpt2FusedRows || (cluster_decode_ && rows <= kMaxGpt2ClusterRows));
}

bool Gpt2FusedDecoder::UsesHalves(int64_t rows) const {
  static_assert(kMinGpt2HalvesRows > kMaxGpt2ClusterRows, "no halves on the fused kernels");
  return halves_ != nullptr && rows >= kMinGpt2HalvesRows && rows <= kMaxGpt2HalvesRows;
}

at::Tensor Gpt2FusedDecoder::PrefillPacked(const PrefillPack& pack, KvCache* cache,
                                           bool all_logits) const {
  if (!prefill_kernel_) return model_.PrefillPacked(pack, cache, all_logits);
  const Gpt2Config& config = model_.config();
  if (!fused_decode_) {  // Gpt2Model's forward with the attention kernel
    const double scale = 1.0 / std::sqrt(static_cast<double>(config.head_dim()));
    return model_.PrefillWithAttention(
        pack, cache, all_logits,
        [&](int64_t layer, const at::Tensor& qkv, const PrefillPack&, KvCache*) {
          return PrefillAttention(qkv.select(1, 0), cache->keys(layer), cache->values(layer),
                                  pack, scale);
        });
  }
  auto attend = [&](int64_t layer, const at::Tensor& qkv) {
    at::Tensor out = at::empty({qkv.size(0), config.n_embd}, qkv.options());
    PackAttention(layer, qkv, pack, cache, out);
    return out;
  };
  const Gpt2Weights& weights = model_.weights();
  at::Tensor x = EmbedTokens(weights.wte, weights.wpe, at::Tensor(), pack.tokens, pack.positions,
                             config.n_positions - 1);  // [P, C]
  at::Tensor h =
      LayerNorm(x, {weights.layers[0].ln_1_weight, weights.layers[0].ln_1_bias,
                    config.layer_norm_epsilon});
  for (int64_t i = 0; i < config.n_layer; ++i) BatchedLayer(i, attend, x, h);
  return model_.HeadLogits(all_logits ? h.narrow(0, 0, pack.num_tokens)
                                     : h.index_select(0, pack.last_rows));
}

void Gpt2FusedDecoder::PackAttention(int64_t i, const at::Tensor& qkv_rows,
                                     const PrefillPack& pack, KvCache* cache,
                                     const at::Tensor& out) const {
  const Gpt2Config& config = model_.config();
  const double scale = 1.0 / std::sqrt(static_cast<double>(config.head_dim()));
  const int64_t T = pack.num_tokens;
  const at::Tensor qkv = qkv_rows.narrow(0, 0, T);
  AppendKv(qkv, pack.slots, pack.positions.narrow(0, 0, T), cache->keys(i), cache->values(i));
  out.zero_();  // rows no tile covers (padding) stay finite
  PrefillAttention(qkv.select(1, 0), cache->keys(i), cache->values(i), pack, scale,
                   out.narrow(0, 0, T).view({T, config.n_head, config.head_dim()}));
}

CausalLm::MixedDecode Gpt2FusedDecoder::DecodeSlotsWithPrefill(
    const PrefillPack& pack, const at::Tensor& slots, const at::Tensor& slot_tokens,
    const at::Tensor& slot_positions, bool greedy, KvCache* cache) const {
  if (!FusesMixedSteps()) {
    return CausalLm::DecodeSlotsWithPrefill(pack, slots, slot_tokens, slot_positions, greedy,
                                            cache);
  }
  const Gpt2Config& config = model_.config();
  const Gpt2Weights& weights = model_.weights();
  const int64_t B = slots.size(0), C = config.n_embd;
  const LayerInputs in{slots, slot_positions, /*by_slot=*/true, cache};
  // The residual stream [B + P, C]: decode rows [0, B), then the pack.
  at::Tensor x = at::cat(
      {EmbedTokens(weights.wte, weights.wpe, slots, slot_tokens, slot_positions,
                   cache->max_context() - 1),
       EmbedTokens(weights.wte, weights.wpe, at::Tensor(), pack.tokens, pack.positions,
                   config.n_positions - 1)});
  at::Tensor h = LayerNorm(x, {weights.layers[0].ln_1_weight, weights.layers[0].ln_1_bias,
                               config.layer_norm_epsilon});
  auto attend = [&](int64_t layer, const at::Tensor& qkv) {  // qkv [B + P, 3, H, D]
    const int64_t R = qkv.size(0);
    at::Tensor out = at::empty({R, C}, qkv.options());
    // The pack's attention beside the decode rows': other slots, other rows
    // of `out`; qkv and out live until after the Join.
    side_->Fork();
    {
      c10::cuda::CUDAStreamGuard on_side(side_->stream());
      PackAttention(layer, qkv.narrow(0, B, R - B), pack, cache, out.narrow(0, B, R - B));
    }
    Attention(layer, qkv.narrow(0, 0, B), in,
              out.narrow(0, 0, B).view({B, config.n_head, config.head_dim()}));
    side_->Join();
    return out;
  };
  for (int64_t i = 0; i < config.n_layer; ++i) BatchedLayer(i, attend, x, h);
  // The head's rows: the decode rows, then each segment's last token.
  const at::Tensor rows =
      at::cat({at::arange(B, pack.last_rows.options()), pack.last_rows + B});
  const SlotDecode all = BatchedHead(h.index_select(0, rows), greedy);
  const int64_t S = pack.last_rows.size(0);
  auto part = [&](int64_t start, int64_t length) {
    SlotDecode rows{all.logits.narrow(0, start, length)};
    if (greedy) {
      rows.tokens = all.tokens.narrow(0, start, length);
      rows.logprobs = all.logprobs.narrow(0, start, length);
    }
    return rows;
  };
  return {part(0, B), part(B, S)};
}

at::Tensor Gpt2FusedDecoder::Decode(const at::Tensor& slots, const at::Tensor& tokens,
                                    const at::Tensor& positions, int64_t attend_len,
                                    KvCache* cache) const {
  if (fused_decode_) {
    return Step(slots, tokens, positions, /*by_slot=*/false, /*greedy=*/false, cache).logits;
  }
  if (!attention_kernel_) return model_.Decode(slots, tokens, positions, attend_len, cache);
  return model_.DecodeWithAttention(
      slots, tokens, positions, attend_len, cache,
      [this](int64_t layer, const at::Tensor& qkv, const at::Tensor& s, const at::Tensor& p,
             KvCache* c) { return Attention(layer, qkv, {s, p, /*by_slot=*/false, c}); });
}

CausalLm::SlotDecode Gpt2FusedDecoder::DecodeSlots(const at::Tensor& slots,
                                                   const at::Tensor& slot_tokens,
                                                   const at::Tensor& slot_positions,
                                                   bool greedy, KvCache* cache) const {
  if (fused_decode_) {
    return Step(slots, slot_tokens, slot_positions, /*by_slot=*/true, greedy, cache);
  }
  SlotDecode out{Decode(slots, slot_tokens.index_select(0, slots),
                        slot_positions.index_select(0, slots), cache->max_context(), cache)};
  if (greedy) std::tie(out.tokens, out.logprobs) = GreedyTokens(out.logits);
  return out;
}

CausalLm::SlotDecode Gpt2FusedDecoder::Step(const at::Tensor& slots, const at::Tensor& tokens,
                                            const at::Tensor& positions, bool by_slot,
                                            bool greedy, KvCache* cache) const {
  const Gpt2Config& config = model_.config();
  const Gpt2Weights& weights = model_.weights();
  const double eps = config.layer_norm_epsilon;
  const int64_t B = slots.size(0);
  const LayerInputs in{slots, positions, by_slot, cache};
  const at::Tensor index = by_slot ? slots : at::Tensor();  // how tokens, positions are read
  // [B, C], the residual stream; positions past the context are clamped inside.
  at::Tensor x = EmbedTokens(weights.wte, weights.wpe, index, tokens, positions,
                             cache->max_context() - 1);
  if (!UsesFusedDecode(B)) {
    return BatchedHead(UsesHalves(B) ? HalvesThroughLayers(in, x) : RowsThroughLayers(0, B, in, x),
                       greedy);
  }
  for (int64_t i = 0; i < config.n_layer; ++i) FusedLayer(i, in, x);
  const FusedNorm final_norm{weights.ln_f_weight, weights.ln_f_bias, eps};
  const at::Tensor& head = weights.lm_head.defined() ? weights.lm_head : weights.wte;
  // One row: the final LayerNorm, LM head and greedy choice as one kernel.
  if (RowHeadFolds(x)) return NormRowHead(x, final_norm, head, greedy, head_workspace_);
  const at::Tensor h = LayerNorm(x, final_norm);
  if (B > kMaxGpt2FusedRows) return BatchedHead(h, greedy);
  SlotDecode out{LmHeadLogits(h, head)};
  if (greedy) std::tie(out.tokens, out.logprobs) = GreedyTokens(out.logits);
  return out;
}

CausalLm::SlotDecode Gpt2FusedDecoder::BatchedHead(const at::Tensor& h, bool greedy) const {
  // cuBLAS's logits as they are: a greedy step's result is its tokens.
  if (greedy) return GreedyDecode(model_.HeadProduct(h), /*convert=*/false);
  return SlotDecode{model_.HeadLogits(h)};
}

void Gpt2FusedDecoder::FusedLayer(int64_t i, const LayerInputs& in, at::Tensor& x) const {
  const Gpt2Config& config = model_.config();
  const Gpt2LayerWeights& w = model_.weights().layers[i];
  const int64_t B = x.size(0), C = config.n_embd, H = config.n_head, D = config.head_dim();
  const double eps = config.layer_norm_epsilon;
  // Above kMaxGpt2FusedRows this layer runs only with cluster_decode_
  // (UsesFusedDecode), its four projections on the cluster kernel.
  const bool cluster = cluster_decode_ && B > kMaxGpt2FusedRows;
  const at::Tensor qkv = NormLinear(x, {w.ln_1_weight, w.ln_1_bias, eps}, w.attn_weight.t(),
                                    w.attn_bias, /*gelu=*/false, cluster)
                             .view({B, 3, H, D});
  LinearAddResidual(Attention(i, qkv, in).view({B, C}), w.attn_proj_weight.t(), w.attn_proj_bias,
                    cluster, x);
  const at::Tensor inner = NormLinear(x, {w.ln_2_weight, w.ln_2_bias, eps}, w.mlp_fc_weight.t(),
                                      w.mlp_fc_bias, /*gelu=*/true, cluster);
  LinearAddResidual(inner, w.mlp_proj_weight.t(), w.mlp_proj_bias, cluster, x);
}

void Gpt2FusedDecoder::BatchedLayer(int64_t i, const AttendFn& attend, at::Tensor& x,
                                    at::Tensor& h, const at::Tensor& h_out) const {
  const Gpt2Config& config = model_.config();
  const Gpt2Weights& weights = model_.weights();
  const Gpt2LayerWeights& w = weights.layers[i];
  const int64_t R = x.size(0), C = config.n_embd, H = config.n_head, D = config.head_dim();
  const double eps = config.layer_norm_epsilon;
  const at::Tensor qkv =
      BatchedLinear(h, w.attn_weight, w.attn_bias, /*gelu=*/false).view({R, 3, H, D});
  h = ResidualLayerNorm(x,
                        BatchedLinear(attend(i, qkv).view({R, C}), w.attn_proj_weight,
                                      w.attn_proj_bias, /*gelu=*/false),
                        {w.ln_2_weight, w.ln_2_bias, eps});
  const at::Tensor inner = BatchedLinear(h, w.mlp_fc_weight, w.mlp_fc_bias, /*gelu=*/true);
  const bool last = i + 1 == config.n_layer;  // then the final LayerNorm
  const at::Tensor& norm_weight = last ? weights.ln_f_weight : weights.layers[i + 1].ln_1_weight;
  const at::Tensor& norm_bias = last ? weights.ln_f_bias : weights.layers[i + 1].ln_1_bias;
  h = ResidualLayerNorm(
      x, BatchedLinear(inner, w.mlp_proj_weight, w.mlp_proj_bias, /*gelu=*/false),
      {norm_weight, norm_bias, eps}, h_out);
}

at::Tensor Gpt2FusedDecoder::RowsThroughLayers(int64_t begin, int64_t length,
                                               const LayerInputs& in, at::Tensor& x,
                                               const at::Tensor& out) const {
  const Gpt2Config& config = model_.config();
  const Gpt2LayerWeights& first = model_.weights().layers[0];
  const at::Tensor slots = in.slots.narrow(0, begin, length);
  const at::Tensor positions = in.by_slot ? in.positions : in.positions.narrow(0, begin, length);
  const LayerInputs rows{slots, positions, in.by_slot, in.cache};
  at::Tensor x_rows = x.narrow(0, begin, length);  // contiguous: whole rows
  at::Tensor h = LayerNorm(x_rows, {first.ln_1_weight, first.ln_1_bias, config.layer_norm_epsilon});
  for (int64_t i = 0; i < config.n_layer; ++i) {
    BatchedLayer(
        i, [&](int64_t layer, const at::Tensor& qkv) { return Attention(layer, qkv, rows); },
        x_rows, h, i + 1 == config.n_layer ? out : at::Tensor());
  }
  return h;
}

at::Tensor Gpt2FusedDecoder::HalvesThroughLayers(const LayerInputs& in, at::Tensor& x) const {
  const int64_t B = x.size(0), half = B / 2;
  // The halves write disjoint rows of x, of h and their own slots' K/V
  // (padding rows share the scratch slot, as within one launch). x, h,
  // slots and positions (the current stream's) outlive the Join. The side
  // half's other tensors are its stream's and die within its layers.
  const at::Tensor h = at::empty_like(x);  // [B, C]: the final LayerNorm's output
  halves_->Fork();
  {
    c10::cuda::CUDAStreamGuard on_side(halves_->stream());
    RowsThroughLayers(half, B - half, in, x, h.narrow(0, half, B - half));
  }
  RowsThroughLayers(0, half, in, x, h.narrow(0, 0, half));
  halves_->Join();
  return h;
}

at::Tensor Gpt2FusedDecoder::Attention(int64_t i, const at::Tensor& qkv, const LayerInputs& in,
                                       const at::Tensor& out) const {
  const double scale = 1.0 / std::sqrt(static_cast<double>(model_.config().head_dim()));
  // Appends K/V and attends over each slot's own length in one launch.
  return DecodeAttention(qkv, in.cache->keys(i), in.cache->values(i), in.slots, in.positions,
                         in.by_slot, scale, out);
}

}  // namespace tandem
