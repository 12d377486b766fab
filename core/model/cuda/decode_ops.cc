#include "core/model/cuda/decode_ops.h"

#include <stdexcept>
#include <string>

#include "core/model/cuda/cuda_support.h"
#include "core/model/cuda/gemv_kernel.h"

namespace tandem {
namespace {

// Launches the fused linear kernel (up to kMaxFusedRows rows), or with
// `cluster` the cluster kernel where it applies, which writes `out`.
void Linear(LinearEpilogue epilogue, const at::Tensor& x, const FusedNorm* norm,
            const at::Tensor& weight_nk, const at::Tensor* bias, bool cluster, at::Tensor& out) {
  CheckVectorLoads({&x, &weight_nk}, "fused linear");
  if (norm != nullptr) CheckVectorLoads({&norm->weight, &norm->bias}, "fused linear");
  const KernelDType dtype = KernelDTypeOf(x.scalar_type());
  const int rows = static_cast<int>(x.size(0)), K = static_cast<int>(x.size(1)),
            N = static_cast<int>(weight_nk.size(0));
  if (cluster && bias != nullptr &&
      ClusterLinearSupports(dtype, epilogue, rows, K, N)) {
    CheckVectorLoads({&out, bias}, "cluster linear");
    CheckCuda(LaunchClusterLinear(dtype, epilogue, x.data_ptr(),
                                  norm ? norm->weight.data_ptr() : nullptr,
                                  norm ? norm->bias.data_ptr() : nullptr,
                                  norm ? static_cast<float>(norm->eps) : 0.0f,
                                  weight_nk.data_ptr(), bias->data_ptr(), out.data_ptr(), rows,
                                  K, N, CurrentStream()),
              "cluster linear");
    return;
  }
  CheckCuda(LaunchFusedLinear(dtype, epilogue, x.data_ptr(),
                          norm ? norm->weight.data_ptr() : nullptr,
                          norm ? norm->bias.data_ptr() : nullptr,
                          norm ? static_cast<float>(norm->eps) : 0.0f, weight_nk.data_ptr(),
                          bias ? bias->data_ptr() : nullptr, out.data_ptr(),
                          static_cast<int>(x.size(0)), static_cast<int>(x.size(1)),
                          static_cast<int>(weight_nk.size(0)), CurrentStream()),
        "fused linear");
}

}  // namespace

at::Tensor DecodeAttention(const at::Tensor& qkv, at::Tensor& k_cache, at::Tensor& v_cache,
                           const at::Tensor& slots, const at::Tensor& positions,
                           bool positions_by_slot, double scale, const at::Tensor& out) {
  const int64_t H = qkv.size(2);
  return GroupedDecodeAttention(qkv.view({qkv.size(0), 3 * H, qkv.size(3)}), H, k_cache,
                                v_cache, slots, positions, positions_by_slot, scale, nullptr,
                                out);
}

at::Tensor GroupedDecodeAttention(const at::Tensor& qkv, int64_t heads, at::Tensor& k_cache,
                                  at::Tensor& v_cache, const at::Tensor& slots,
                                  const at::Tensor& positions, bool positions_by_slot,
                                  double scale, const DecodeRope* rope,
                                  const at::Tensor& out_buffer) {
  const at::Tensor rows = qkv.contiguous();  // a no-op for the projection's output
  DecodeRotary rotary;
  if (rope != nullptr) {
    if (rope->inv_freq.scalar_type() != at::kFloat) {
      throw std::invalid_argument("DecodeAttention: inv_freq must be float32");
    }
    rotary.inv_freq = rope->inv_freq.data_ptr<float>();
    rotary.q_norm = rope->q_norm.defined() ? rope->q_norm.data_ptr() : nullptr;
    rotary.k_norm = rope->k_norm.defined() ? rope->k_norm.data_ptr() : nullptr;
    rotary.eps = static_cast<float>(rope->eps);
  }
  CheckVectorLoads({&k_cache, &v_cache}, "DecodeAttention");
  const int64_t B = rows.size(0), H = heads, Hkv = k_cache.size(1), D = rows.size(2);
  if (rows.size(1) != H + 2 * Hkv) {
    throw std::invalid_argument("DecodeAttention: qkv must hold heads + 2 kv_heads rows");
  }
  at::Tensor out = out_buffer.defined() ? out_buffer : at::empty({B, H, D}, rows.options());
  if (out.sizes() != at::IntArrayRef({B, H, D}) || !out.is_contiguous() ||
      out.scalar_type() != rows.scalar_type()) {
    throw std::invalid_argument("DecodeAttention: out must be a contiguous [B, H, D] tensor");
  }
  CheckCuda(LaunchDecodeAttention(KernelDTypeOf(rows.scalar_type()), rows.data_ptr(),
                              k_cache.data_ptr(), v_cache.data_ptr(), slots.data_ptr<int64_t>(),
                              positions.data_ptr<int64_t>(), positions_by_slot, out.data_ptr(),
                              static_cast<int>(B), static_cast<int>(H), static_cast<int>(Hkv),
                              static_cast<int>(D),
                              static_cast<int>(k_cache.size(2)), static_cast<float>(scale),
                              CurrentStream(), rope != nullptr ? &rotary : nullptr),
        "DecodeAttention");
  return out;
}

bool AttentionKernelSupports(at::ScalarType dtype, int64_t head_dim, int64_t group) {
  if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16) return false;
  return DecodeAttentionSupports(KernelDTypeOf(dtype), static_cast<int>(head_dim),
                                 static_cast<int>(group));
}

