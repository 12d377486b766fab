#include "core/engine/finish_reason.h"

namespace tandem {

absl::string_view FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kDeadline: return "deadline";
    case FinishReason::kShutdown: return "shutdown";
    case FinishReason::kError: return "error";
  }
  return "unknown";
}

}  // namespace tandem
