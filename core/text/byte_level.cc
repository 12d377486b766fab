#include "core/text/byte_level.h"

#include <cstdint>
#include <iterator>

#include "core/text/utf8.h"

namespace tandem {
namespace {

struct ByteLevelTables {
  char32_t byte_to_char[256];
  // Inverse, indexed by code point (all are below 0x100 + 68); -1 = none.
  int16_t char_to_byte[0x100 + 68];

  ByteLevelTables() {
    for (auto& b : char_to_byte) b = -1;
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') ||
                             (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      byte_to_char[b] = printable ? b : 0x100 + n++;
      char_to_byte[byte_to_char[b]] = static_cast<int16_t>(b);
    }
  }
};

const ByteLevelTables& Tables() {
  static const ByteLevelTables* const tables = new ByteLevelTables();
  return *tables;
}

}  // namespace

char32_t ByteLevelChar(unsigned char b) { return Tables().byte_to_char[b]; }

std::string BytesToByteLevel(absl::string_view bytes) {
  const ByteLevelTables& tables = Tables();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char b : bytes) {
    AppendUtf8(tables.byte_to_char[static_cast<unsigned char>(b)], &out);
  }
  return out;
}

bool ByteLevelToBytes(absl::string_view token, std::string* bytes) {
  const ByteLevelTables& tables = Tables();
  bytes->clear();
  bytes->reserve(token.size());
  for (size_t pos = 0; pos < token.size();) {
    const Utf8Sequence seq = ScanUtf8Sequence(token, pos);
    if (seq.kind != Utf8SequenceKind::kValid) return false;
    const char32_t c = DecodeUtf8Sequence(token, pos, seq.length);
    if (c >= std::size(tables.char_to_byte) || tables.char_to_byte[c] < 0) {
      return false;
    }
    bytes->push_back(static_cast<char>(tables.char_to_byte[c]));
    pos += seq.length;
  }
  return true;
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace tandem
