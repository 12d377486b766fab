// Finds stop strings in streamed text without ever releasing a stop string
// (or a prefix of one that may still complete) to the client.
#ifndef TANDEM_CORE_TEXT_STOP_STRING_MATCHER_H_
#define TANDEM_CORE_TEXT_STOP_STRING_MATCHER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tandem {

// Not thread-safe: one per sequence, used on the engine thread.
class StopStringMatcher {
 public:
  struct Result {
    std::string releasable;  // text that is safe to send now
    bool matched = false;    // a stop string was found; generation ends
    std::string stop;        // which one
  };

  explicit StopStringMatcher(std::vector<std::string> stop_strings);

  // Adds newly decoded text. When a stop string completes, `releasable` is
  // the text before it and everything after it is dropped.
  Result Append(absl::string_view text);

  // Releases whatever was held back (call when generation ends for another
  // reason).
  std::string Flush();

 private:
  std::vector<std::string> stop_strings_;
  std::string pending_;  // text not yet released
  bool matched_ = false;
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_STOP_STRING_MATCHER_H_
