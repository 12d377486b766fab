// The model interface every family implements: a decoder-only LM that
// prefills prompts into KV slots and decodes batches of slots.
#ifndef TANDEM_CORE_MODEL_CAUSAL_LM_H_
#define TANDEM_CORE_MODEL_CAUSAL_LM_H_

#include <cstdint>

#include <utility>

#include <ATen/ATen.h>

#include "core/model/kv_cache.h"
#include "core/model/prefill_pack.h"

namespace tandem {

// Stateless apart from its weights: K/V live in the KvCache passed in, of
// the shape kv_shape() asks for. Threading: engine thread only (the cache
// is written in place). Owned by a runner.
class CausalLm {
 public:
  // What DecodeSlots returns: logits [B, V] float32; with `greedy`, each
  // row's greedy token [B] int64 (the first maximum) and its
  // log-probability [B] float32, and the logits may be the LM head's own
  // output (the model's dtype, rows maybe strided): a greedy step's result
  // is its tokens, so the CUDA decoders skip the float32 copy.
  struct SlotDecode {
    at::Tensor logits;
    at::Tensor tokens;
    at::Tensor logprobs;
  };
  // What DecodeSlotsWithPrefill returns: the decode rows' SlotDecode and
  // the pack's: float32 logits [padded_segments, V] at each segment's last
  // token (as PrefillPacked), with `greedy` maybe its tokens and
  // log-probabilities too (where the forward computed them anyway).
  struct MixedDecode {
    SlotDecode decode;
    SlotDecode prefill;
  };

  virtual ~CausalLm() = default;

  // Layers, K/V heads and head size of the cache this model needs
  // (num_slots and max_context are left 0: the runner's choice).
  virtual KvCacheShape kv_shape() const = 0;

  // Runs a pack of prompt chunks as one forward: each token's K/V is
  // written at its position of its slot, and each token attends to its
  // slot's positions [0, its own] (earlier chunks' K/V included). Returns
  // float32 logits [padded_segments, V] at each segment's last token, or
  // with `all_logits` [num_tokens, V] at every token.
  virtual at::Tensor PrefillPacked(const PrefillPack& pack, KvCache* cache,
                                   bool all_logits = false) const = 0;

  // Whether PrefillPacked may be captured in a CUDA graph: it reads the pack
  // only through its device tensors (never `segments`), never synchronizes,
  // and treats every row as real (a graph's padding rows write a scratch
  // slot and attend to nothing).
  virtual bool GraphablePrefill() const { return false; }

  // One whole prompt `tokens` [T] (int64, on the model's device) into
  // `slot` at positions [0, T), as a pack of one (tests and tools; copies
  // the tokens to the host). Returns float32 logits [T, V] when
  // `all_logits`, else the last position's logits [1, V].
  at::Tensor Prefill(int64_t slot, const at::Tensor& tokens, KvCache* cache,
                     bool all_logits = false) const;

  // One decode step for B rows: `slots`, `tokens`, `positions` are [B] int64
  // on the device; row b's token is written at position positions[b] of
  // slot slots[b] (clamped to max_context - 1: a finished sequence's extra
  // pipelined row stays inside its slot) and attends to positions
  // [0, positions[b]]. `attend_len` must exceed every position (the host
  // knows it: max(positions) + 1); implementations that read each slot's own
  // length on the device may ignore it. Returns float32 logits [B, V].
  virtual at::Tensor Decode(const at::Tensor& slots, const at::Tensor& tokens,
                            const at::Tensor& positions, int64_t attend_len,
                            KvCache* cache) const = 0;

  // One decode step as a device-resident runner runs it: row b is slot
  // slots[b] [B], its token and position are slot_tokens[slots[b]] and
  // slot_positions[slots[b]] (per-slot state [S] int64 on the device).
  // Never synchronizes with the host. This default gathers by slot and calls
  // Decode with attend_len = max_context; the CUDA implementations fuse it.
  virtual SlotDecode DecodeSlots(const at::Tensor& slots, const at::Tensor& slot_tokens,
                                 const at::Tensor& slot_positions, bool greedy,
                                 KvCache* cache) const;

  // PrefillPacked(pack) and Decode(slots, tokens, positions, attend_len)
  // in one step: {the pack's logits, the decode rows' logits}, both
  // float32. This default runs the two one after the other; a model may run
  // them as one forward (each weight read once for both), as Gpt2Model
  // does (the eager runner's mixed steps). The pack's and the decode rows'
  // slots must differ.
  virtual std::pair<at::Tensor, at::Tensor> PrefillAndDecode(const PrefillPack& pack,
                                                             const at::Tensor& slots,
                                                             const at::Tensor& tokens,
                                                             const at::Tensor& positions,
                                                             int64_t attend_len,
                                                             KvCache* cache) const;

  // A step with prompt chunks and decode rows: PrefillPacked(pack) and
  // DecodeSlots(slots, ...) as one forward where FusesMixedSteps() (the
  // decode rows and the pack's tokens share each projection; the slots of
  // the pack and of the decode rows must differ); this default runs the
  // two one after the other. Never synchronizes with the host when both
  // parts do not (graph-capturable when GraphablePrefill()).
  virtual MixedDecode DecodeSlotsWithPrefill(const PrefillPack& pack, const at::Tensor& slots,
                                             const at::Tensor& slot_tokens,
                                             const at::Tensor& slot_positions, bool greedy,
                                             KvCache* cache) const;
  virtual bool FusesMixedSteps() const { return false; }
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CAUSAL_LM_H_
