// GPT-2's byte-level alphabet (bytes_to_unicode()), shared by every
// byte-level BPE tokenizer: vocab tokens are written with one printable
// character per byte, and decoding maps them back to raw bytes.
#ifndef TANDEM_CORE_TEXT_BYTE_LEVEL_H_
#define TANDEM_CORE_TEXT_BYTE_LEVEL_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tandem {

// The character that stands for byte `b`: printable Latin-1 bytes stand for
// themselves, the other 68 bytes map to U+0100.. in byte order.
char32_t ByteLevelChar(unsigned char b);

// The UTF-8 spelling of each byte's character, concatenated: the form in
// which byte-level vocab.json and tokenizer.json files write tokens.
std::string BytesToByteLevel(absl::string_view bytes);

// Maps a token written in the byte-level alphabet back to raw bytes. Returns
// false (leaving *bytes unspecified) when `token` holds a character outside
// the alphabet, e.g. an added token such as "<|im start|>" with a real space.
bool ByteLevelToBytes(absl::string_view token, std::string* bytes);

// Appends the UTF-8 encoding of `c` (a Unicode scalar value).
void AppendUtf8(char32_t c, std::string* out);

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_BYTE_LEVEL_H_
