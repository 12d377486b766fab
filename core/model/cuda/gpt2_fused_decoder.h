// GPT-2 decode on CUDA through Tandem's own kernels (CUDA builds only).
#ifndef TANDEM_CORE_MODEL_CUDA_GPT2_FUSED_DECODER_H_
#define TANDEM_CORE_MODEL_CUDA_GPT2_FUSED_DECODER_H_

#include <cstdint>
#include <functional>
#include <memory>

#include <ATen/ATen.h>

#include "core/model/causal_lm.h"
#include "core/model/cuda/side_stream.h"
#include "core/model/gpt2/gpt2_config.h"
#include "core/model/gpt2/gpt2_model.h"
#include "core/model/gpt2/gpt2_weights.h"
#include "core/model/kv_cache.h"

namespace tandem {

// A Gpt2Model whose decode runs on the fused kernels. Batches of up to
// kMaxGpt2FusedRows rows: an embedding kernel that reads each row's token and
// position (by slot in DecodeSlots), five kernels per layer (LayerNorm +
// QKV; attention with the K/V append; out-projection + residual; LayerNorm
// + FC + GELU; projection + residual), the final LayerNorm, the LM head and
// the greedy choice. Up to kMaxGpt2ClusterRows rows in fp16 / bf16: the
// same five kernels per layer, the projections on the cluster kernel
// (LaunchClusterLinear), then the final LayerNorm and the padded cuBLAS LM
// head of the larger batches. Larger batches: the same embedding and attention
// kernels with projections on the skinny kernel (up to 32 rows), the
// warp-group kernel where it has a tile, or cuBLAS (BatchedLinear), each
// residual add fused with the LayerNorm after it (one kernel), and the LM
// head on its rows padded to a multiple of 128 (Gpt2Model); from
// kMinGpt2HalvesRows to kMaxGpt2HalvesRows rows the two halves of the batch
// run their layers on two streams at once, joined before the LM head. Prefill runs
// the larger batches' layer over the whole pack (the embedding kernel,
// BatchedLinear's projections, residual adds fused with the LayerNorms) with the
// packed-prefill attention kernel.
//
// The projection weights keep their logical [K, N] shape but are stored
// [N, K] (each output's weights contiguous), the layout the kernels read;
// ATen's matmuls take either layout without copies. Owns the model.
// Threading: engine thread only.
// The batches GPT-2's decode runs on the fused kernels with their
// warp-per-column projections: up to 2 rows; from 4 rows (the next batch
// bucket) the cuBLAS path was faster (GPT-2 small bf16 on an H200,
// double-buffered + graphs: 4 rows 601 vs 517 us, 8 rows 776 vs 608 us; 2
// rows 344 vs 473; docs/results/bench/2026-11-30-h200-fused-rows/), as it
// still is for fp32 and for shapes the cluster kernel does not take.
inline constexpr int64_t kMaxGpt2FusedRows = 2;
// The batches above that whose layers take the cluster kernel (fp16 / bf16,
// LaunchClusterLinear: the LayerNorms and the residual adds folded into the
// projections): up to 8 rows. Larger batches keep BatchedLinear's kernels
// (then the skinny kernel up to 32 rows, or cuBLAS), faster there. GPT-2 small bf16 on an H200,
// double-buffered + graphs, against the previous paths in one call
// (2026-12-02): 4 rows 382.5 vs 433.8 us, 8 rows 413.5 vs 536.1; 16 rows
// 467.1 vs 409.5, 32 rows 516.0 vs 514.6, 64 rows 687.0 vs 602.8
// (docs/results/bench/2026-12-02-h200-cluster-linear/). Mixed steps (decode
// rows beside a prefill) keep the batched layer at every size, so a row's
// logits can differ by summation order between the two kinds of step.
inline constexpr int64_t kMaxGpt2ClusterRows = 8;

// The batches whose two halves run the layers beside each other (the second
// half on a side stream): each half's kernels are as latency-bound as the
// whole batch's, so two chains overlap some of them (the halves take the
// skinny kernel, up to 32 rows on half the GPU, whose grids leave the other
// chain room). GPT-2 small bf16 on an H200, double-buffered + graphs, against
// one chain in two calls (2026-12-02, before the skinny kernel took 32
// rows): 32 rows 507.0 / 506.0 vs 518.1 / 518.6 us, 64 rows 594.0 /
// 591.6 vs 605.8 / 605.1, 128 rows 770.7 / 769.8 vs 784.4 / 784.0; 256 rows
// 1,062.1 / 1,060.7 vs 1,059.1 / 1,057.8 (no gain); four chains of quarters
// were slower at every size (64 rows 807 us), and so were halves of a
// 16-row batch (656 vs 411 us): the chains' kernels fill the
// multiprocessors and wait for each other; a high-priority side stream
// changed nothing (64 rows 590.9 / 590.5 vs 589.9 / 591.0)
// (docs/results/bench/2026-12-02-h200-two-halves/). Since the batched
// projections above 32 rows run on the warp-group kernel, one chain is as
// fast at 48 and 56 rows and faster from 64 (64 rows 476.4 / 476.9 vs
// 495.2 / 494.6 us, 80 rows 561.6 / 562.1 vs 605.2 / 604.4;
// docs/results/bench/2026-12-03-h200-wgmma-tma/): halves of up to 32 rows.
inline constexpr int64_t kMinGpt2HalvesRows = 32;
inline constexpr int64_t kMaxGpt2HalvesRows = 63;

class Gpt2FusedDecoder : public CausalLm {
 public:
  // `weights` on a CUDA device, in a dtype FusedDecodeSupports accepts
  // (otherwise every batch takes the ATen path).
  Gpt2FusedDecoder(Gpt2Config config, Gpt2Weights weights);

