// One request's state inside the scheduler.
#ifndef TANDEM_CORE_SEQUENCE_H_
#define TANDEM_CORE_SEQUENCE_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "core/generation_request.h"
#include "core/incremental_detokenizer.h"
#include "core/stop_string_matcher.h"

namespace tandem {

// Owned by the Scheduler; touched only on the engine thread.
struct Sequence {
  Sequence(uint64_t sequence_id, GenerationRequest req,
           const Gpt2Tokenizer* tokenizer)
      : id(sequence_id),
        request(std::move(req)),
        detokenizer(tokenizer),
        stop_matcher(request.stopping.stop_strings) {}

  const uint64_t id;
  GenerationRequest request;
  int32_t slot = -1;  // -1 while waiting
  bool prefilled = false;
  std::vector<int32_t> generated;
  IncrementalDetokenizer detokenizer;
  StopStringMatcher stop_matcher;
  absl::Time prefill_start = absl::InfinitePast();
  absl::Time first_token = absl::InfinitePast();
  absl::Time last_token = absl::InfinitePast();
};

}  // namespace tandem

#endif  // TANDEM_CORE_SEQUENCE_H_
