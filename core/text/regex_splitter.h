// Splits text on the matches of a pre-tokenization pattern (Hugging Face's
// Split pre-tokenizer with behavior "Isolated", and ByteLevel's use_regex),
// with PCRE2.
#ifndef TANDEM_CORE_TEXT_REGEX_SPLITTER_H_
#define TANDEM_CORE_TEXT_REGEX_SPLITTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tandem {

// Immutable after creation: Split may be called from many threads at once
// (each call uses its own match data). Owns the compiled pattern.
class RegexSplitter {
 public:
  // GPT-2's pre-tokenization pattern, which ByteLevel's use_regex applies:
  //   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  static constexpr absl::string_view kGpt2Pattern =
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

  // A pattern written for Hugging Face's tokenizers (which match with
  // Oniguruma), compiled by PCRE2 in UTF mode with Unicode properties (UCP)
  // and JIT-compiled where the platform allows. Oniguruma's \s and \w are
  // wider than PCRE2's, so outside and inside character classes \s becomes
  // Unicode White_Space ([\t-\r\x{85}\p{Z}]) and \w [\p{L}\p{M}\p{Nd}\p{Pc}]
  // (\S, \W likewise outside classes). InvalidArgumentError carrying PCRE2's
  // message and offset when the pattern does not compile.
  static absl::StatusOr<std::unique_ptr<RegexSplitter>> FromRegex(
      absl::string_view pattern);
  // Splits on every occurrence of the literal string `literal` (non-empty).
  static absl::StatusOr<std::unique_ptr<RegexSplitter>> FromLiteral(
      absl::string_view literal);

  RegexSplitter(const RegexSplitter&) = delete;
  RegexSplitter& operator=(const RegexSplitter&) = delete;
  ~RegexSplitter();

  // Appends to `pieces` the matches (leftmost first, non-overlapping) and
  // the runs of text between them, in order; empty pieces are dropped, so
  // the pieces concatenate to `text`. Bytes that are not valid UTF-8 never
  // match and so end up in the runs between matches.
  void Split(absl::string_view text,
             std::vector<absl::string_view>* pieces) const;

  // The pattern as handed to PCRE2 (after the rewriting above).
  const std::string& pcre2_pattern() const { return pcre2_pattern_; }

 private:
  RegexSplitter() = default;

  std::string pcre2_pattern_;
  // pcre2_code_8*, kept opaque so that users need no PCRE2 headers.
  void* code_ = nullptr;
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_REGEX_SPLITTER_H_
