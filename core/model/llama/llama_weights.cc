#include "core/model/llama/llama_weights.h"

#include <cmath>

#include <ATen/CPUGeneratorImpl.h>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace tandem {
namespace {

// Hugging Face's names of one layer's tensors, with their shapes and where
// they sit in the fused tensors (rows [offset, offset + shape[0])).
struct Part {
  std::string name;
  std::vector<int64_t> shape;
  at::Tensor LlamaLayerWeights::*fused;
  int64_t offset;
};

std::vector<Part> LayerParts(const LlamaConfig& c, int layer) {
  const int64_t C = c.hidden_size, I = c.intermediate_size, D = c.head_dim,
                q = int64_t{c.num_attention_heads} * D, kv = int64_t{c.num_key_value_heads} * D;
  const std::string p = absl::StrCat("model.layers.", layer, ".");
  using W = LlamaLayerWeights;
  std::vector<Part> parts = {
      {p + "input_layernorm.weight", {C}, &W::input_norm, 0},
      {p + "self_attn.q_proj.weight", {q, C}, &W::qkv_weight, 0},
      {p + "self_attn.k_proj.weight", {kv, C}, &W::qkv_weight, q},
      {p + "self_attn.v_proj.weight", {kv, C}, &W::qkv_weight, q + kv},
      {p + "self_attn.o_proj.weight", {C, q}, &W::o_weight, 0},
      {p + "post_attention_layernorm.weight", {C}, &W::post_norm, 0},
      {p + "mlp.gate_proj.weight", {I, C}, &W::gate_up_weight, 0},
      {p + "mlp.up_proj.weight", {I, C}, &W::gate_up_weight, I},
      {p + "mlp.down_proj.weight", {C, I}, &W::down_weight, 0},
  };
  if (c.attention_bias) {
    parts.push_back({p + "self_attn.q_proj.bias", {q}, &W::qkv_bias, 0});
    parts.push_back({p + "self_attn.k_proj.bias", {kv}, &W::qkv_bias, q});
    parts.push_back({p + "self_attn.v_proj.bias", {kv}, &W::qkv_bias, q + kv});
  }
  if (c.qk_norm) {
    parts.push_back({p + "self_attn.q_norm.weight", {D}, &W::q_norm, 0});
    parts.push_back({p + "self_attn.k_norm.weight", {D}, &W::k_norm, 0});
  }
  return parts;
}

// Concatenates the parts of `layer` read by `read` into the fused tensors.
template <typename ReadFn>
absl::StatusOr<LlamaLayerWeights> AssembleLayer(const LlamaConfig& config, int layer,
                                                ReadFn read) {
  // Parts of one fused tensor are consecutive in LayerParts.
  std::vector<std::pair<at::Tensor LlamaLayerWeights::*, std::vector<at::Tensor>>> pieces;
  for (const Part& part : LayerParts(config, layer)) {
    ASSIGN_OR_RETURN(at::Tensor t, read(part));
    if (pieces.empty() || pieces.back().first != part.fused) pieces.push_back({part.fused, {}});
    pieces.back().second.push_back(std::move(t));
  }
  LlamaLayerWeights l;
  for (auto& [field, list] : pieces) l.*field = list.size() == 1 ? list[0] : at::cat(list, 0);
  return l;
}

}  // namespace

