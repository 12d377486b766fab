// Comparing secrets (API keys) without an early exit, so the time a
// comparison takes does not reveal how much of a guess was right.
#ifndef TANDEM_CORE_BASE_CONSTANT_TIME_H_
#define TANDEM_CORE_BASE_CONSTANT_TIME_H_

#include "absl/strings/string_view.h"

namespace tandem {

// True when `a` and `b` are equal. Its time depends on their lengths only.
inline bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace tandem

#endif  // TANDEM_CORE_BASE_CONSTANT_TIME_H_
