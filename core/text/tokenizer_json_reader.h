// Typed access to the fields of a Hugging Face tokenizer file
// (tokenizer.json or tokenizer_config.json), for BpeTokenizer's loader:
// FieldReader parses the file's text into an nlohmann DOM and reads members
// with type checks, producing errors of the form "<file>: <field>: <what>".
// Quote and Show shorten text and JSON values for those messages.
//
// Internal to tandem_text (it exposes nlohmann::json, a private dependency).
// A FieldReader holds only the file's name: it is immutable once built and
// safe to use from many threads; the DOMs it returns belong to the caller.
#ifndef TANDEM_CORE_TEXT_TOKENIZER_JSON_READER_H_
#define TANDEM_CORE_TEXT_TOKENIZER_JSON_READER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tandem {
namespace tokenizer_json {

using Json = nlohmann::json;

// At most ~80 bytes of `text`, cut at a character boundary, in quotes.
std::string Quote(absl::string_view text);

// A JSON value, for messages: its dump, shortened.
std::string Show(const Json& value);

// Reads fields of one file, producing errors "<file>: <field>: <what>".
class FieldReader {
 public:
  explicit FieldReader(absl::string_view file) : file_(file) {}

  absl::Status Error(absl::string_view field, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, ": ", field, ": ", what));
  }

  // Parses `text`, which must hold a JSON object; `callback` as nlohmann's
  // parser takes it. Never throws.
  absl::StatusOr<Json> Parse(absl::string_view text,
                             Json::parser_callback_t callback = nullptr) const;

  // The member `key` of `object`, or nullptr when absent or null.
  static const Json* Find(const Json& object, absl::string_view key) {
    if (!object.is_object()) return nullptr;
    const auto it = object.find(std::string(key));
    if (it == object.end() || it->is_null()) return nullptr;
    return &*it;
  }

  // A boolean member; `fallback` when absent or null.
  absl::StatusOr<bool> Bool(const Json& object, absl::string_view key,
                            absl::string_view path, bool fallback) const;

  // A string member; nullopt when absent or null.
  absl::StatusOr<std::optional<std::string>> OptString(
      const Json& object, absl::string_view key, absl::string_view path) const;

  // The "type" member of a component at `path`.
  absl::StatusOr<std::string> Type(const Json& component,
                                   absl::string_view path) const;

  // A token id: an integer in [0, kMaxTokenId].
  absl::StatusOr<int32_t> Id(const Json& value, absl::string_view path) const;

  static std::string Path(absl::string_view path, absl::string_view key) {
    return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
  }
  static std::string Index(absl::string_view path, size_t i) {
    return absl::StrCat(path, "[", i, "]");
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

}  // namespace tokenizer_json
}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_TOKENIZER_JSON_READER_H_