  KvCacheShape kv_shape() const override { return model_.kv_shape(); }
  at::Tensor PrefillPacked(const PrefillPack& pack, KvCache* cache,
                           bool all_logits = false) const override;
  // The packed attention kernel reads tiles from the device.
  bool GraphablePrefill() const override { return prefill_kernel_; }
  // `attend_len` is ignored: the attention kernel reads each slot's length.
  at::Tensor Decode(const at::Tensor& slots, const at::Tensor& tokens,
                    const at::Tensor& positions, int64_t attend_len,
                    KvCache* cache) const override;
  SlotDecode DecodeSlots(const at::Tensor& slots, const at::Tensor& slot_tokens,
                         const at::Tensor& slot_positions, bool greedy,
                         KvCache* cache) const override;
  // One forward over the decode rows (first) and the pack's tokens: the
  // larger batches' layer, the decode and packed-prefill attention kernels
  // side by side in each layer (the pack's on a side stream, so they run at
  // the same time), one LM head (and greedy kernel) over the decode rows and
  // the pack's last rows.
  MixedDecode DecodeSlotsWithPrefill(const PrefillPack& pack, const at::Tensor& slots,
                                     const at::Tensor& slot_tokens,
                                     const at::Tensor& slot_positions, bool greedy,
                                     KvCache* cache) const override;
  bool FusesMixedSteps() const override { return prefill_kernel_ && fused_decode_; }

  // Whether a batch of `rows` takes the fused kernels.
  bool UsesFusedDecode(int64_t rows) const;
  // Whether a batch of `rows` (not on the fused kernels) runs as two halves
  // on two streams.
  bool UsesHalves(int64_t rows) const;
  const Gpt2Model& model() const { return model_; }

 private:
  // What every layer of a step reads besides the residual stream.
  struct LayerInputs {
    const at::Tensor& slots;      // [B]
    const at::Tensor& positions;  // [B], or per slot [S] when by_slot
    bool by_slot;
    KvCache* cache;
  };