bool FusedDecodeSupports(at::ScalarType dtype, int64_t channels, int64_t inner,
                         int64_t head_dim) {
  const int64_t vector = dtype == at::kFloat ? 4 : 8;  // elements per 16-byte load
  return AttentionKernelSupports(dtype, head_dim) && channels % vector == 0 &&
         inner % vector == 0;
}

bool ClusterLayerSupports(at::ScalarType dtype, int64_t channels, int64_t inner) {
  // KernelDTypeOf throws for other dtypes: only asked for fp16 / bf16.
  if (dtype != at::kHalf && dtype != at::kBFloat16) return false;
  const KernelDType kernel_dtype = KernelDTypeOf(dtype);
  const int C = static_cast<int>(channels), I = static_cast<int>(inner);
  const struct {
    LinearEpilogue epilogue;
    int K, N;
  } projections[] = {{LinearEpilogue::kBias, C, 3 * C},
                     {LinearEpilogue::kBiasResidual, C, C},
                     {LinearEpilogue::kBiasGelu, C, I},
                     {LinearEpilogue::kBiasResidual, I, C}};
  for (const auto& p : projections) {
    if (!ClusterLinearSupports(kernel_dtype, p.epilogue, kMaxClusterLinearRows, p.K, p.N)) {
      return false;
    }
  }
  return true;
}

at::Tensor NormLinear(const at::Tensor& x, const FusedNorm& norm, const at::Tensor& weight_nk,
                      const at::Tensor& bias, bool gelu, bool cluster) {
  at::Tensor out = at::empty({x.size(0), weight_nk.size(0)}, x.options());
  Linear(gelu ? LinearEpilogue::kBiasGelu : LinearEpilogue::kBias, x, &norm, weight_nk, &bias,
         cluster, out);
  return out;
}

at::Tensor SmallBatchLinear(const at::Tensor& x, const at::Tensor& weight_nk,
                            const at::Tensor& bias) {
  at::Tensor out = at::empty({x.size(0), weight_nk.size(0)}, x.options());
  Linear(LinearEpilogue::kBias, x, nullptr, weight_nk, &bias, /*cluster=*/false, out);
  return out;
}

void LinearAddResidual(const at::Tensor& x, const at::Tensor& weight_nk, const at::Tensor& bias,
                       bool cluster, at::Tensor& residual) {
  const KernelDType dtype = KernelDTypeOf(x.scalar_type());
  const int K = static_cast<int>(x.size(1)), N = static_cast<int>(weight_nk.size(0));
  if (x.size(0) != 1 || !GemvSupports(dtype, K)) {
    Linear(LinearEpilogue::kBiasResidual, x, nullptr, weight_nk, &bias, cluster, residual);
    return;
  }
  // One row: LaunchGemv (a block splits K and loads all of a group of
  // columns' weights into registers before the previous kernel ends; a warp
  // of the fused linear kernel loads its column's first 4 vectors a lane
  // early, a third of fc2's K): GPT-2 small N=1 254 vs 280 us per step. The
  // LayerNorm projections there too were slower (273 us):
  // docs/results/bench/2026-12-02-h200-gpt2-gemv/.
  CheckVectorLoads({&x, &weight_nk, &residual}, "one-row projection");
  CheckCuda(LaunchGemv(dtype, GemvInput::kPlain, LinearEpilogue::kBiasResidual, x.data_ptr(),
                       nullptr, 0.0f, weight_nk.data_ptr(), bias.data_ptr(), residual.data_ptr(),
                       K, N, CurrentStream()),
            "one-row projection");
}

