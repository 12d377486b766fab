#include "core/model/causal_lm.h"

#include <vector>

namespace tandem {

at::Tensor CausalLm::Prefill(int64_t slot, const at::Tensor& tokens, KvCache* cache,
                             bool all_logits) const {
  const at::Tensor host = tokens.to(at::kCPU).to(at::kInt).contiguous();
  const std::vector<int32_t> ids(host.data_ptr<int32_t>(),
                                 host.data_ptr<int32_t>() + host.numel());
  const PrefillPack pack = MakePrefillPack({{slot, 0, ids}}, tokens.device());
  return PrefillPacked(pack, cache, all_logits);
}

CausalLm::SlotDecode CausalLm::DecodeSlots(const at::Tensor& slots,
                                           const at::Tensor& slot_tokens,
                                           const at::Tensor& slot_positions, bool greedy,
                                           KvCache* cache) const {
  SlotDecode out{Decode(slots, slot_tokens.index_select(0, slots),
                        slot_positions.index_select(0, slots), cache->max_context(), cache)};
  if (greedy) {
    out.tokens = out.logits.argmax(-1);
    out.logprobs =
        at::log_softmax(out.logits, -1).gather(1, out.tokens.unsqueeze(1)).squeeze(1);
  }
  return out;
}

std::pair<at::Tensor, at::Tensor> CausalLm::PrefillAndDecode(
    const PrefillPack& pack, const at::Tensor& slots, const at::Tensor& tokens,
    const at::Tensor& positions, int64_t attend_len, KvCache* cache) const {
  at::Tensor prefill = PrefillPacked(pack, cache);
  return {std::move(prefill), Decode(slots, tokens, positions, attend_len, cache)};
}

CausalLm::MixedDecode CausalLm::DecodeSlotsWithPrefill(const PrefillPack& pack,
                                                       const at::Tensor& slots,
                                                       const at::Tensor& slot_tokens,
                                                       const at::Tensor& slot_positions,
                                                       bool greedy, KvCache* cache) const {
  MixedDecode out;
  out.prefill.logits = PrefillPacked(pack, cache);
  out.decode = DecodeSlots(slots, slot_tokens, slot_positions, greedy, cache);
  return out;
}

}  // namespace tandem
