// ATen wrappers of the decode step's CUDA kernels (CUDA builds only). All run
// on the current stream without host synchronization (safe inside CUDA graph
// capture) and throw std::runtime_error when a kernel cannot be launched.
#ifndef TANDEM_CORE_MODEL_CUDA_DECODE_OPS_H_
#define TANDEM_CORE_MODEL_CUDA_DECODE_OPS_H_

#include <ATen/ATen.h>

#include "core/model/causal_lm.h"
#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/slot_state.h"
#include "core/model/sampler.h"

namespace tandem {

// qkv [B, 3, H, D] (the QKV projection of B decode rows); k_cache, v_cache
// [S, H, L, D] on the same CUDA device and dtype; slots [B] int64; positions
// [B] int64, or per-slot [S] when `positions_by_slot`. Appends each row's key
// and value at its position p of slot slots[b], then returns [B, H, D]:
// attention of each row over positions [0, p] of its slot. `slots` and
// `positions` must be written before the step's kernels (the kernel reads
// them before waiting for the previous one).
// With `out` defined ([B, H, D], contiguous) the result is written there.
at::Tensor DecodeAttention(const at::Tensor& qkv, at::Tensor& k_cache, at::Tensor& v_cache,
                           const at::Tensor& slots, const at::Tensor& positions,
                           bool positions_by_slot, double scale,
                           const at::Tensor& out = at::Tensor());

// The rotary embedding the attention kernel may apply (see DecodeRotary):
// inv_freq float32 [D / 2]; q_norm, k_norm [D] or undefined.
struct DecodeRope {
  at::Tensor inv_freq, q_norm, k_norm;
  double eps = 0.0;
};

// The same for grouped-query attention: qkv [B, heads + 2 kv_heads, D]
// (queries, then keys, then values), k_cache, v_cache [S, kv_heads, L, D];
// query head h reads K/V head h / (heads / kv_heads). With `rope` (only
// where DecodeAttentionRotates) the queries and new keys are rotated first.
at::Tensor GroupedDecodeAttention(const at::Tensor& qkv, int64_t heads, at::Tensor& k_cache,
                                  at::Tensor& v_cache, const at::Tensor& slots,
                                  const at::Tensor& positions, bool positions_by_slot,
                                  double scale, const DecodeRope* rope = nullptr,
                                  const at::Tensor& out = at::Tensor());

// Whether the attention kernel handles this dtype, head size and number of
// query heads per K/V head.
bool AttentionKernelSupports(at::ScalarType dtype, int64_t head_dim, int64_t group = 1);

// Whether the fused decode kernels handle this dtype and these shapes
// (hidden size, MLP inner size, head size).
bool FusedDecodeSupports(at::ScalarType dtype, int64_t channels, int64_t inner,
                         int64_t head_dim);

// Whether the cluster kernel (ClusterLinearSupports) takes all four
// projections of a GPT-2 layer of this dtype and shape: channels -> 3 x
// channels and channels -> inner after a LayerNorm, channels -> channels
// and inner -> channels with the residual add. fp16 / bf16 only.
bool ClusterLayerSupports(at::ScalarType dtype, int64_t channels, int64_t inner);

// The LayerNorm that precedes a projection, fused into it.
struct FusedNorm {
  const at::Tensor& weight;  // [K]
  const at::Tensor& bias;    // [K]
  double eps;
};

// x [B, K] -> [B, N] = T(layer_norm(x) @ weight_nk^T + bias), with GELU (tanh)
// when `gelu`. weight_nk [N, K] contiguous. With `cluster` on the cluster
// kernel (LaunchClusterLinear: fp16 / bf16, B <= kMaxClusterLinearRows)
// where ClusterLinearSupports the shape, else on the fused linear kernel
// (one warp per output column, B <= kMaxFusedRows). Which batches ask for
// the cluster kernel is the decoder's choice (Gpt2FusedDecoder: 3-8 rows).
at::Tensor NormLinear(const at::Tensor& x, const FusedNorm& norm, const at::Tensor& weight_nk,
                      const at::Tensor& bias, bool gelu, bool cluster);

// [B, N] = T(x @ weight_nk^T + bias) for x [B, K], B <= kMaxFusedRows, with
// no norm (one warp per output column: the GEMV path for small batches).
at::Tensor SmallBatchLinear(const at::Tensor& x, const at::Tensor& weight_nk,
                            const at::Tensor& bias);

// [R, N] = T(act(h @ weight_kn + bias)) for h [R, K] and weight_kn [K, N]
// (stored as [N, K]: weight_kn.t() contiguous), act = GELU (tanh) with
// `gelu`: the batched path's projections. Up to kSkinnyLinearUsedRows rows
// of fp16 / bf16 on the skinny tensor-core kernel, above them on the
// warp-group kernel where it has a tile (LaunchWgmmaLinear: Hopper), else
// cuBLAS (at::addmm); cuBLAS also takes inputs that are not contiguous and
// 16-byte aligned.
// H200, GPT-2 small bf16, double-buffered + graphs, against cuBLAS in one
// call (2026-12-01): N=8 543 vs 610 us per step, N=16 402 vs 469, N=32 518
// vs 512, N=64 789 vs 599. Without its shared-memory bank conflicts and
// on half the GPU (2026-12-02; the halves' chains run side by side) it
// takes up to 32 rows: against the previous build N=32 (16-row halves, the
// gain of half the GPU) 471.7 -> 408.5 us, N=64 (32-row halves) 586.7 ->
// 556.3; the 64-row halves of N=128 stay on cuBLAS (847 vs 767)
// (docs/results/bench/2026-12-02-h200-skinny-banks/).
inline constexpr int64_t kSkinnyLinearUsedRows = 32;
at::Tensor BatchedLinear(const at::Tensor& h, const at::Tensor& weight_kn, const at::Tensor& bias,
                         bool gelu);

// residual [B, N] += T(x @ weight_nk^T + bias), in place; x [B, K]; one row
// takes LaunchGemv, more the fused linear kernel (B <= kMaxFusedRows) or
// with `cluster` the cluster kernel as NormLinear does (GPT-2's path; the
// Llama family's fused-linear path passes false: not measured there).
void LinearAddResidual(const at::Tensor& x, const at::Tensor& weight_nk, const at::Tensor& bias,
                       bool cluster, at::Tensor& residual);

// [B, C] = T(layer_norm(x) * weight + bias), x [B, C], any B.
at::Tensor LayerNorm(const at::Tensor& x, const FusedNorm& norm);
// The same after x = T(x + residual) in place (residual [B, C], or
// undefined for none): a residual add and the LayerNorm after it in one
// kernel. Writes `into` ([B, C], contiguous, x's dtype) where it is
// defined, else a new tensor; returns what it wrote.
at::Tensor ResidualLayerNorm(at::Tensor& x, const at::Tensor& residual, const FusedNorm& norm,
                             const at::Tensor& into = at::Tensor());

// float32 [B, N] = float(T(x @ weight_nk^T)): the LM head's logits.
at::Tensor LmHeadLogits(const at::Tensor& x, const at::Tensor& weight_nk);

// One row's final LayerNorm, LM head and (with `greedy`) greedy choice in one
// kernel (LaunchRowLmHead), for x [1, K] (the residual stream, where
// RowHeadFolds) and head [V, K]: logits [1, V] float32, the bits of
// LmHeadLogits(LayerNorm(x, norm), head), and with `greedy` GreedyDecode's
// tokens [1] and log-probabilities [1] of them. workspace: RowHeadWorkspace's
// tensor; with `greedy`, one launch at a time may use it (the kernel's
// ticket and block parts): give each stream that may run one its own.
bool RowHeadFolds(const at::Tensor& x);
at::Tensor RowHeadWorkspace(const at::Device& device);
CausalLm::SlotDecode NormRowHead(const at::Tensor& x, const FusedNorm& norm,
                                 const at::Tensor& head, bool greedy,
                                 const at::Tensor& workspace);

// The step's input embeddings [B, C] = wte[tokens[r]] + wpe[min(positions[r],
// max_position)], with r = b (tokens and positions are [B]), or r = slots[b]
// when `slots` is defined (tokens and positions are per-slot state [S]).
// With wpe undefined (no learned positions): wte[tokens[r]], positions unused.
at::Tensor EmbedTokens(const at::Tensor& wte, const at::Tensor& wpe, const at::Tensor& slots,
                       const at::Tensor& tokens, const at::Tensor& positions,
                       int64_t max_position);

// Greedy choice over logits [B, V] float32: tokens [B] int64 (first maximum)
// and their log-probabilities [B] float32.
std::pair<at::Tensor, at::Tensor> GreedyTokens(const at::Tensor& logits);

// The same over an LM head's logits [B, V] in the model's dtype (rows may be
// strided: a padded head's output narrowed to V columns). With `convert`,
// returns them as float32 [B, V] contiguous with the tokens and
// log-probabilities, converted by the greedy kernel itself (one kernel
// instead of a conversion and the choice); without, returns `logits` as
// given (a greedy step, whose logits nobody reads: no [B, V] float32 write).
CausalLm::SlotDecode GreedyDecode(const at::Tensor& logits, bool convert = true);

// The device pointer of pinned host memory (a pinned_memory tensor's), for
// PublishRows, or null where the device cannot write it directly.
void* MappedHostPointer(const at::Tensor& pinned);
// Whether PublishRows takes these outputs: int64 tokens and float32
// log-probabilities, contiguous, of one length (else copy them).
bool PublishRowsTakes(const at::Tensor& tokens, const at::Tensor& logprobs);
// Writes tokens [R] int64 and logprobs [R] float32 (PublishRowsTakes) into pinned
// host memory through its device pointers (MappedHostPointer) with one kernel
// (LaunchPublishRows) instead of two copies; the host may read them once it
// has synchronized with an event recorded after this call on the stream.
void PublishRows(const at::Tensor& tokens, const at::Tensor& logprobs, int64_t* host_tokens,
                 float* host_logprobs);

// Advances the state of `slots` [B] by one step after `tokens` [B] were
// sampled for them (see LaunchAdvanceSlots).
void AdvanceSlots(const SlotStatePointers& state, const at::Tensor& slots,
                  const at::Tensor& tokens);

// After a prefill step: row r of `rows` ([R] each; the rng_offset field is
// unused) sets slot slots[r]'s decode state (next token tokens[r], position
// positions[r], RNG offset 1) and sampling parameters, unless slots[r] is
// the padding slot. One kernel (see LaunchSetPrefilledSlots).
void SetPrefilledSlots(SlotState* state, int64_t padding_slot, const at::Tensor& slots,
                       const at::Tensor& positions, const at::Tensor& tokens,
                       const SamplingTensors& rows);

// Writes the K and V of qkv [T, 3, H, D] (contiguous) at positions [T] of
// slots [T] of k_cache, v_cache [S, H, L, D] (one kernel, LaunchAppendKv).
void AppendKv(const at::Tensor& qkv, const at::Tensor& slots, const at::Tensor& positions,
              at::Tensor& k_cache, at::Tensor& v_cache);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_DECODE_OPS_H_
