// The Llama-style decoder's parameters as device tensors. Q/K/V and the
// gate/up projections are fused at load time (one GEMM each); Named() splits
// them back into Hugging Face's tensors.
#ifndef TANDEM_CORE_MODEL_LLAMA_LLAMA_WEIGHTS_H_
#define TANDEM_CORE_MODEL_LLAMA_LLAMA_WEIGHTS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "absl/status/statusor.h"
#include "core/model/checkpoint_reader.h"
#include "core/model/llama/llama_config.h"

namespace tandem {

// Shapes use C = hidden_size, I = intermediate_size, D = head_dim,
// Hq / Hkv = attention / key-value heads, Q = (Hq + 2 Hkv) D, V = vocab.
// Linear weights keep nn.Linear's layout [out, in]: y = x W^T + b.
struct LlamaLayerWeights {
  at::Tensor input_norm;     // [C]  input_layernorm
  at::Tensor qkv_weight;     // [Q, C]  q_proj ; k_proj ; v_proj
  at::Tensor qkv_bias;       // [Q] (attention_bias), else undefined
  at::Tensor q_norm, k_norm;  // [D] (qk_norm), else undefined
  at::Tensor o_weight;       // [C, Hq D]  o_proj
  at::Tensor post_norm;      // [C]  post_attention_layernorm
  at::Tensor gate_up_weight;  // [2I, C]  gate_proj ; up_proj
  at::Tensor down_weight;    // [C, I]  down_proj
};

// Owns the tensors (each on the model's device, in the model's dtype).
struct LlamaWeights {
  at::Tensor embed_tokens;  // [V, C]; also the LM head when tied
  std::vector<LlamaLayerWeights> layers;
  at::Tensor norm;     // [C]
  at::Tensor lm_head;  // [V, C]; undefined when tied

  // From a checkpoint ("model."-prefixed names, lm_head.weight unless
  // tie_word_embeddings). Errors name the file and tensor.
  static absl::StatusOr<LlamaWeights> Load(const CheckpointReader& reader,
                                           const LlamaConfig& config, at::ScalarType dtype,
                                           at::Device device);
  // Random weights from `seed` (deterministic), float32 on the CPU. Norms
  // and biases are perturbed away from 1 and 0 so that ignoring them shows.
  static LlamaWeights Random(const LlamaConfig& config, uint64_t seed);

  // (Hugging Face name, tensor) for every parameter, as save_pretrained
  // writes them (views of the fused tensors).
  std::vector<std::pair<std::string, at::Tensor>> Named(const LlamaConfig& config) const;
  LlamaWeights To(at::ScalarType dtype, at::Device device) const;
  int64_t bytes() const;
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_LLAMA_LLAMA_WEIGHTS_H_