absl::StatusOr<LlamaWeights> LlamaWeights::Load(const CheckpointReader& reader,
                                                const LlamaConfig& config,
                                                at::ScalarType dtype, at::Device device) {
  const int64_t C = config.hidden_size, V = config.vocab_size;
  auto read = [&](const std::string& name, std::vector<int64_t> shape) {
    return reader.Read(name, shape, dtype, device);
  };
  LlamaWeights w;
  ASSIGN_OR_RETURN(w.embed_tokens, read("model.embed_tokens.weight", {V, C}));
  ASSIGN_OR_RETURN(w.norm, read("model.norm.weight", {C}));
  for (int i = 0; i < config.num_hidden_layers; ++i) {
    ASSIGN_OR_RETURN(LlamaLayerWeights layer,
                     AssembleLayer(config, i, [&](const Part& p) { return read(p.name, p.shape); }));
    w.layers.push_back(std::move(layer));
  }
  if (!config.tie_word_embeddings) {
    if (!reader.Contains("lm_head.weight")) {
      return absl::NotFoundError(absl::StrCat(reader.path(),
                                              ": tensor \"lm_head.weight\" is missing and "
                                              "config.json sets tie_word_embeddings = false"));
    }
    ASSIGN_OR_RETURN(w.lm_head, read("lm_head.weight", {V, C}));
  }
  return w;
}

LlamaWeights LlamaWeights::Random(const LlamaConfig& config, uint64_t seed) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto normal = [&](const std::vector<int64_t>& shape, double std, double mean = 0.0) {
    return at::normal(mean, std, shape, gen, at::TensorOptions().dtype(at::kFloat));
  };
  const int64_t C = config.hidden_size, V = config.vocab_size;
  LlamaWeights w;
  w.embed_tokens = normal({V, C}, 0.02);
  for (int i = 0; i < config.num_hidden_layers; ++i) {
    LlamaLayerWeights layer =
        *AssembleLayer(config, i, [&](const Part& p) -> absl::StatusOr<at::Tensor> {
          if (p.shape.size() == 1 && p.fused != &LlamaLayerWeights::qkv_bias) {
            return normal(p.shape, 0.1, 1.0);  // a norm's scale
          }
          return normal(p.shape, 0.02);
        });
    w.layers.push_back(std::move(layer));
  }
  w.norm = normal({C}, 0.1, 1.0);
  if (!config.tie_word_embeddings) w.lm_head = normal({V, C}, 0.02);
  return w;
}

std::vector<std::pair<std::string, at::Tensor>> LlamaWeights::Named(
    const LlamaConfig& config) const {
  std::vector<std::pair<std::string, at::Tensor>> named = {
      {"model.embed_tokens.weight", embed_tokens}};
  for (int i = 0; i < static_cast<int>(layers.size()); ++i) {
    for (const Part& p : LayerParts(config, i)) {
      named.emplace_back(p.name, (layers[i].*p.fused).narrow(0, p.offset, p.shape[0]));
    }
  }
  named.emplace_back("model.norm.weight", norm);
  if (lm_head.defined()) named.emplace_back("lm_head.weight", lm_head);
  return named;
}

LlamaWeights LlamaWeights::To(at::ScalarType dtype, at::Device device) const {
  auto to = [&](const at::Tensor& t) { return t.defined() ? t.to(device, dtype) : t; };
  LlamaWeights w;
  w.embed_tokens = to(embed_tokens);
  for (const LlamaLayerWeights& l : layers) {
    w.layers.push_back({to(l.input_norm), to(l.qkv_weight), to(l.qkv_bias), to(l.q_norm),
                        to(l.k_norm), to(l.o_weight), to(l.post_norm), to(l.gate_up_weight),
                        to(l.down_weight)});
  }
  w.norm = to(norm);
  w.lm_head = to(lm_head);
  return w;
}

int64_t LlamaWeights::bytes() const {
  int64_t total = 0;
  auto add = [&](const at::Tensor& t) {
    if (t.defined()) total += t.numel() * t.element_size();
  };
  add(embed_tokens);
  add(norm);
  add(lm_head);
  for (const LlamaLayerWeights& l : layers) {
    for (const at::Tensor* t : {&l.input_norm, &l.qkv_weight, &l.qkv_bias, &l.q_norm, &l.k_norm,
                                &l.o_weight, &l.post_norm, &l.gate_up_weight, &l.down_weight}) {
      add(*t);
    }
  }
  return total;
}

}  // namespace tandem
