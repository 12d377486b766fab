// The parts of tokenizer.json around the model, for BpeTokenizer's loader:
// "added_tokens", "normalizer", "pre_tokenizer", "post_processor" and
// "decoder". Each is validated and turned into the pieces of
// BpeTokenizer::Parts; what is not supported is an error naming the field.
//
// Internal to tandem_text. Plain functions over caller-owned data; no state
// is shared between calls.
#ifndef TANDEM_CORE_TEXT_TOKENIZER_JSON_PIPELINE_H_
#define TANDEM_CORE_TEXT_TOKENIZER_JSON_PIPELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/text/added_token_matcher.h"
#include "core/text/bpe_tokenizer.h"
#include "core/text/tokenizer_json_reader.h"
#include "core/text/unicode_normalizer.h"

namespace tandem {
namespace tokenizer_json {

// tokenizer.json's "added_tokens".
absl::StatusOr<std::vector<AddedToken>> ParseAddedTokens(const FieldReader& r,
                                                         const Json& root);

// A normalizer at `path`, appended to `*forms` (a Sequence in order).
absl::Status ParseNormalizer(const FieldReader& r, const Json& node,
                             const std::string& path,
                             std::vector<NormalizationForm>* forms);

// A pre-tokenizer at `path`, appended to `*steps`; `*saw_byte_level` is set
// once a ByteLevel step has been seen.
absl::Status ParsePreTokenizer(const FieldReader& r, const Json& node,
                               const std::string& path, bool* saw_byte_level,
                               std::vector<BpeTokenizer::PreTokenizerStep>* steps);

// The special tokens that a post-processor puts around the text.
struct Template {
  bool present = false;
  std::vector<int32_t> prefix;
  std::vector<int32_t> suffix;
};

// A post-processor at `path`; a TemplateProcessing fills `*out`.
absl::Status ParsePostProcessor(const FieldReader& r, const Json& node,
                                const std::string& path, Template* out);

// Checks that the decoder at `path` is one that decoding implements.
absl::Status CheckDecoder(const FieldReader& r, const Json& node, const std::string& path);

}  // namespace tokenizer_json
}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_TOKENIZER_JSON_PIPELINE_H_
