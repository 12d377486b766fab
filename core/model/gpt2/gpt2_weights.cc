#include "core/model/gpt2/gpt2_weights.h"

#include <cmath>
#include <cstring>

#include <ATen/CPUGeneratorImpl.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/model/checkpoint_reader.h"

namespace tandem {
namespace {

// Reads GPT-2's tensors with or without the "transformer." prefix.
class TensorReader {
 public:
  TensorReader(const CheckpointReader& reader, at::ScalarType dtype, at::Device device)
      : reader_(reader), dtype_(dtype), device_(device) {}

  absl::StatusOr<at::Tensor> Read(const std::string& name,
                                  std::vector<int64_t> shape) const {
    const std::string prefixed = "transformer." + name;
    if (reader_.Contains(prefixed)) return reader_.Read(prefixed, shape, dtype_, device_);
    if (reader_.Contains(name)) return reader_.Read(name, shape, dtype_, device_);
    return absl::NotFoundError(absl::StrCat(reader_.path(), ": tensor \"", name,
                                            "\" (or \"transformer.", name, "\") is missing"));
  }

 private:
  const CheckpointReader& reader_;
  at::ScalarType dtype_;
  at::Device device_;
};

}  // namespace

absl::StatusOr<Gpt2Weights> Gpt2Weights::Load(const CheckpointReader& file,
                                              const Gpt2Config& config,
                                              at::ScalarType dtype,
                                              at::Device device) {
  const int64_t C = config.n_embd, I = config.inner_size();
  const TensorReader reader(file, dtype, device);
  Gpt2Weights w;
  auto read = [&](const std::string& name, std::vector<int64_t> shape,
                  at::Tensor* out) -> absl::Status {
    absl::StatusOr<at::Tensor> t = reader.Read(name, std::move(shape));
    if (!t.ok()) return t.status();
    *out = *std::move(t);
    return absl::OkStatus();
  };
  std::vector<std::tuple<std::string, std::vector<int64_t>, at::Tensor*>> wanted = {
      {"wte.weight", {config.vocab_size, C}, &w.wte},
      {"wpe.weight", {config.n_positions, C}, &w.wpe},
      {"ln_f.weight", {C}, &w.ln_f_weight},
      {"ln_f.bias", {C}, &w.ln_f_bias},
  };
  w.layers.resize(config.n_layer);
  for (int i = 0; i < config.n_layer; ++i) {
    Gpt2LayerWeights& l = w.layers[i];
    const std::string p = absl::StrCat("h.", i, ".");
    wanted.insert(wanted.end(), {
        {p + "ln_1.weight", {C}, &l.ln_1_weight},
        {p + "ln_1.bias", {C}, &l.ln_1_bias},
        {p + "attn.c_attn.weight", {C, 3 * C}, &l.attn_weight},
        {p + "attn.c_attn.bias", {3 * C}, &l.attn_bias},
        {p + "attn.c_proj.weight", {C, C}, &l.attn_proj_weight},
        {p + "attn.c_proj.bias", {C}, &l.attn_proj_bias},
        {p + "ln_2.weight", {C}, &l.ln_2_weight},
        {p + "ln_2.bias", {C}, &l.ln_2_bias},
        {p + "mlp.c_fc.weight", {C, I}, &l.mlp_fc_weight},
        {p + "mlp.c_fc.bias", {I}, &l.mlp_fc_bias},
        {p + "mlp.c_proj.weight", {I, C}, &l.mlp_proj_weight},
        {p + "mlp.c_proj.bias", {C}, &l.mlp_proj_bias},
    });
  }
  for (auto& [name, shape, out] : wanted) {
    absl::Status status = read(name, shape, out);
    if (!status.ok()) return status;
  }
  if (file.Contains("lm_head.weight")) {
    absl::StatusOr<at::Tensor> head =
        reader.Read("lm_head.weight", {config.vocab_size, C});
    if (!head.ok()) return head.status();
    // An explicit head equal to wte (as many exports write) stays tied.
    if (!at::equal(*head, w.wte)) w.lm_head = *std::move(head);
  } else if (!config.tie_word_embeddings) {
    return absl::NotFoundError(absl::StrCat(
        file.path(), ": tensor \"lm_head.weight\" is missing and config.json "
                     "sets tie_word_embeddings = false"));
  }
  return w;
}

Gpt2Weights Gpt2Weights::Random(const Gpt2Config& config, uint64_t seed) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const int64_t C = config.n_embd, I = config.inner_size();
  auto normal = [&](std::vector<int64_t> shape, double std, double mean = 0.0) {
    return at::normal(mean, std, shape, gen, at::TensorOptions().dtype(at::kFloat));
  };
  const double proj_std = 0.02 / std::sqrt(2.0 * config.n_layer);
  Gpt2Weights w;
  w.wte = normal({config.vocab_size, C}, 0.02);
  w.wpe = normal({config.n_positions, C}, 0.01);
  for (int i = 0; i < config.n_layer; ++i) {
    Gpt2LayerWeights l;
    // Layer-norm and bias values are perturbed (not 1 and 0) so that a loader
    // or model bug that ignores them changes the output.
    l.ln_1_weight = normal({C}, 0.1, 1.0);
    l.ln_1_bias = normal({C}, 0.02);
    l.attn_weight = normal({C, 3 * C}, 0.02);
    l.attn_bias = normal({3 * C}, 0.02);
    l.attn_proj_weight = normal({C, C}, proj_std);
    l.attn_proj_bias = normal({C}, 0.02);
    l.ln_2_weight = normal({C}, 0.1, 1.0);
    l.ln_2_bias = normal({C}, 0.02);
    l.mlp_fc_weight = normal({C, I}, 0.02);
    l.mlp_fc_bias = normal({I}, 0.02);
    l.mlp_proj_weight = normal({I, C}, proj_std);
    l.mlp_proj_bias = normal({C}, 0.02);
    w.layers.push_back(std::move(l));
  }
  w.ln_f_weight = normal({C}, 0.1, 1.0);
  w.ln_f_bias = normal({C}, 0.02);
  return w;
}

