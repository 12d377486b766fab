// tokenizer.json's "model" section for BpeTokenizer's loader: a streaming
// parse of tokenizer.json that takes model.vocab and model.merges out of
// the DOM as they are read (ParseTokenizerJson), and the validation that
// turns them and the rest of "model" into a BpeModel (ParseModel).
//
// Internal to tandem_text. Plain functions over caller-owned data; no state
// is shared between calls.
#ifndef TANDEM_CORE_TEXT_TOKENIZER_JSON_MODEL_H_
#define TANDEM_CORE_TEXT_TOKENIZER_JSON_MODEL_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/text/bpe_model.h"
#include "core/text/tokenizer_json_reader.h"

namespace tandem {
namespace tokenizer_json {

// model.vocab and model.merges of tokenizer.json, taken out while parsing:
// a DOM of their million-odd small values would cost more than the rest of
// loading together.
struct ModelTables {
  bool vocab_seen = false;   // model.vocab was an object.
  bool merges_seen = false;  // model.merges was an array.
  std::vector<std::pair<std::string, Json>> vocab;
  std::vector<Json> merges;
  std::optional<std::string> nested_vocab_value;  // A key whose value is not a scalar.
};

// Parses tokenizer.json's `text`; the DOM returned lacks model.vocab's and
// model.merges' entries, which go to `*tables`.
absl::StatusOr<Json> ParseTokenizerJson(const FieldReader& r, absl::string_view text,
                                        ModelTables* tables);

// tokenizer.json's "model"; its vocab and merges are in `tables`.
absl::StatusOr<std::unique_ptr<BpeModel>> ParseModel(const FieldReader& r, const Json& root,
                                                     const ModelTables& tables);

}  // namespace tokenizer_json
}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_TOKENIZER_JSON_MODEL_H_
