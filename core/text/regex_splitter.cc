#include "core/text/regex_splitter.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cctype>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tandem {
namespace {

// Oniguruma's Unicode \s (White_Space) and \w, as class bodies.
constexpr absl::string_view kSpaceBody = R"(\x{09}-\x{0D}\x{85}\p{Z})";
constexpr absl::string_view kWordBody = R"(\p{L}\p{M}\p{Nd}\p{Pc})";

// Rewrites \s \S \w \W (see FromRegex); everything else is copied.
std::string RewriteForPcre2(absl::string_view p) {
  std::string out;
  out.reserve(p.size() + 64);
  bool in_class = false;
  size_t class_body_start = 0;  // Where a literal ']' may open the body.
  for (size_t i = 0; i < p.size();) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char d = p[i + 1];
      if (d == 'Q') {  // \Q...\E quotes everything up to \E.
        const size_t end = p.find("\\E", i + 2);
        const size_t stop = end == absl::string_view::npos ? p.size() : end + 2;
        out.append(p.data() + i, stop - i);
        i = stop;
        continue;
      }
      const bool space = d == 's' || d == 'S';
      const bool word = d == 'w' || d == 'W';
      if (space || word) {
        const absl::string_view body = space ? kSpaceBody : kWordBody;
        const bool negated = d == 'S' || d == 'W';
        if (!in_class) {
          absl::StrAppend(&out, negated ? "[^" : "[", body, "]");
        } else if (!negated) {
          out.append(body.data(), body.size());
        } else {
          out.append(p.data() + i, 2);  // No set difference in PCRE2.
        }
        i += 2;
        continue;
      }
      out.append(p.data() + i, 2);
      i += 2;
      continue;
    }
    if (in_class) {
      if (c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
        const size_t end = p.find(":]", i + 2);
        const size_t stop = end == absl::string_view::npos ? p.size() : end + 2;
        out.append(p.data() + i, stop - i);
        i = stop;
        continue;
      }
      if (c == ']' && i != class_body_start) in_class = false;
      out.push_back(c);
      ++i;
      continue;
    }
    out.push_back(c);
    ++i;
    if (c == '[') {
      in_class = true;
      if (i < p.size() && p[i] == '^') out.push_back(p[i++]);
      class_body_start = i;
    }
  }
  return out;
}

pcre2_code* Code(void* code) { return static_cast<pcre2_code*>(code); }

}  // namespace

RegexSplitter::~RegexSplitter() { pcre2_code_free(Code(code_)); }

absl::StatusOr<std::unique_ptr<RegexSplitter>> RegexSplitter::FromRegex(
    absl::string_view pattern) {
  std::unique_ptr<RegexSplitter> splitter(new RegexSplitter());
  splitter->pcre2_pattern_ = RewriteForPcre2(pattern);
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(
      reinterpret_cast<PCRE2_SPTR>(splitter->pcre2_pattern_.data()),
      splitter->pcre2_pattern_.size(),
      PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset,
      nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    return absl::InvalidArgumentError(absl::StrCat(
        "the regex does not compile: ", reinterpret_cast<char*>(message),
        " at offset ", offset, " of \"", splitter->pcre2_pattern_, "\""));
  }
  splitter->code_ = code;
  // JIT is an optimization only: where it is unavailable (or fails) PCRE2's
  // interpreter runs the same pattern.
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  return splitter;
}

absl::StatusOr<std::unique_ptr<RegexSplitter>> RegexSplitter::FromLiteral(
    absl::string_view literal) {
  if (literal.empty()) {
    return absl::InvalidArgumentError("the split string is empty");
  }
  std::string escaped;
  for (char c : literal) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80 && !std::isalnum(u)) escaped.push_back('\\');
    escaped.push_back(c);
  }
  // Escaping a space or a control character is harmless; the rewrite
  // leaves "\ " alone as it is no class escape.
  return FromRegex(escaped);
}

void RegexSplitter::Split(absl::string_view text,
                          std::vector<absl::string_view>* pieces) const {
  const size_t n = text.size();
  if (n == 0) return;
  // One ovector pair is enough: only the whole match is used (pcre2_match
  // returns 0 when there are more groups, still filling pair 0).
  pcre2_match_data* match = pcre2_match_data_create(1, nullptr);
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t prev = 0;   // End of the last piece emitted.
  size_t start = 0;  // Where the next search starts.
  uint32_t options = 0;
  while (start <= n && match != nullptr) {
    int rc = pcre2_match(Code(code_), subject, n, start, options, match,
                         nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      // The JIT's default stack (32 KiB on the machine stack) is too small
      // for this input: the interpreter keeps its frames on the heap.
      options |= PCRE2_NO_JIT;
      rc = pcre2_match(Code(code_), subject, n, start, options, match,
                       nullptr);
    }
    if (rc < 0) break;  // No (further) match, or a limit was hit.
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
    const size_t begin = ovector[0];
    const size_t end = ovector[1];
    if (end <= begin) {
      // An empty match yields no piece; search on from the next character.
      size_t next = begin + 1;
      while (next < n && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) {
        ++next;
      }
      start = next;
      continue;
    }
    if (begin > prev) pieces->push_back(text.substr(prev, begin - prev));
    pieces->push_back(text.substr(begin, end - begin));
    prev = start = end;
  }
  pcre2_match_data_free(match);
  if (prev < n) pieces->push_back(text.substr(prev));
}

}  // namespace tandem
