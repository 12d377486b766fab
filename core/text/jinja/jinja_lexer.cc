#include "core/text/jinja/jinja_lexer.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/text/jinja/jinja_js.h"

namespace tandem::jinja {
namespace {

// Text being preprocessed, with the offset in the original source of each
// of its bytes.
struct MappedText {
  std::string text;
  std::vector<uint32_t> origin;

  void Append(const MappedText& from, size_t begin, size_t end) {
    text.append(from.text, begin, end - begin);
    origin.insert(origin.end(), from.origin.begin() + begin, from.origin.begin() + end);
  }
};

bool IsLineTerminatorAt(std::string_view s, size_t i, size_t* len) {
  if (s[i] == '\n' || s[i] == '\r') {
    *len = 1;
    return true;
  }
  // U+2028 and U+2029.
  if (s.substr(i, 2) == "\xE2\x80" && i + 2 < s.size() && (s[i + 2] == '\xA8' || s[i + 2] == '\xA9')) {
    *len = 3;
    return true;
  }
  return false;
}

// The start of the JavaScript whitespace character that ends at `end`, or
// `end` if there is none.
size_t WhitespaceStartBefore(std::string_view s, size_t end) {
  if (end == 0) return end;
  size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80 && end - start < 4) {
    --start;
  }
  return JsSpaceLength(s, start) == end - start ? start : end;
}

// lstrip_blocks: /^[ \t]*({[#%-])/gm -> "$1".
MappedText LstripBlocks(const MappedText& in) {
  MappedText out;
  const std::string_view s = in.text;
  size_t copied = 0;
  bool line_start = true;
  for (size_t i = 0; i < s.size();) {
    if (line_start) {
      size_t q = i;
      while (q < s.size() && (s[q] == ' ' || s[q] == '\t')) ++q;
      if (q > i && q + 1 < s.size() && s[q] == '{' &&
          (s[q + 1] == '#' || s[q + 1] == '%' || s[q + 1] == '-')) {
        out.Append(in, copied, i);
        copied = q;
        i = q;
      }
    }
    size_t len = 0;
    if (IsLineTerminatorAt(s, i, &len)) {
      line_start = true;
      i += len;
    } else {
      line_start = false;
      ++i;
    }
  }
  out.Append(in, copied, s.size());
  return out;
}

// trim_blocks: /([#%-]})\n/g -> "$1".
MappedText TrimBlocks(const MappedText& in) {
  MappedText out;
  const std::string_view s = in.text;
  size_t copied = 0;
  for (size_t i = 0; i + 2 < s.size();) {
    if ((s[i] == '#' || s[i] == '%' || s[i] == '-') && s[i + 1] == '}' && s[i + 2] == '\n') {
      out.Append(in, copied, i + 2);
      copied = i + 3;
      i += 3;
    } else {
      ++i;
    }
  }
  out.Append(in, copied, s.size());
  return out;
}

size_t SkipJsSpace(std::string_view s, size_t i) {
  while (size_t n = JsSpaceLength(s, i)) i += n;
  return i;
}

// transformers' generation tags:
// /(\s*){%(-?)\s*(?:end)?generation\s*(-?)%}(\s*)/gs, replaced by the
// whitespace around them unless a `-` strips it.
MappedText RemoveGenerationTags(const MappedText& in) {
  MappedText out;
  const std::string_view s = in.text;
  size_t pos = 0;  // where the next match may start
  size_t search = 0;
  while (true) {
    const size_t j = s.find("{%", search);
    if (j == std::string_view::npos) break;
    size_t k = j + 2;
    const bool lstrip = k < s.size() && s[k] == '-';
    if (lstrip) ++k;
    k = SkipJsSpace(s, k);
    if (s.substr(k, 3) == "end" && s.substr(k + 3, 10) == "generation") k += 3;
    if (s.substr(k, 10) != "generation") {
      search = j + 1;
      continue;
    }
    k = SkipJsSpace(s, k + 10);
    const bool rstrip = k < s.size() && s[k] == '-';
    if (rstrip) ++k;
    if (s.substr(k, 2) != "%}") {
      search = j + 1;
      continue;
    }
    const size_t tag_end = k + 2;
    size_t before = j;
    while (before > pos) {
      const size_t start = WhitespaceStartBefore(s, before);
      if (start == before || start < pos) break;
      before = start;
    }
    const size_t after = SkipJsSpace(s, tag_end);
    out.Append(in, pos, before);
    if (!lstrip) out.Append(in, before, j);
    if (!rstrip) out.Append(in, tag_end, after);
    pos = after;
    search = after;
  }
  out.Append(in, pos, s.size());
  return out;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsWord(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

struct Mapping {
  const char* seq;
  TokenType type;
};

constexpr Mapping kOrderedMappingTable[] = {
    {"{%", TokenType::kOpenStatement},
    {"%}", TokenType::kCloseStatement},
    {"{{", TokenType::kOpenExpression},
    {"}}", TokenType::kCloseExpression},
    {"(", TokenType::kOpenParen},
    {")", TokenType::kCloseParen},
    {"{", TokenType::kOpenCurlyBracket},
    {"}", TokenType::kCloseCurlyBracket},
    {"[", TokenType::kOpenSquareBracket},
    {"]", TokenType::kCloseSquareBracket},
    {",", TokenType::kComma},
    {".", TokenType::kDot},
    {":", TokenType::kColon},
    {"|", TokenType::kPipe},
    {"<=", TokenType::kComparisonBinaryOperator},
    {">=", TokenType::kComparisonBinaryOperator},
    {"==", TokenType::kComparisonBinaryOperator},
    {"!=", TokenType::kComparisonBinaryOperator},
    {"<", TokenType::kComparisonBinaryOperator},
    {">", TokenType::kComparisonBinaryOperator},
    {"+", TokenType::kAdditiveBinaryOperator},
    {"-", TokenType::kAdditiveBinaryOperator},
    {"~", TokenType::kAdditiveBinaryOperator},
    {"**", TokenType::kExponentiationBinaryOperator},
    {"*", TokenType::kMultiplicativeBinaryOperator},
    {"//", TokenType::kMultiplicativeBinaryOperator},
    {"/", TokenType::kMultiplicativeBinaryOperator},
    {"%", TokenType::kMultiplicativeBinaryOperator},
    {"=", TokenType::kEquals},
};

class Tokenizer {
 public:
  Tokenizer(std::string_view original, MappedText src) : src_(std::move(src)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < original.size(); ++i) {
      if (original[i] == '\n') line_starts_.push_back(i + 1);
    }
    end_origin_ = original.size();
  }

  absl::StatusOr<std::vector<Token>> Run();

 private:
  int LineAt(size_t pos) const {
    const size_t origin = pos < src_.origin.size() ? src_.origin[pos] : end_origin_;
    return static_cast<int>(std::upper_bound(line_starts_.begin(), line_starts_.end(), origin) -
                            line_starts_.begin());
  }
  absl::Status Error(size_t pos, std::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat("line ", LineAt(pos), ": ", std::string(message)));
  }
  char At(size_t i) const { return i < s().size() ? s()[i] : '\0'; }
  std::string_view s() const { return src_.text; }
  bool StartsWith(std::string_view seq) const { return s().substr(cursor_, seq.size()) == seq; }
  void Push(TokenType type, std::string value, size_t pos) {
    tokens_.push_back(Token{type, std::move(value), LineAt(pos)});
  }
  void StripTrailingWhitespace() {
    if (!tokens_.empty() && tokens_.back().type == TokenType::kText) {
      tokens_.back().value = std::string(JsTrimEnd(tokens_.back().value));
      if (tokens_.back().value.empty()) tokens_.pop_back();
    }
  }
  void SkipLeadingWhitespace() { cursor_ = SkipJsSpace(s(), cursor_); }
  std::string ConsumeDigits() {
    const size_t start = cursor_;
    while (IsDigit(At(cursor_))) ++cursor_;
    return std::string(s().substr(start, cursor_ - start));
  }
  absl::StatusOr<std::string> ConsumeString(char quote);

  MappedText src_;
  std::vector<size_t> line_starts_;
  size_t end_origin_ = 0;
  size_t cursor_ = 0;
  int curly_bracket_depth_ = 0;
  std::vector<Token> tokens_;
};

absl::StatusOr<std::string> Tokenizer::ConsumeString(char quote) {
  const size_t start = cursor_ - 1;
  std::u16string pending;  // \x and \u escapes, which are UTF-16 code units
  std::string str;
  const auto flush = [&] {
    if (!pending.empty()) str += FromUtf16(pending);
    pending.clear();
  };
  while (true) {
    if (cursor_ >= s().size()) return Error(start, "Unexpected end of input in a string literal");
    const char c = s()[cursor_];
    if (c == quote) break;
    if (c != '\\') {
      flush();
      str.push_back(c);
      ++cursor_;
      continue;
    }
    ++cursor_;
    if (cursor_ >= s().size()) return Error(start, "Unexpected end of input");
    const char escaped = s()[cursor_++];
    if (escaped == 'x' || escaped == 'u') {
      const size_t length = escaped == 'x' ? 2 : 4;
      const std::string_view hex = s().substr(cursor_, length);
      if (hex.size() != length ||
          !std::all_of(hex.begin(), hex.end(), [](char h) { return std::isxdigit(static_cast<unsigned char>(h)); })) {
        return Error(cursor_, absl::StrCat("Invalid hexadecimal escape sequence: \\", std::string(1, escaped), std::string(hex)));
      }
      pending.push_back(static_cast<char16_t>(std::stoul(std::string(hex), nullptr, 16)));
      cursor_ += length;
      continue;
    }
    flush();
    switch (escaped) {
      case 'n': str += '\n'; break;
      case 't': str += '\t'; break;
      case 'r': str += '\r'; break;
      case 'b': str += '\b'; break;
      case 'f': str += '\f'; break;
      case 'v': str += '\v'; break;
      case '\'': str += '\''; break;
      case '"': str += '"'; break;
      case '\\': str += '\\'; break;
      default:
        return Error(cursor_ - 1, absl::StrCat("Unexpected escaped character: ", std::string(1, escaped)));
    }
  }
  flush();
  return str;
}

absl::StatusOr<std::vector<Token>> Tokenizer::Run() {
  while (cursor_ < s().size()) {
    // Text outside of statements and expressions.
    const bool after_tag =
        tokens_.empty() || tokens_.back().type == TokenType::kCloseStatement ||
        tokens_.back().type == TokenType::kCloseExpression ||
        tokens_.back().type == TokenType::kComment;
    if (after_tag) {
      const size_t start = cursor_;
      while (cursor_ < s().size() &&
             !(s()[cursor_] == '{' &&
               (At(cursor_ + 1) == '%' || At(cursor_ + 1) == '{' || At(cursor_ + 1) == '#'))) {
        ++cursor_;
      }
      if (cursor_ > start) {
        Push(TokenType::kText, std::string(s().substr(start, cursor_ - start)), start);
        continue;
      }
    }

    // A comment, {# ... #}.
    if (At(cursor_) == '{' && At(cursor_ + 1) == '#') {
      const size_t start = cursor_;
      cursor_ += 2;
      const bool strip_before = At(cursor_) == '-';
      if (strip_before) ++cursor_;
      std::string comment;
      while (At(cursor_) != '#' || At(cursor_ + 1) != '}') {
        if (cursor_ + 2 >= s().size()) return Error(start, "Missing end of comment tag");
        comment.push_back(s()[cursor_++]);
      }
      const bool strip_after = !comment.empty() && comment.back() == '-';
      if (strip_after) comment.pop_back();
      if (strip_before) StripTrailingWhitespace();
      Push(TokenType::kComment, std::move(comment), start);
      cursor_ += 2;
      if (strip_after) SkipLeadingWhitespace();
      continue;
    }

    if (StartsWith("{%-")) {
      StripTrailingWhitespace();
      Push(TokenType::kOpenStatement, "{%", cursor_);
      cursor_ += 3;
      continue;
    }
    if (StartsWith("{{-")) {
      StripTrailingWhitespace();
      Push(TokenType::kOpenExpression, "{{", cursor_);
      curly_bracket_depth_ = 0;
      cursor_ += 3;
      continue;
    }

    // Whitespace inside statements and expressions.
    SkipLeadingWhitespace();
    if (cursor_ >= s().size()) break;

    if (StartsWith("-%}")) {
      Push(TokenType::kCloseStatement, "%}", cursor_);
      cursor_ += 3;
      SkipLeadingWhitespace();
      continue;
    }
    if (StartsWith("-}}")) {
      Push(TokenType::kCloseExpression, "}}", cursor_);
      cursor_ += 3;
      SkipLeadingWhitespace();
      continue;
    }

    const char c = s()[cursor_];
    const size_t start = cursor_;

    // A sign: unary unless an operand precedes it.
    if (c == '-' || c == '+') {
      if (tokens_.empty() || tokens_.back().type == TokenType::kText) {
        return Error(start, absl::StrCat("Unexpected character: ", std::string(1, c)));
      }
      switch (tokens_.back().type) {
        case TokenType::kIdentifier:
        case TokenType::kNumericLiteral:
        case TokenType::kStringLiteral:
        case TokenType::kCloseParen:
        case TokenType::kCloseSquareBracket:
          break;  // a binary operator
        default: {
          ++cursor_;
          std::string num = ConsumeDigits();
          if (!num.empty() && At(cursor_) == '.' && IsDigit(At(cursor_ + 1))) {
            ++cursor_;
            num += "." + ConsumeDigits();
          }
          const bool is_number = !num.empty();
          Push(is_number ? TokenType::kNumericLiteral : TokenType::kUnaryOperator,
               std::string(1, c) + num, start);
          continue;
        }
      }
    }

    bool matched = false;
    for (const Mapping& m : kOrderedMappingTable) {
      const std::string_view seq = m.seq;
      if (seq == "}}" && curly_bracket_depth_ > 0) continue;
      if (!StartsWith(seq)) continue;
      Push(m.type, std::string(seq), start);
      if (m.type == TokenType::kOpenExpression) {
        curly_bracket_depth_ = 0;
      } else if (m.type == TokenType::kOpenCurlyBracket) {
        ++curly_bracket_depth_;
      } else if (m.type == TokenType::kCloseCurlyBracket) {
        --curly_bracket_depth_;
      }
      cursor_ += seq.size();
      matched = true;
      break;
    }
    if (matched) continue;

    if (c == '\'' || c == '"') {
      ++cursor_;
      absl::StatusOr<std::string> str = ConsumeString(c);
      if (!str.ok()) return str.status();
      Push(TokenType::kStringLiteral, *std::move(str), start);
      ++cursor_;  // the closing quote
      continue;
    }

    if (IsDigit(c)) {
      std::string num = ConsumeDigits();
      if ((tokens_.empty() || tokens_.back().type != TokenType::kDot) && At(cursor_) == '.' &&
          IsDigit(At(cursor_ + 1))) {
        ++cursor_;
        num += "." + ConsumeDigits();
      }
      Push(TokenType::kNumericLiteral, std::move(num), start);
      continue;
    }
    if (IsWord(c)) {
      while (IsWord(At(cursor_))) ++cursor_;
      Push(TokenType::kIdentifier, std::string(s().substr(start, cursor_ - start)), start);
      continue;
    }

    std::string character;
    size_t i = cursor_;
    AppendUtf8(DecodeUtf8(s(), &i), &character);
    return Error(start, absl::StrCat("Unexpected character: ", character));
  }
  return std::move(tokens_);
}

}  // namespace