std::vector<std::pair<std::string, at::Tensor>> Gpt2Weights::Named() const {
  std::vector<std::pair<std::string, at::Tensor>> named = {
      {"transformer.wte.weight", wte}, {"transformer.wpe.weight", wpe}};
  for (size_t i = 0; i < layers.size(); ++i) {
    const Gpt2LayerWeights& l = layers[i];
    const std::string p = absl::StrCat("transformer.h.", i, ".");
    named.insert(named.end(), {
        {p + "ln_1.weight", l.ln_1_weight}, {p + "ln_1.bias", l.ln_1_bias},
        {p + "attn.c_attn.weight", l.attn_weight}, {p + "attn.c_attn.bias", l.attn_bias},
        {p + "attn.c_proj.weight", l.attn_proj_weight},
        {p + "attn.c_proj.bias", l.attn_proj_bias},
        {p + "ln_2.weight", l.ln_2_weight}, {p + "ln_2.bias", l.ln_2_bias},
        {p + "mlp.c_fc.weight", l.mlp_fc_weight}, {p + "mlp.c_fc.bias", l.mlp_fc_bias},
        {p + "mlp.c_proj.weight", l.mlp_proj_weight},
        {p + "mlp.c_proj.bias", l.mlp_proj_bias},
    });
  }
  named.insert(named.end(), {{"transformer.ln_f.weight", ln_f_weight},
                             {"transformer.ln_f.bias", ln_f_bias}});
  if (lm_head.defined()) named.emplace_back("lm_head.weight", lm_head);
  return named;
}

Gpt2Weights Gpt2Weights::To(at::ScalarType dtype, at::Device device) const {
  auto to = [&](const at::Tensor& t) {
    return t.defined() ? t.to(device, dtype) : t;
  };
  Gpt2Weights w;
  w.wte = to(wte);
  w.wpe = to(wpe);
  for (const Gpt2LayerWeights& l : layers) {
    w.layers.push_back({to(l.ln_1_weight), to(l.ln_1_bias), to(l.attn_weight),
                        to(l.attn_bias), to(l.attn_proj_weight),
                        to(l.attn_proj_bias), to(l.ln_2_weight), to(l.ln_2_bias),
                        to(l.mlp_fc_weight), to(l.mlp_fc_bias),
                        to(l.mlp_proj_weight), to(l.mlp_proj_bias)});
  }
  w.ln_f_weight = to(ln_f_weight);
  w.ln_f_bias = to(ln_f_bias);
  w.lm_head = to(lm_head);
  return w;
}

int64_t Gpt2Weights::bytes() const {
  int64_t total = 0;
  for (const auto& [name, t] : Named()) total += t.numel() * t.element_size();
  return total;
}

}  // namespace tandem