at::Tensor BatchedLinear(const at::Tensor& h, const at::Tensor& weight_kn, const at::Tensor& bias,
                         bool gelu) {
  const at::Tensor weight_nk = weight_kn.t();
  const int64_t R = h.size(0), K = h.size(1), N = weight_kn.size(1);
  const KernelDType dtype = KernelDTypeOf(h.scalar_type());
  const int rows = static_cast<int>(R), k = static_cast<int>(K), n = static_cast<int>(N);
  // The kernels' 16-byte loads (and TMA) need these; anything else takes cuBLAS.
  const bool dense = VectorLoadable({&h, &weight_nk}) && bias.is_contiguous();
  // out [R, N], written by launch(out's data).
  auto run = [&](const char* what, auto&& launch) {
    at::Tensor out = at::empty({R, N}, h.options());
    CheckCuda(launch(out.data_ptr()), what);
    return out;
  };
  if (R <= kSkinnyLinearUsedRows && dense && SkinnyLinearSupports(dtype, rows, k, n)) {
    return run("skinny linear", [&](void* out) {
      return LaunchSkinnyLinear(dtype, gelu, h.data_ptr(), weight_nk.data_ptr(), bias.data_ptr(),
                                out, rows, k, n, CurrentStream());
    });
  }
  // Above them the warp-group kernel where it has a tile (launched early,
  // like the skinny kernel; GPT-2 small N=256 1,008 -> 931 us per step,
  // docs/results/bench/2026-12-03-h200-wgmma-tma/), else cuBLAS.
  if (dense && WgmmaLinearSupports(dtype, rows, k, n, /*max_blocks=*/0)) {
    return run("wgmma linear", [&](void* out) {
      return LaunchWgmmaLinear(dtype, gelu, h.data_ptr(), weight_nk.data_ptr(), bias.data_ptr(),
                               out, rows, k, n, /*max_blocks=*/0, CurrentStream());
    });
  }
  if (gelu) return at::_addmm_activation(bias, h, weight_kn, 1, 1, /*use_gelu=*/true);
  return at::addmm(bias, h, weight_kn);
}

at::Tensor ResidualLayerNorm(at::Tensor& x, const at::Tensor& residual, const FusedNorm& norm,
                             const at::Tensor& into) {
  CheckVectorLoads({&x, &norm.weight, &norm.bias}, "LayerNorm");
  for (const at::Tensor* t : {&residual, &into}) {
    if (!t->defined()) continue;
    CheckVectorLoads({t}, "LayerNorm");
    if (!t->sizes().equals(x.sizes()) || t->scalar_type() != x.scalar_type()) {
      throw std::invalid_argument(
          "LayerNorm: the residual and the output must have x's shape and dtype");
    }
  }
  at::Tensor out = into.defined() ? into : at::empty_like(x);
  CheckCuda(LaunchLayerNorm(KernelDTypeOf(x.scalar_type()), x.data_ptr(),
                            residual.defined() ? residual.data_ptr() : nullptr,
                            norm.weight.data_ptr(), norm.bias.data_ptr(),
                            static_cast<float>(norm.eps), out.data_ptr(),
                            static_cast<int>(x.size(0)), static_cast<int>(x.size(1)),
                            CurrentStream()),
            "LayerNorm");
  return out;
}

at::Tensor LayerNorm(const at::Tensor& x, const FusedNorm& norm) {
  at::Tensor in = x;  // not written without a residual
  return ResidualLayerNorm(in, at::Tensor(), norm);
}

at::Tensor LmHeadLogits(const at::Tensor& x, const at::Tensor& weight_nk) {
  CheckVectorLoads({&x, &weight_nk}, "LM head");
  at::Tensor logits = at::empty({x.size(0), weight_nk.size(0)}, x.options().dtype(at::kFloat));
  CheckCuda(LaunchLmHead(KernelDTypeOf(x.scalar_type()), x.data_ptr(), weight_nk.data_ptr(),
                     logits.data_ptr<float>(), static_cast<int>(x.size(0)),
                     static_cast<int>(x.size(1)), static_cast<int>(weight_nk.size(0)),
                     CurrentStream()),
        "LM head");
  return logits;
}

bool RowHeadFolds(const at::Tensor& x) {
  return x.dim() == 2 && x.size(0) == 1 &&
         RowLmHeadSupports(KernelDTypeOf(x.scalar_type()), static_cast<int>(x.size(1)));
}

