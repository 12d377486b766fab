// One request's state inside the scheduler.
#ifndef TANDEM_CORE_ENGINE_SEQUENCE_H_
#define TANDEM_CORE_ENGINE_SEQUENCE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "core/engine/generation_request.h"
#include "core/engine/sequence_output.h"
#include "core/text/tokenizer.h"

namespace tandem {

// Owned by the Scheduler (through a unique_ptr, so `output` may point into
// `request`); touched only on the engine thread.
struct Sequence {
  Sequence(uint64_t sequence_id, GenerationRequest req, const Tokenizer* tokenizer,
           const std::vector<int32_t>* eos_token_ids)
      : id(sequence_id),
        request(std::move(req)),
        output(&request, tokenizer, eos_token_ids) {}

  Sequence(const Sequence&) = delete;
  Sequence& operator=(const Sequence&) = delete;

  const uint64_t id;
  GenerationRequest request;
  int32_t slot = -1;  // -1 while waiting
  // Prompt tokens already planned into prefill chunks ([0, prefill_cursor)).
  int32_t prefill_cursor = 0;
  bool prefilled = false;  // the last chunk's step has completed
  SequenceOutput output;  // generated tokens, text, stop rule, timings
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_SEQUENCE_H_
