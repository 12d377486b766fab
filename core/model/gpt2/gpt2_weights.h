// GPT-2's parameters as device tensors, in Hugging Face's layout.
#ifndef TANDEM_CORE_MODEL_GPT2_GPT2_WEIGHTS_H_
#define TANDEM_CORE_MODEL_GPT2_GPT2_WEIGHTS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "absl/status/statusor.h"
#include "core/model/gpt2/gpt2_config.h"
#include "core/model/checkpoint_reader.h"

namespace tandem {

// Shapes use C = n_embd, I = inner size, V = vocab_size, P = n_positions.
// Linear weights keep Hugging Face's Conv1D layout [in, out], so a layer is
// addmm(bias, x, weight).
struct Gpt2LayerWeights {
  at::Tensor ln_1_weight, ln_1_bias;              // [C]
  at::Tensor attn_weight, attn_bias;              // [C, 3C], [3C]  (c_attn)
  at::Tensor attn_proj_weight, attn_proj_bias;    // [C, C], [C]    (attn.c_proj)
  at::Tensor ln_2_weight, ln_2_bias;              // [C]
  at::Tensor mlp_fc_weight, mlp_fc_bias;          // [C, I], [I]    (c_fc)
  at::Tensor mlp_proj_weight, mlp_proj_bias;      // [I, C], [C]    (mlp.c_proj)
};

// Owns the tensors (each on the model's device, in the model's dtype).
struct Gpt2Weights {
  at::Tensor wte;  // [V, C] token embeddings (also the LM head when tied)
  at::Tensor wpe;  // [P, C] position embeddings
  std::vector<Gpt2LayerWeights> layers;
  at::Tensor ln_f_weight, ln_f_bias;  // [C]
  at::Tensor lm_head;                 // [V, C]; undefined when tied to wte

  // Loads from a checkpoint, accepting "transformer."-prefixed and bare
  // names and a tied or explicit "lm_head.weight". Errors name the file and
  // tensor (missing, wrong shape, unsupported dtype).
  static absl::StatusOr<Gpt2Weights> Load(const CheckpointReader& file,
                                          const Gpt2Config& config,
                                          at::ScalarType dtype, at::Device device);
  // Random weights from `seed` (deterministic on the CPU), roughly following
  // GPT-2's initialisation, in float32 on the CPU.
  static Gpt2Weights Random(const Gpt2Config& config, uint64_t seed);

  // (Hugging Face name, tensor) for every parameter, "transformer."-prefixed,
  // without lm_head when tied: what save_pretrained writes.
  std::vector<std::pair<std::string, at::Tensor>> Named() const;
  Gpt2Weights To(at::ScalarType dtype, at::Device device) const;
  int64_t bytes() const;
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_GPT2_GPT2_WEIGHTS_H_
