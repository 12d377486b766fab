#include "core/text/utf8.h"

namespace tandem {

Utf8Sequence ScanUtf8Sequence(absl::string_view s, size_t pos) {
  const auto byte = [&](size_t i) -> unsigned {
    return static_cast<unsigned char>(s[i]);
  };
  const unsigned b0 = byte(pos);
  if (b0 < 0x80) return {Utf8SequenceKind::kValid, 1};
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
    return {Utf8SequenceKind::kInvalid, 1};  // 80..C1, F5..FF never start one.
  }
  for (size_t i = 1; i < length; ++i) {
    if (pos + i >= s.size()) {
      return {Utf8SequenceKind::kIncomplete, s.size() - pos};
    }
    const unsigned b = byte(pos + i);
    if (i == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) {
      return {Utf8SequenceKind::kInvalid, i};
    }
  }
  return {Utf8SequenceKind::kValid, length};
}

char32_t DecodeUtf8Sequence(absl::string_view s, size_t pos, size_t length) {
  const auto b0 = static_cast<unsigned char>(s[pos]);
  if (length == 1) return b0;
  char32_t c = b0 & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    c = (c << 6) | (static_cast<unsigned char>(s[pos + i]) & 0x3F);
  }
  return c;
}

}  // namespace tandem
