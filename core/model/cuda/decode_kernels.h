// The decode step's CUDA kernels, behind plain-pointer launchers (no Torch
// headers, so nvcc compiles the .cu files alone). core/model/cuda/decode_ops.h wraps
// them for ATen tensors. Every launcher enqueues on `stream`, never
// synchronizes and allocates nothing, so all are safe inside CUDA graph
// capture. Tensors are row-major and contiguous unless said otherwise.
#ifndef TANDEM_CORE_MODEL_CUDA_DECODE_KERNELS_H_
#define TANDEM_CORE_MODEL_CUDA_DECODE_KERNELS_H_

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

namespace tandem {

// Element type of the model's activations and weights.
enum class KernelDType { kFloat32, kFloat16, kBFloat16 };

// Rows (decode sequences) the fused linear kernel handles in one launch.
inline constexpr int kMaxFusedRows = 8;

// The Llama family's rotary embedding, applied by the decode attention
// kernel to each row's query and new key before it attends (what
// LaunchQkNormRope computes, rounded the same way): first the per-head
// RMSNorm with q_norm / k_norm [D] (Qwen3; null for none), then the rotation
// at the row's position by angles position * inv_freq[i] (float32 [D / 2]).
struct DecodeRotary {
  const float* inv_freq = nullptr;
  const void* q_norm = nullptr;
  const void* k_norm = nullptr;
  float eps = 0.0f;
};

// For each row b and query head h, with slot = slots[b], p = positions[b],
// or positions[slot] when `positions_by_slot` (clamped to max_context - 1),
// and g = h / (H / Hkv) its K/V head (grouped-query attention; g = h when
// Hkv = H): first appends the row's new key and value (qkv[b, H + g, :],
// qkv[b, H + Hkv + g, :]) at position p of the slot, then
// out[b, h, :] = softmax(q . K[slot, g, t, :] * scale, t <= p) . V[slot, g, t, :]
// with q = qkv[b, h, :]; with `rotary` (not null) q and the new key are
// rotated first (DecodeRotary; qkv itself is left alone, the cache gets the
// rotated key). Reads only the first p + 1 positions of each
// slot: its cost follows the sequences' lengths, not max_context.
//
// Shapes: qkv [B, H + 2 Hkv, D] (GPT-2's [B, 3, H, D] is Hkv = H); out
// [B, H, D]; k_cache, v_cache [S, Hkv, L, D];
// slots [B], positions [B] (or [S]) int64; D and H / Hkv as
// DecodeAttentionSupports allows (64 or 128). Up to kMaxFusedRows rows, or
// H = Hkv: one pass with an online softmax, a block per (query head, row),
// each row's context split over a cluster of up to 8 blocks while the rows'
// heads alone would leave multiprocessors idle; more rows with H > Hkv:
// LaunchGroupedDecodeAttention. `slots` and
// `positions` are read (and the slot's earlier K/V prefetched into L2, or
// where the grid is one wave, the first pass of it loaded) before
// waiting for the previous kernel: they must be written before the step's
// first kernel (see LaunchEmbedTokens), or before a plain launch that
// precedes this one.
cudaError_t LaunchDecodeAttention(KernelDType dtype, const void* qkv, void* k_cache,
                                  void* v_cache, const int64_t* slots,
                                  const int64_t* positions, bool positions_by_slot, void* out,
                                  int batch, int heads, int kv_heads, int head_dim,
                                  int max_context, float scale, cudaStream_t stream,
                                  const DecodeRotary* rotary = nullptr);

// How LaunchDecodeAttention's kernel runs a batch (up to kMaxFusedRows rows,
// or H = Hkv): each row's context split over `splits` blocks (a cluster),
// `threads` threads a block. Depends on the batch, the heads, the slots'
// positions (max_context) and the device's multiprocessors only.
struct DecodeAttentionShape {
  int splits = 1;
  int threads = 256;  // 128, 256, or 512 with preload
  // The first pass's keys and values loaded before waiting for the previous
  // kernel (which the slot's cached positions never come from).
  bool preload = false;
  // Without preload: positions a thread loads together (a chunk's depth),
  // and the 256-thread blocks' worth a multiprocessor keeps resident (the
  // register cap: 64 a thread at 4, 85 at 3, 128 at 2). Pairs: (4, 4),
  // (4, 3), (6, 2), (3, 4). With preload both are ignored: 4, one block.
  int ahead = 4;
  int blocks = 4;
  // With splits > 1: the most positions a split takes before the context is
  // spread over more of the cluster's blocks; each row uses the fewest
  // splits (a power of 2, at most `splits`) that keep its slices within it,
  // and the cluster's other blocks exit (one split: no parts exchanged).
  // 0: always every split.
  int split_positions = 0;
};
// The shape LaunchDecodeAttention takes for `batch` rows of `heads` heads
// over slots of max_context positions.
DecodeAttentionShape DecodeAttentionShapeFor(int batch, int heads, int max_context);
// "block 256 split 1", " within P" with split_positions, then " preload" or,
// at a depth other than (4, 4), " ahead A xB" (the attention bench's rows, the
// attention test's messages).
std::string DecodeAttentionShapeName(const DecodeAttentionShape& shape);

// LaunchDecodeAttention at a given shape (tandem-attention-bench's sweep):
// splits 1, 2, 4 or 8, threads 128 or 256 (or 512 with preload), the (ahead,
// blocks) pairs above,
// any split_positions (0 or less: every split); cudaErrorInvalidValue for others.
cudaError_t LaunchDecodeAttentionShaped(const DecodeAttentionShape& shape, KernelDType dtype,
                                        const void* qkv, void* k_cache, void* v_cache,
                                        const int64_t* slots, const int64_t* positions,
                                        bool positions_by_slot, void* out, int batch,
                                        int heads, int kv_heads, int head_dim,
                                        int max_context, float scale, cudaStream_t stream,
                                        const DecodeRotary* rotary = nullptr);

// Whether LaunchDecodeAttention takes a DecodeRotary for this batch (its
// kernel for up to kMaxFusedRows rows, or without grouped-query attention;
// larger grouped batches need the rotation applied first: LaunchQkNormRope).
bool DecodeAttentionRotates(int batch, int heads, int kv_heads);

// Whether LaunchDecodeAttention handles this head size and group = H / Hkv
// query heads per K/V head at every batch size (GPT-2's 64 and 1 always).
bool DecodeAttentionSupports(KernelDType dtype, int head_dim, int group);

// The same attention for batches of any size, as used above kMaxFusedRows
// rows with grouped-query attention: one block per (K/V head, row, context slice) takes all the query
// heads of its K/V head, so each key and value is read once per group; the
// slices of a row (2 to 4, by batch size) form a thread-block cluster
// (sm_90) whose first block merges their softmax parts. Needs no dynamic
// shared memory of L's size.
cudaError_t LaunchGroupedDecodeAttention(KernelDType dtype, const void* qkv, void* k_cache,
                                         void* v_cache, const int64_t* slots,
                                         const int64_t* positions, bool positions_by_slot,
                                         void* out, int batch, int heads, int kv_heads,
                                         int head_dim, int max_context, float scale,
                                         cudaStream_t stream);

// Whether LaunchGroupedDecodeAttention handles head_dim (64, 128) and group (1 to 8).
bool GroupedDecodeAttentionSupports(int head_dim, int group);

// What the fused linear kernel does after the dot products acc = x' . w.
enum class LinearEpilogue {
  kBias,          // out = T(acc + bias)
  kBiasGelu,      // out = T(gelu_tanh(acc + bias))
  kBiasResidual,  // out = T(out + T(acc + bias)): adds into the residual stream in place
  kSwiGlu,        // LaunchGemv only (gemv_kernel.h): gate and up columns paired
};

// out[m, n] = epilogue(sum_k x'[m, k] * weight[n, k]) for m < rows, n < N,
// where x' = T(layer_norm(x) * norm_weight + norm_bias) (the LayerNorm that
// precedes the projection, fused; eps as given) for kBiasGelu and for kBias
// with norm pointers, and x' = x for kBiasResidual and kBias whose norm
// pointers are null. Rounding to T
// happens where ATen rounds on the CUDA reference path (layer_norm, addmm, or
// cuBLASLt's addmm with its GELU epilogue, which applies GELU before
// rounding; + add), so results match it up to summation order. x [rows, K]; weight [N, K]
// (each output's weights contiguous: the transpose of GPT-2's Conv1D [K, N]
// layout); bias [N]; out [rows, N]. rows in [1, kMaxFusedRows]; K * element
// size and every pointer aligned to 16 bytes. Launched with programmatic
// dependent launch: reads the weights, the bias and (one row, K in one
// chunk) the LayerNorm weights before the previous kernel has finished, so
// no kernel of the same step may write them.
cudaError_t LaunchFusedLinear(KernelDType dtype, LinearEpilogue epilogue, const void* x,
                              const void* norm_weight, const void* norm_bias, float eps,
                              const void* weight, const void* bias, void* out, int rows, int K,
                              int N, cudaStream_t stream);

// Rows up to which LaunchSkinnyLinear applies.
inline constexpr int kMaxSkinnyRows = 64;

// out[m, n] = T(act(sum_k x[m, k] * weight[n, k] + bias[n])) for m < rows,
// n < N, act = gelu_tanh with `gelu`, else identity: x [rows, K], weight
// [N, K], bias [N], out [rows, N], all contiguous, fp16 or bf16, on tensor
// cores with fp32 accumulation (skinny_linear_kernel.cu). Launched with
// programmatic dependent launch: reads the weights before the previous
// kernel has finished. Where SkinnyLinearSupports is false it launches
// nothing and returns cudaErrorInvalidValue.
bool SkinnyLinearSupports(KernelDType dtype, int rows, int K, int N);
cudaError_t LaunchSkinnyLinear(KernelDType dtype, bool gelu, const void* x, const void* weight,
                               const void* bias, void* out, int rows, int K, int N,
                               cudaStream_t stream);

// The same contract as LaunchSkinnyLinear for any number of rows, on
// Hopper's warp-group tensor cores (wgmma, wgmma_linear_kernel.cu; an H100 /
// H200 only): tiles of 64 rows x `columns` outputs over K / `splits`, the
// splits of a tile one thread-block cluster. Launched with programmatic
// dependent launch: copies its whole weight tile into shared memory before
// the previous kernel has finished. max_blocks 0: the GPU's
// multiprocessors; `config` (an index below
// WgmmaLinearConfigCount) forces a tile shape, -1 picks the one the step
// runs, the most blocks: one K slice within max_blocks (one wave), or where
// no one-slice tile fits the shape (a K past 1,024, as GPT-2 fc2), a split within half
// of them. A forced tile ignores max_blocks.
// Where WgmmaLinearSupports is false (not sm_90, fp32, no such tile: cuBLAS
// runs the projection) it launches nothing and returns cudaErrorInvalidValue.
struct WgmmaLinearConfig {
  int columns;
  int splits;
};
int WgmmaLinearConfigCount();
WgmmaLinearConfig WgmmaLinearConfigAt(int index);
// The index LaunchWgmmaLinear picks with config -1 (-1: none fits).
int WgmmaLinearConfigFor(int rows, int K, int N, int max_blocks);
// Whether tile shape `config` fits the problem at all (shared memory, K
// blocks; any number of blocks): LaunchWgmmaLinear runs it when forced.
bool WgmmaLinearConfigFits(int config, int rows, int K, int N);
bool WgmmaLinearSupports(KernelDType dtype, int rows, int K, int N, int max_blocks);
cudaError_t LaunchWgmmaLinear(KernelDType dtype, bool gelu, const void* x, const void* weight,
                              const void* bias, void* out, int rows, int K, int N,
                              int max_blocks, cudaStream_t stream, int config = -1);

// Rows up to which LaunchClusterLinear applies.
inline constexpr int kMaxClusterLinearRows = 64;
// LaunchFusedLinear's contract (epilogues kBias, kBiasGelu, kBiasResidual;
// the LayerNorm fused when norm_weight and norm_bias are not null, except
// with kBiasResidual; kBiasGelu also without it) for up to
// kMaxClusterLinearRows rows of fp16 / bf16 on
// tensor cores (cluster_linear_kernel.cu): the LayerNorm before the
// projection and the residual add after it need no kernel of their own.
// Each block takes a K slice of a 64- or 128-column tile; the slices of a
// tile form a thread-block cluster (sm_90) that shares the LayerNorm's
// statistics and adds the partial sums. Launched with programmatic
// dependent launch: copies its weights before the previous kernel has
// finished. Where ClusterLinearSupports is false it launches nothing and
// returns cudaErrorInvalidValue.
bool ClusterLinearSupports(KernelDType dtype, LinearEpilogue epilogue, int rows, int K, int N);
cudaError_t LaunchClusterLinear(KernelDType dtype, LinearEpilogue epilogue, const void* x,
                                const void* norm_weight, const void* norm_bias, float eps,
                                const void* weight, const void* bias, void* out, int rows,
                                int K, int N, cudaStream_t stream);
// out[m, :] = T(layer_norm(x[m, :]) * weight + bias) for m < rows (the
// final LayerNorm before the LM head; above kMaxFusedRows rows every
// LayerNorm). With `residual` (not null) first x[m, :] = T(x[m, :] +
// residual[m, :]) in place (the residual add that precedes the LayerNorm).
// x, residual, out [rows, C]; weight, bias [C]; C a multiple of 16 bytes.
// Up to kMaxFusedRows rows one block (a warp per row's statistics); above,
// one block per row (up to 8 16-byte vectors per thread of 128).
cudaError_t LaunchLayerNorm(KernelDType dtype, void* x, const void* residual,
                            const void* weight, const void* bias, float eps, void* out,
                            int rows, int channels, cudaStream_t stream);

// The LM head: logits[m, n] = float(T(sum_k x[m, k] * weight[n, k])), float32
// [rows, N] (x is the final LayerNorm's output). Shapes and alignment as
// LaunchFusedLinear.
cudaError_t LaunchLmHead(KernelDType dtype, const void* x, const void* weight, float* logits,
                         int rows, int K, int N, cudaStream_t stream);

// x[b, :] = T(wte[tokens[r], :] + wpe[min(positions[r], max_position), :])
// with r = b, or r = slots[b] when `slots` is not null (tokens and positions
// are then per-slot state [S]). wte [V, C], wpe [P, C], x [B, C]; slots [B]
// int64. With wpe null (no learned positions), x[b, :] = wte[tokens[r], :]
// and positions is not read. The first kernel of a fused step: launched
// without programmatic serialization, it starts after all earlier work in
// the stream (and every later kernel of the step after it), so the step's
// kernels may read the step's inputs before waiting for their predecessor.
cudaError_t LaunchEmbedTokens(KernelDType dtype, const void* wte, const void* wpe,
                              const int64_t* slots, const int64_t* tokens,
                              const int64_t* positions, int64_t max_position, void* x,
                              int batch, int channels, cudaStream_t stream);

// One row's LM head in one wave of blocks whose warps loop over the columns
// (K <= 128 x 16 bytes: RowLmHeadSupports), with two steps of the decode
// folded in on request:
// - norm.weight not null: x [K] is the residual stream and the kernel applies
//   the final LayerNorm itself (the LayerNorm kernel's bits);
// - greedy.tokens not null: tokens[0] and logprobs[0] as LaunchGreedyTokens
//   defines them, from the logits as they are written.
// logits [N] float32 as LaunchLmHead writes them (the same bits). GPT-2
// small bf16 N=1: the three kernels' 173.4 / 174.5 us per step -> 170.5 /
// 170.4 (docs/results/bench/2026-12-03-h200-tail-fold/).
// greedy.workspace: RowLmHeadWorkspaceBytes() bytes on the device, zeroed
// before its first launch; the kernel leaves it ready for the next one, and
// only one launch may use it at a time.
struct RowLmHeadNorm {
  const void* weight = nullptr;  // [K], or null: no LayerNorm
  const void* bias = nullptr;    // [K]
  float eps = 0.0f;
};
struct RowLmHeadGreedy {
  int64_t* tokens = nullptr;  // [1], or null: logits only
  float* logprobs = nullptr;  // [1]
  void* workspace = nullptr;
};
bool RowLmHeadSupports(KernelDType dtype, int K);
int64_t RowLmHeadWorkspaceBytes();
cudaError_t LaunchRowLmHead(KernelDType dtype, const void* x, const RowLmHeadNorm& norm,
                            const void* weight, float* logits, int K, int N,
                            const RowLmHeadGreedy& greedy, cudaStream_t stream);

// Greedy decoding of logits [B, V] float32: tokens[b] = the first index of the
// row's maximum, logprobs[b] = its log-softmax value.
cudaError_t LaunchGreedyTokens(const float* logits, int batch, int vocab, int64_t* tokens,
                               float* logprobs, cudaStream_t stream);

// The same over logits of `dtype` (an LM head's output before its
// conversion), row b at logits + b * row_stride (>= vocab: a padded head's
// rows); with `copy` (not null) also writes them there as float32 [B, V], so
// the conversion needs no kernel of its own.
cudaError_t LaunchGreedyTokensOf(KernelDType dtype, const void* logits, int batch, int vocab,
                                 int64_t row_stride, float* copy, int64_t* tokens,
                                 float* logprobs, cudaStream_t stream);

// Per-slot decode state, indexed by slot id (see CudaRunner). Whether a
// sequence stops is decided on the host (SequenceOutput), not here.
struct SlotStatePointers {
  int64_t* next_token;  // [S]
  int64_t* position;    // [S]
  int64_t* rng_offset;  // [S]
  // Rows of this slot pad a batch to its bucket; their state never advances
  // (so they keep attending over one position).
  int64_t padding_slot;
};

// After a decode step sampled tokens[b] for slot slots[b] (b < batch): the
// slot's next token becomes tokens[b], and its position and RNG offset
// advance by one. `slots` is read before waiting for the previous kernel:
// no kernel of the step before this one may write it (see LaunchEmbedTokens).
cudaError_t LaunchAdvanceSlots(const SlotStatePointers& state, const int64_t* slots,
                               const int64_t* tokens, int batch, cudaStream_t stream);

// Writes a step's tokens [count] int64 and their log-probabilities [count]
// float32 into pinned host memory (host_tokens, host_logprobs: device
// pointers of it, cudaHostGetDevicePointer), once the previous kernel is
// done: one kernel instead of two copies through the copy engine. GPT-2
// small bf16, double-buffered + graphs, per step: N=1 175.5 / 176.4 ->
// 170.5 / 170.4 us, N=256 929.2 / 929.8 -> 924.3 / 924.4
// (docs/results/bench/2026-12-03-h200-tail-fold/call2-merge-publish/).
cudaError_t LaunchPublishRows(const int64_t* tokens, const float* logprobs, int count,
                              int64_t* host_tokens, float* host_logprobs, cudaStream_t stream);

// Per-slot sampling parameters, indexed by slot id.
struct SlotParamsPointers {
  float* temperature;  // [S]
  float* top_p;        // [S]
  float* min_p;        // [S]
  int64_t* top_k;      // [S]
  int64_t* seed;       // [S]
};

// A prefill step's rows (each chunk's last token), all [rows]: the slot the
// row sets (state.padding_slot: none, the chunk does not end its prompt),
// the position and token its first decode step feeds, and its sampling
// parameters.
struct PrefilledRows {
  const int64_t* slots;
  const int64_t* positions;
  const int64_t* tokens;
  const float* temperature;
  const float* top_p;
  const float* min_p;
  const int64_t* top_k;
  const int64_t* seed;
};

// Writes the decode state of each row's slot (RNG offset 1: the first
// token was sampled at offset 0). One launch for every field.
cudaError_t LaunchSetPrefilledSlots(const SlotStatePointers& state,
                                    const SlotParamsPointers& params, const PrefilledRows& rows,
                                    int count, cudaStream_t stream);

// Copies the K and V of `rows` tokens, qkv [rows, 3, H, D] (contiguous,
// 16-byte aligned; Q is skipped), into k_cache, v_cache [S, H, L, D] at
// position positions[r] of slot slots[r]. `head_bytes` = D * element size,
// a multiple of 16. One launch for both.
cudaError_t LaunchAppendKv(const void* qkv, void* k_cache, void* v_cache, const int64_t* slots,
                           const int64_t* positions, int rows, int heads, int head_bytes,
                           int max_context, cudaStream_t stream);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_DECODE_KERNELS_H_
