// FieldReader's parsing and typed member access; see tokenizer_json_reader.h.
#include "core/text/tokenizer_json_reader.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "core/base/json_nesting_depth.h"
#include "core/text/vocab_json.h"

namespace tandem {
namespace tokenizer_json {

std::string Quote(absl::string_view text) {
  size_t quoted = std::min<size_t>(text.size(), 80);
  while (quoted < text.size() && quoted > 0 &&
         (static_cast<unsigned char>(text[quoted]) & 0xC0) == 0x80) {
    --quoted;
  }
  return absl::StrCat("\"", text.substr(0, quoted),
                      quoted < text.size() ? "...\"" : "\"");
}

std::string Show(const Json& value) {
  return Quote(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

absl::StatusOr<Json> FieldReader::Parse(absl::string_view text,
                                        Json::parser_callback_t callback) const {
  // The pipeline's parsers (Sequence in Sequence) and the error messages'
  // dump() recurse on nesting; real files nest a few levels.
  if (JsonNestingDepth(text, kMaxJsonNesting) > kMaxJsonNesting) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ": JSON nests deeper than ", kMaxJsonNesting, " levels"));
  }
  Json json;
  try {
    json = Json::parse(text.begin(), text.end(), std::move(callback));
  } catch (const Json::parse_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ": malformed JSON: ", e.what()));
  } catch (const std::exception& e) {  // e.g. std::bad_alloc.
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ": cannot parse: ", e.what()));
  }
  if (!json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(file_, ": not a JSON object"));
  }
  return json;
}

absl::StatusOr<bool> FieldReader::Bool(const Json& object, absl::string_view key,
                                       absl::string_view path, bool fallback) const {
  const Json* value = Find(object, key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) {
    return Error(Path(path, key), absl::StrCat("expected true or false, got ", Show(*value)));
  }
  return value->get<bool>();
}

absl::StatusOr<std::optional<std::string>> FieldReader::OptString(
    const Json& object, absl::string_view key, absl::string_view path) const {
  const Json* value = Find(object, key);
  if (value == nullptr) return std::optional<std::string>();
  if (!value->is_string()) {
    return Error(Path(path, key), absl::StrCat("expected a string, got ", Show(*value)));
  }
  return std::optional<std::string>(value->get<std::string>());
}

absl::StatusOr<std::string> FieldReader::Type(const Json& component,
                                              absl::string_view path) const {
  if (!component.is_object()) {
    return Error(path, absl::StrCat("expected an object, got ", Show(component)));
  }
  absl::StatusOr<std::optional<std::string>> type = OptString(component, "type", path);
  if (!type.ok()) return type.status();
  if (!type->has_value()) return Error(Path(path, "type"), "missing");
  return **type;
}

absl::StatusOr<int32_t> FieldReader::Id(const Json& value, absl::string_view path) const {
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() <= static_cast<uint64_t>(kMaxTokenId)) {
    return static_cast<int32_t>(value.get<uint64_t>());
  }
  if (value.is_number_integer() && value.get<int64_t>() < 0) {
    return Error(path, absl::StrCat("the id ", value.get<int64_t>(), " is negative"));
  }
  return Error(path, absl::StrCat("expected a token id (an integer from 0 to ",
                                  kMaxTokenId, "), got ", Show(value)));
}

}  // namespace tokenizer_json
}  // namespace tandem
