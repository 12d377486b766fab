// A guard for parsing untrusted JSON headers with nlohmann-json: duplicate
// keys (which nlohmann would otherwise silently collapse) detected during
// parsing. (The nesting limit checked before parsing is in
// core/base/json_nesting_depth.h.)
#ifndef TANDEM_CORE_CHECKPOINT_JSON_GUARDS_H_
#define TANDEM_CORE_CHECKPOINT_JSON_GUARDS_H_

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem {

// Parser callback state that records the first key repeated within one JSON
// object (nlohmann would otherwise silently keep the last value).
class DuplicateKeyDetector {
 public:
  bool OnEvent(int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    switch (event) {
      case nlohmann::json::parse_event_t::object_start:
        keys_.emplace_back();
        break;
      case nlohmann::json::parse_event_t::array_start:
        keys_.emplace_back();  // Placeholder so ends pop symmetrically.
        break;
      case nlohmann::json::parse_event_t::object_end:
      case nlohmann::json::parse_event_t::array_end:
        if (!keys_.empty()) keys_.pop_back();
        break;
      case nlohmann::json::parse_event_t::key:
        if (!keys_.empty() && parsed.is_string()) {
          const std::string& key = parsed.get_ref<const std::string&>();
          if (!keys_.back().insert(key).second && !found_) {
            found_ = true;
            duplicate_ = key;
            duplicate_depth_ = keys_.size();
          }
        }
        break;
      case nlohmann::json::parse_event_t::value:
        break;
    }
    return true;  // Keep everything.
  }

  bool found() const { return found_; }
  const std::string& duplicate() const { return duplicate_; }
  // 1 for a top-level key (a tensor name or "__metadata__").
  size_t duplicate_depth() const { return duplicate_depth_; }

 private:
  std::vector<std::set<std::string>> keys_;
  bool found_ = false;
  std::string duplicate_;
  size_t duplicate_depth_ = 0;
};

}  // namespace tandem

#endif  // TANDEM_CORE_CHECKPOINT_JSON_GUARDS_H_
