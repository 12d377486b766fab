#include "core/text/added_token_matcher.h"

#include <utf8proc.h>

#include "core/text/utf8.h"

namespace tandem {
namespace {

// Rust's regex \w, which Hugging Face uses for single_word: letters, marks,
// decimal digits, letter numbers, connector punctuation, ZWNJ and ZWJ.
bool IsWordChar(char32_t c) {
  if (c == 0x200C || c == 0x200D) return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

// Unicode White_Space: Rust's char::is_whitespace, which Hugging Face uses
// for lstrip/rstrip.
bool IsUnicodeWhitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// The code point that starts at text[pos], or -1 when none valid does.
int64_t CharAt(absl::string_view text, size_t pos, size_t* length) {
  const Utf8Sequence seq = ScanUtf8Sequence(text, pos);
  *length = seq.length;
  if (seq.kind != Utf8SequenceKind::kValid) return -1;
  return DecodeUtf8Sequence(text, pos, seq.length);
}

// The code point that ends at text[end - 1] (end > 0), or -1; *start gets
// where it begins.
int64_t CharBefore(absl::string_view text, size_t end, size_t* start) {
  size_t pos = end - 1;
  while (pos > 0 && end - pos < 4 &&
         (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) {
    --pos;
  }
  size_t length = 0;
  const int64_t c = CharAt(text, pos, &length);
  if (c < 0 || pos + length != end) {
    *start = end - 1;
    return -1;
  }
  *start = pos;
  return c;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens) {
  nodes_.emplace_back();
  for (const AddedToken& token : tokens) {
    if (token.content.empty()) continue;
    const auto index = static_cast<int32_t>(tokens_.size());
    tokens_.push_back(token);
    int32_t node = 0;
    for (char ch : token.content) {
      const auto b = static_cast<unsigned char>(ch);
      int32_t child = -1;
      for (const auto& [byte, next] : nodes_[node].children) {
        if (byte == b) child = next;
      }
      if (child < 0) {
        child = static_cast<int32_t>(nodes_.size());
        nodes_[node].children.emplace_back(b, child);
        nodes_.emplace_back();
      }
      node = child;
    }
    // The same content listed twice: the later entry wins, as in a map.
    nodes_[node].token = index;
    first_byte_[static_cast<unsigned char>(token.content[0])] = true;
  }
}

int32_t AddedTokenMatcher::LongestMatch(absl::string_view text,
                                        size_t pos) const {
  int32_t best = -1;
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    int32_t child = -1;
    for (const auto& [byte, next] : nodes_[node].children) {
      if (byte == b) {
        child = next;
        break;
      }
    }
    if (child < 0) break;
    node = child;
    if (nodes_[node].token >= 0) best = nodes_[node].token;
  }
  return best;
}

void AddedTokenMatcher::Split(absl::string_view text,
                              std::vector<Segment>* out) const {
  size_t plain_start = 0;  // Start of the pending plain segment.
  size_t pos = 0;
  const size_t n = text.size();
  while (pos < n) {
    if (!first_byte_[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    const int32_t index = LongestMatch(text, pos);
    if (index < 0) {
      ++pos;
      continue;
    }
    const AddedToken& token = tokens_[index];
    size_t start = pos;
    size_t end = pos + token.content.size();
    if (token.single_word) {
      size_t unused = 0;
      const int64_t before = start > 0 ? CharBefore(text, start, &unused) : -1;
      const int64_t after = end < n ? CharAt(text, end, &unused) : -1;
      if ((before >= 0 && IsWordChar(static_cast<char32_t>(before))) ||
          (after >= 0 && IsWordChar(static_cast<char32_t>(after)))) {
        pos = end;  // Matches do not overlap, even a dropped one.
        continue;
      }
    }
    if (token.lstrip) {
      while (start > plain_start) {
        size_t char_start = 0;
        const int64_t c = CharBefore(text, start, &char_start);
        if (c < 0 || char_start < plain_start ||
            !IsUnicodeWhitespace(static_cast<char32_t>(c))) {
          break;
        }
        start = char_start;
      }
    }
    if (token.rstrip) {
      while (end < n) {
        size_t length = 0;
        const int64_t c = CharAt(text, end, &length);
        if (c < 0 || !IsUnicodeWhitespace(static_cast<char32_t>(c))) break;
        end += length;
      }
    }
    if (start > plain_start) {
      out->push_back({text.substr(plain_start, start - plain_start), -1});
    }
    out->push_back({text.substr(start, end - start), token.id});
    plain_start = pos = end;
  }
  if (plain_start < n) out->push_back({text.substr(plain_start), -1});
}

}  // namespace tandem