  // The step: the embedding kernel, the layers, the final LayerNorm and the
  // LM head (and the greedy kernel), the last three one kernel at one row
  // where RowHeadFolds (n_embd up to 1,024 in fp16 / bf16, 512 in fp32: not
  // GPT-2 large or XL) (NormRowHead). `tokens` and `positions` are per row
  // [B], or per slot [S] when `by_slot`.
  SlotDecode Step(const at::Tensor& slots, const at::Tensor& tokens,
                  const at::Tensor& positions, bool by_slot, bool greedy, KvCache* cache) const;
  // Layer i on the fused kernels (up to kMaxGpt2FusedRows rows, or with
  // cluster_decode_ up to kMaxGpt2ClusterRows), in place on the residual
  // stream x [B, C].
  void FusedLayer(int64_t i, const LayerInputs& in, at::Tensor& x) const;
  // The attention step of a layer: qkv [R, 3, H, D] of the layer's R rows
  // (decode rows, or a prefill pack's padded tokens) -> [R, C].
  using AttendFn = std::function<at::Tensor(int64_t layer, const at::Tensor& qkv)>;
  // Layer i of the batches FusedLayer does not take (and every prefill and
  // mixed step): cuBLAS
  // projections, `attend`, each residual add fused with the LayerNorm after
  // it; in place on the residual stream x [R, C]. h [R, C] is the layer's
  // input LayerNorm's output, then the next one's (the final LayerNorm
  // after the last layer), written into `h_out` ([R, C]) where that is
  // defined.
  void BatchedLayer(int64_t i, const AttendFn& attend, at::Tensor& x, at::Tensor& h,
                    const at::Tensor& h_out = at::Tensor()) const;
  // Every batched layer over rows [begin, begin + length) of the step's
  // residual stream x [B, C] (in place), on the current stream: the final
  // LayerNorm's output [length, C], into `out` where that is defined. The
  // step's batched path (all rows, or each half).
  at::Tensor RowsThroughLayers(int64_t begin, int64_t length, const LayerInputs& in,
                               at::Tensor& x, const at::Tensor& out = at::Tensor()) const;
  // The layers of a UsesHalves batch: rows [B / 2, B) on halves_ beside
  // rows [0, B / 2) on the current stream, joined; the final LayerNorm's
  // output [B, C], each half writing its own rows of it.
  at::Tensor HalvesThroughLayers(const LayerInputs& in, at::Tensor& x) const;
  // The pack's attention in layer i: appends its real tokens' K/V (padding
  // rows stay out of the cache), then each token attends to its slot's
  // positions up to its own. qkv [P, 3, H, D] -> out [P, C] (contiguous),
  // zeros for padding.
  void PackAttention(int64_t i, const at::Tensor& qkv, const PrefillPack& pack, KvCache* cache,
                     const at::Tensor& out) const;
  // The LM head over h [R, C] (the final LayerNorm's output) on the larger
  // batches' path: float32 logits, and with `greedy` each row's token.
  SlotDecode BatchedHead(const at::Tensor& h, bool greedy) const;
  // The attention kernel of layer i (appends the rows' K/V), [B, H, D]; also
  // Gpt2Model's attention step where the other fused kernels do not apply.
  at::Tensor Attention(int64_t i, const at::Tensor& qkv, const LayerInputs& in,
                       const at::Tensor& out = at::Tensor()) const;
  Gpt2Model model_;
  bool attention_kernel_ = false;  // the dtype and head size suit the attention kernel
  bool prefill_kernel_ = false;    // ... and the packed-prefill attention kernel
  bool fused_decode_ = false;      // ... and the other shapes suit the fused kernels
  bool cluster_decode_ = false;    // ... and the cluster kernel's shapes (3-8 rows)
  // Where a mixed step's pack attends (with FusesMixedSteps()).
  std::unique_ptr<SideStream> side_;
  // Where a step's second half of rows runs its layers (UsesHalves).
  std::unique_ptr<SideStream> halves_;
  // The one-row head's (NormRowHead) block parts and ticket, written only by
  // its kernel. One launch at a time: only Step reaches it, for one-row
  // batches (eager, or the bucket-1 graph), and CudaRunner orders its steps
  // (each waits for the previous one's end event); mixed steps and halves
  // take BatchedHead.
  at::Tensor head_workspace_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_GPT2_FUSED_DECODER_H_