const char* TokenTypeName(TokenType type) {
  switch (type) {
    case TokenType::kText: return "Text";
    case TokenType::kNumericLiteral: return "NumericLiteral";
    case TokenType::kStringLiteral: return "StringLiteral";
    case TokenType::kIdentifier: return "Identifier";
    case TokenType::kEquals: return "Equals";
    case TokenType::kOpenParen: return "OpenParen";
    case TokenType::kCloseParen: return "CloseParen";
    case TokenType::kOpenStatement: return "OpenStatement";
    case TokenType::kCloseStatement: return "CloseStatement";
    case TokenType::kOpenExpression: return "OpenExpression";
    case TokenType::kCloseExpression: return "CloseExpression";
    case TokenType::kOpenSquareBracket: return "OpenSquareBracket";
    case TokenType::kCloseSquareBracket: return "CloseSquareBracket";
    case TokenType::kOpenCurlyBracket: return "OpenCurlyBracket";
    case TokenType::kCloseCurlyBracket: return "CloseCurlyBracket";
    case TokenType::kComma: return "Comma";
    case TokenType::kDot: return "Dot";
    case TokenType::kColon: return "Colon";
    case TokenType::kPipe: return "Pipe";
    case TokenType::kAdditiveBinaryOperator: return "AdditiveBinaryOperator";
    case TokenType::kMultiplicativeBinaryOperator: return "MultiplicativeBinaryOperator";
    case TokenType::kExponentiationBinaryOperator: return "ExponentiationBinaryOperator";
    case TokenType::kComparisonBinaryOperator: return "ComparisonBinaryOperator";
    case TokenType::kUnaryOperator: return "UnaryOperator";
    case TokenType::kComment: return "Comment";
  }
  return "?";
}

absl::StatusOr<std::vector<Token>> Lexer::Tokenize(std::string_view source) {
  MappedText text;
  text.text = std::string(source);
  text.origin.resize(source.size());
  for (size_t i = 0; i < source.size(); ++i) text.origin[i] = static_cast<uint32_t>(i);
  if (!text.text.empty() && text.text.back() == '\n') {
    text.text.pop_back();
    text.origin.pop_back();
  }
  text = TrimBlocks(LstripBlocks(text));
  text = RemoveGenerationTags(text);
  return Tokenizer(source, std::move(text)).Run();
}

}  // namespace tandem::jinja
