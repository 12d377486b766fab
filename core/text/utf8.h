// UTF-8 well-formedness (Unicode Table 3-7), shared by the tokenizer and the
// incremental detokenizer.
#ifndef TANDEM_CORE_TEXT_UTF8_H_
#define TANDEM_CORE_TEXT_UTF8_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace tandem {

enum class Utf8SequenceKind { kValid, kInvalid, kIncomplete };

struct Utf8Sequence {
  Utf8SequenceKind kind;
  // kValid: the sequence length. kInvalid: the length of the maximal invalid
  // subpart. kIncomplete: the bytes left in the input.
  size_t length;
};

// Classifies the UTF-8 sequence starting at s[pos] (pos < s.size()).
Utf8Sequence ScanUtf8Sequence(absl::string_view s, size_t pos);

// The code point of the valid sequence of `length` bytes at s[pos].
char32_t DecodeUtf8Sequence(absl::string_view s, size_t pos, size_t length);

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_UTF8_H_
