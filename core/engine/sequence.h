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
  bool prefilled = false;
  SequenceOutput output;  // generated tokens, text, stop rule, timings
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_SEQUENCE_H_
