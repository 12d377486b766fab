#include "core/incremental_detokenizer.h"

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace tandem {
namespace {

constexpr absl::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

enum class SequenceKind { kValid, kInvalid, kIncomplete };

struct Sequence {
  SequenceKind kind;
  // kValid: the sequence length. kInvalid: the length of the maximal invalid
  // subpart. kIncomplete: the bytes left in the input.
  size_t length;
};

// Classifies the UTF-8 sequence starting at s[pos] following Unicode Table
// 3-7 (well-formed byte sequences).
Sequence ScanSequence(absl::string_view s, size_t pos) {
  const auto byte = [&](size_t i) -> unsigned {
    return static_cast<unsigned char>(s[i]);
  };
  const unsigned b0 = byte(pos);
  if (b0 < 0x80) return {SequenceKind::kValid, 1};
  size_t length;
  unsigned lo = 0x80, hi = 0xBF;  // Allowed range of the second byte.
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) lo = 0xA0;  // No overlong forms.
    if (b0 == 0xED) hi = 0x9F;  // No surrogates.
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) lo = 0x90;  // No overlong forms.
    if (b0 == 0xF4) hi = 0x8F;  // Nothing above U+10FFFF.
  } else {
    return {SequenceKind::kInvalid, 1};  // 80..C1, F5..FF never start one.
  }
  for (size_t i = 1; i < length; ++i) {
    if (pos + i >= s.size()) {
      return {SequenceKind::kIncomplete, s.size() - pos};
    }
    const unsigned b = byte(pos + i);
    if (i == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) {
      return {SequenceKind::kInvalid, i};
    }
  }
  return {SequenceKind::kValid, length};
}

}  // namespace

IncrementalDetokenizer::IncrementalDetokenizer(const Gpt2Tokenizer* tokenizer)
    : tokenizer_(tokenizer) {}

std::string IncrementalDetokenizer::Append(int32_t token_id) {
  pending_ += tokenizer_->TokenBytes(token_id);
  const absl::string_view bytes = pending_;
  std::string text;
  text.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    const Sequence seq = ScanSequence(bytes, pos);
    if (seq.kind == SequenceKind::kIncomplete) break;
    if (seq.kind == SequenceKind::kValid) {
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
