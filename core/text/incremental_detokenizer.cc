#include "core/text/incremental_detokenizer.h"

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "core/text/utf8.h"

namespace tandem {
namespace {

constexpr absl::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer* tokenizer)
    : tokenizer_(tokenizer) {}

std::string IncrementalDetokenizer::Append(int32_t token_id) {
  pending_ += tokenizer_->TokenBytes(token_id);
  const absl::string_view bytes = pending_;
  std::string text;
  text.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    const Utf8Sequence seq = ScanUtf8Sequence(bytes, pos);
    if (seq.kind == Utf8SequenceKind::kIncomplete) break;
    if (seq.kind == Utf8SequenceKind::kValid) {
      text.append(bytes.data() + pos, seq.length);
    } else {
      text.append(kReplacementCharacter.data(), kReplacementCharacter.size());
    }
    pos += seq.length;
  }
  pending_.erase(0, pos);
  return text;
}

std::string IncrementalDetokenizer::Flush() {
  std::string text;
  if (!pending_.empty()) text = std::string(kReplacementCharacter);
  pending_.clear();
  return text;
}

}  // namespace tandem
