// Llama / Qwen2 / Qwen3 on CUDA through Tandem's kernels and cuBLAS (CUDA
// builds only).
#ifndef TANDEM_CORE_MODEL_CUDA_LLAMA_CUDA_DECODER_H_
#define TANDEM_CORE_MODEL_CUDA_LLAMA_CUDA_DECODER_H_

#include <cstdint>

#include <ATen/ATen.h>

#include "core/model/causal_lm.h"
#include "core/model/kv_cache.h"
#include "core/model/llama/llama_config.h"
#include "core/model/llama/llama_model.h"
#include "core/model/llama/llama_weights.h"

namespace tandem {

// A LlamaModel whose decode step is, per layer: RMSNorm (kernel); Q/K/V
// projection (bias fused for Qwen2); Q/K norm (Qwen3) + RoPE in
// place (kernel); grouped-query attention with the K/V append (kernel);
// output projection + residual; RMSNorm; gate/up projection; SwiGLU
// (kernel); down projection + residual. Projections of up to kMaxFusedRows
// rows run on the fused linear kernel (one warp per output column, the
// residual added in its epilogue); larger batches on cuBLAS (the residual
// added by addmm).
// Then the final RMSNorm, the LM head (cuBLAS) and the greedy kernel. No
// host synchronization: CudaRunner captures it in CUDA graphs. Prefill runs
// the pack's rows as one batch of the cuBLAS decode path (the embedding,
// RMSNorm, Q/K norm + RoPE and SwiGLU kernels) with the packed-prefill
// attention kernel (GQA), graphable. Owns the model. Threading: engine
// thread only.
class LlamaCudaDecoder : public CausalLm {
 public:
  // `weights` on a CUDA device. Dtypes or head sizes the attention kernels
  // do not handle fall back to LlamaModel's ATen path.
  LlamaCudaDecoder(LlamaConfig config, LlamaWeights weights);

  KvCacheShape kv_shape() const override { return model_.kv_shape(); }
  at::Tensor PrefillPacked(const PrefillPack& pack, KvCache* cache,
                           bool all_logits = false) const override;
  bool GraphablePrefill() const override { return prefill_kernel_; }
  // `attend_len` is ignored on the kernel path (each slot's own length).
  at::Tensor Decode(const at::Tensor& slots, const at::Tensor& tokens,
                    const at::Tensor& positions, int64_t attend_len,
                    KvCache* cache) const override;
  SlotDecode DecodeSlots(const at::Tensor& slots, const at::Tensor& slot_tokens,
                         const at::Tensor& slot_positions, bool greedy,
                         KvCache* cache) const override;

  const LlamaModel& model() const { return model_; }

 private:
  // How a step's projections run: one row through LaunchGemv (RMSNorm folded
  // into Q/K/V and gate/up, SwiGLU into gate/up's output, the residual add
  // into o and down); up to kMaxFusedRows rows through the fused linear
  // kernel (RMSNorm and SwiGLU kernels of their own); more through cuBLAS.
  enum class Path { kGemv, kFusedLinear, kCublas };

  // qkv [B, (Hq + 2 Hkv) D] of the residual stream x [B, C].
  at::Tensor QkvProjection(const at::Tensor& x, const LlamaLayerWeights& l, Path path) const;
  // x += o_proj(attn); x += down_proj(swiglu(gate_up_proj(post_norm(x)))).
  void AddOutputAndMlp(const at::Tensor& attn, const LlamaLayerWeights& l, Path path,
                       at::Tensor& x) const;
  // `tokens` and `positions` are per row [B], or per slot [S] when `by_slot`.
  SlotDecode Step(const at::Tensor& slots, const at::Tensor& tokens,
                  const at::Tensor& positions, bool by_slot, bool greedy, KvCache* cache) const;

  LlamaModel model_;
  // Zero biases for the fused linear kernel (Llama has none): [C], [2I],
  // and [Q] when the model has no Q/K/V bias.
  at::Tensor zero_hidden_, zero_gate_up_, zero_qkv_;
  bool decode_kernels_ = false;  // the dtype and head size suit the decode kernels
  bool gemv_kernels_ = false;    // ... and the shapes suit LaunchGemv
  bool prefill_kernel_ = false;  // ... and the packed-prefill attention kernel
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_LLAMA_CUDA_DECODER_H_
