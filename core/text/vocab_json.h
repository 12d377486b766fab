// vocab.json of a byte-level BPE tokenizer: a flat JSON object of token
// string -> id.
#ifndef TANDEM_CORE_TEXT_VOCAB_JSON_H_
#define TANDEM_CORE_TEXT_VOCAB_JSON_H_

#include <cstdint>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tandem {

// Ids above this are rejected so a corrupt vocab cannot force a huge table.
inline constexpr int64_t kMaxTokenId = (int64_t{1} << 24) - 1;

// Parses `json` without exceptions and without building a DOM.
// InvalidArgumentError (malformed JSON, a value that is not a non-negative
// integer up to kMaxTokenId, a duplicate token) says what and where; the
// caller adds the file's name.
absl::StatusOr<std::unordered_map<std::string, int32_t>> ParseVocabJson(
    absl::string_view json);

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_VOCAB_JSON_H_
