// Why a sequence stopped generating.
#ifndef TANDEM_CORE_ENGINE_FINISH_REASON_H_
#define TANDEM_CORE_ENGINE_FINISH_REASON_H_

#include "absl/strings/string_view.h"

namespace tandem {

enum class FinishReason {
  kStop,       // EOS, a stop token id or a stop string
  kLength,     // max_tokens (or the end of the context window)
  kCancelled,  // the client cancelled
  kDeadline,   // the request's deadline passed
  kShutdown,   // the server's drain grace period ended
  kError,      // the model runner failed
};

// Lower-case name used in logs and metric labels ("stop", "length", ...).
absl::string_view FinishReasonName(FinishReason reason);

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_FINISH_REASON_H_
