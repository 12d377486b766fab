#include "core/text/stop_string_matcher.h"

#include <algorithm>

namespace tandem {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stop_strings)
    : stop_strings_(std::move(stop_strings)) {}

StopStringMatcher::Result StopStringMatcher::Append(absl::string_view text) {
  Result result;
  if (matched_) return result;
  pending_.append(text.data(), text.size());
  if (stop_strings_.empty()) {
    result.releasable.swap(pending_);
    return result;
  }
  // Earliest match wins; among matches at the same position, the longest.
  size_t best_pos = std::string::npos;
  const std::string* best = nullptr;
  for (const std::string& stop : stop_strings_) {
    const size_t pos = pending_.find(stop);
    if (pos == std::string::npos) continue;
    if (pos < best_pos || (pos == best_pos && stop.size() > best->size())) {
      best_pos = pos;
      best = &stop;
    }
  }
  if (best != nullptr) {
    matched_ = true;
    result.matched = true;
    result.stop = *best;
    result.releasable = pending_.substr(0, best_pos);
    pending_.clear();
    return result;
  }
  // Hold back the longest suffix of pending_ that is a proper prefix of a
  // stop string: it may still turn into a match.
  size_t hold = 0;
  for (const std::string& stop : stop_strings_) {
    const size_t max_len = std::min(stop.size() - 1, pending_.size());
    for (size_t len = max_len; len > hold; --len) {
      if (absl::string_view(pending_).substr(pending_.size() - len) ==
          absl::string_view(stop).substr(0, len)) {
        hold = len;
        break;
      }
    }
  }
  result.releasable = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return result;
}

std::string StopStringMatcher::Flush() {
  std::string out;
  if (!matched_) out.swap(pending_);
  return out;
}

}  // namespace tandem