at::Tensor RowHeadWorkspace(const at::Device& device) {
  return at::zeros({RowLmHeadWorkspaceBytes()},
                   at::TensorOptions().dtype(at::kByte).device(device));
}

CausalLm::SlotDecode NormRowHead(const at::Tensor& x, const FusedNorm& norm,
                                 const at::Tensor& head, bool greedy,
                                 const at::Tensor& workspace) {
  if (!RowHeadFolds(x)) throw std::invalid_argument("NormRowHead: not one row it folds");
  const int64_t K = x.size(1);
  for (const at::Tensor* t : {&head, &norm.weight, &norm.bias}) {
    if (t->scalar_type() != x.scalar_type() || t->device() != x.device()) {
      throw std::invalid_argument("NormRowHead: head and norm must be x's dtype and device");
    }
  }
  if (head.dim() != 2 || head.size(1) != K || norm.weight.numel() != K ||
      norm.bias.numel() != K) {
    throw std::invalid_argument("NormRowHead: head [V, K] and norm [K] for x [1, K]");
  }
  if (greedy &&
      (workspace.numel() < RowLmHeadWorkspaceBytes() || workspace.device() != x.device())) {
    throw std::invalid_argument("NormRowHead: a RowHeadWorkspace on x's device");
  }
  CheckVectorLoads({&x, &head, &norm.weight, &norm.bias}, "row LM head");
  const at::TensorOptions options = x.options();
  CausalLm::SlotDecode out{at::empty({1, head.size(0)}, options.dtype(at::kFloat))};
  RowLmHeadGreedy choice;
  if (greedy) {
    out.tokens = at::empty({1}, options.dtype(at::kLong));
    out.logprobs = at::empty({1}, options.dtype(at::kFloat));
    choice = {out.tokens.data_ptr<int64_t>(), out.logprobs.data_ptr<float>(),
              workspace.data_ptr()};
  }
  const RowLmHeadNorm row_norm{norm.weight.data_ptr(), norm.bias.data_ptr(),
                               static_cast<float>(norm.eps)};
  CheckCuda(LaunchRowLmHead(KernelDTypeOf(x.scalar_type()), x.data_ptr(), row_norm,
                            head.data_ptr(), out.logits.data_ptr<float>(),
                            static_cast<int>(K), static_cast<int>(head.size(0)), choice,
                            CurrentStream()),
            "row LM head");
  return out;
}

at::Tensor EmbedTokens(const at::Tensor& wte, const at::Tensor& wpe, const at::Tensor& slots,
                       const at::Tensor& tokens, const at::Tensor& positions,
                       int64_t max_position) {
  const bool by_slot = slots.defined();
  const int64_t B = by_slot ? slots.size(0) : tokens.size(0), C = wte.size(1);
  at::Tensor x = at::empty({B, C}, wte.options());
  CheckCuda(LaunchEmbedTokens(KernelDTypeOf(wte.scalar_type()), wte.data_ptr(),
                          wpe.defined() ? wpe.data_ptr() : nullptr,
                          by_slot ? slots.data_ptr<int64_t>() : nullptr,
                          tokens.data_ptr<int64_t>(),
                          positions.defined() ? positions.data_ptr<int64_t>() : nullptr,
                          max_position, x.data_ptr(), static_cast<int>(B),
                          static_cast<int>(C), CurrentStream()),
        "EmbedTokens");
  return x;
}

std::pair<at::Tensor, at::Tensor> GreedyTokens(const at::Tensor& raw_logits) {
  const CausalLm::SlotDecode out = GreedyDecode(raw_logits.to(at::kFloat));
  return {out.tokens, out.logprobs};
}

CausalLm::SlotDecode GreedyDecode(const at::Tensor& raw_logits, bool convert) {
  // Rows may be strided (a padded head's columns narrowed), not their elements.
  const bool rows_only = raw_logits.stride(1) == 1 &&
                         (raw_logits.size(0) == 1 || raw_logits.stride(0) >= raw_logits.size(1));
  const at::Tensor logits = rows_only ? raw_logits : raw_logits.contiguous();
  const int64_t B = logits.size(0), V = logits.size(1), row_stride = B > 1 ? logits.stride(0) : V;
  const bool is_float = logits.scalar_type() == at::kFloat && logits.is_contiguous();
  const bool copy = convert && !is_float;
  CausalLm::SlotDecode out{copy ? at::empty({B, V}, logits.options().dtype(at::kFloat)) : logits,
                           at::empty({B}, logits.options().dtype(at::kLong)),
                           at::empty({B}, logits.options().dtype(at::kFloat))};
  CheckCuda(LaunchGreedyTokensOf(KernelDTypeOf(logits.scalar_type()), logits.data_ptr(),
                                 static_cast<int>(B), static_cast<int>(V), row_stride,
                                 copy ? out.logits.data_ptr<float>() : nullptr,
                                 out.tokens.data_ptr<int64_t>(), out.logprobs.data_ptr<float>(),
                                 CurrentStream()),
            "GreedyTokens");
  return out;
}

void* MappedHostPointer(const at::Tensor& pinned) {
  void* device = nullptr;
  if (cudaHostGetDevicePointer(&device, pinned.data_ptr(), 0) != cudaSuccess) {
    (void)cudaGetLastError();  // not mapped: the caller copies instead
    return nullptr;
  }
  return device;
}

bool PublishRowsTakes(const at::Tensor& tokens, const at::Tensor& logprobs) {
  return tokens.scalar_type() == at::kLong && logprobs.scalar_type() == at::kFloat &&
         tokens.is_contiguous() && logprobs.is_contiguous() &&
         tokens.numel() == logprobs.numel();
}

void PublishRows(const at::Tensor& tokens, const at::Tensor& logprobs, int64_t* host_tokens,
                 float* host_logprobs) {
  if (!PublishRowsTakes(tokens, logprobs)) {
    throw std::invalid_argument("PublishRows: int64 tokens and float32 log-probabilities");
  }
  CheckCuda(LaunchPublishRows(tokens.data_ptr<int64_t>(), logprobs.data_ptr<float>(),
                              static_cast<int>(tokens.numel()), host_tokens, host_logprobs,
                              CurrentStream()),
            "PublishRows");
}

void SetPrefilledSlots(SlotState* state, int64_t padding_slot, const at::Tensor& slots,
                       const at::Tensor& positions, const at::Tensor& tokens,
                       const SamplingTensors& rows) {
  const SlotStatePointers pointers{state->next_token.data_ptr<int64_t>(),
                                   state->position.data_ptr<int64_t>(),
                                   state->rng_offset.data_ptr<int64_t>(), padding_slot};
  const SlotParamsPointers params{
      state->temperature.data_ptr<float>(), state->top_p.data_ptr<float>(),
      state->min_p.data_ptr<float>(), state->top_k.data_ptr<int64_t>(),
      state->seed.data_ptr<int64_t>()};
  const at::Tensor row_tokens = tokens.contiguous();  // a no-op for the samplers' output
  const PrefilledRows prefilled{
      slots.data_ptr<int64_t>(),           positions.data_ptr<int64_t>(),
      row_tokens.data_ptr<int64_t>(),      rows.temperature.data_ptr<float>(),
      rows.top_p.data_ptr<float>(),        rows.min_p.data_ptr<float>(),
      rows.top_k.data_ptr<int64_t>(),      rows.seed.data_ptr<int64_t>()};
  CheckCuda(LaunchSetPrefilledSlots(pointers, params, prefilled,
                                    static_cast<int>(slots.size(0)), CurrentStream()),
            "SetPrefilledSlots");
}

void AppendKv(const at::Tensor& qkv, const at::Tensor& slots, const at::Tensor& positions,
              at::Tensor& k_cache, at::Tensor& v_cache) {
  if (!qkv.is_contiguous() || qkv.dim() != 4 || qkv.size(1) != 3 ||
      qkv.scalar_type() != k_cache.scalar_type()) {
    throw std::invalid_argument("AppendKv: qkv must be a contiguous [T, 3, H, D] tensor");
  }
  CheckVectorLoads({&k_cache, &v_cache}, "AppendKv");
  CheckCuda(LaunchAppendKv(qkv.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(),
                           slots.data_ptr<int64_t>(), positions.data_ptr<int64_t>(),
                           static_cast<int>(qkv.size(0)), static_cast<int>(qkv.size(2)),
                           static_cast<int>(qkv.size(3) * qkv.element_size()),
                           static_cast<int>(k_cache.size(2)), CurrentStream()),
            "AppendKv");
}

void AdvanceSlots(const SlotStatePointers& state, const at::Tensor& slots,
                  const at::Tensor& tokens) {
  CheckCuda(LaunchAdvanceSlots(state, slots.data_ptr<int64_t>(), tokens.data_ptr<int64_t>(),
                           static_cast<int>(slots.size(0)), CurrentStream()),
        "AdvanceSlots");
}

}  // namespace tandem
