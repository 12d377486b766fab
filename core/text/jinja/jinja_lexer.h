// Splits a template into tokens exactly as @huggingface/jinja's tokenize()
// does with the options transformers uses (trim_blocks and lstrip_blocks
// on): one trailing newline dropped, spaces before a block tag on its line
// dropped, the newline after a block or comment tag dropped, `{%-`/`-%}`
// (and the `{{-`/`-}}`/`{#-`/`-#}` forms) strip the whitespace beside them,
// and transformers' `{% generation %}` tags vanish. Every token carries the
// line of the original source it came from, for error messages.
#ifndef TANDEM_CORE_TEXT_JINJA_JINJA_LEXER_H_
#define TANDEM_CORE_TEXT_JINJA_JINJA_LEXER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tandem::jinja {

enum class TokenType {
  kText,
  kNumericLiteral,
  kStringLiteral,
  kIdentifier,
  kEquals,
  kOpenParen,
  kCloseParen,
  kOpenStatement,
  kCloseStatement,
  kOpenExpression,
  kCloseExpression,
  kOpenSquareBracket,
  kCloseSquareBracket,
  kOpenCurlyBracket,
  kCloseCurlyBracket,
  kComma,
  kDot,
  kColon,
  kPipe,
  kAdditiveBinaryOperator,        // + - ~
  kMultiplicativeBinaryOperator,  // * / // %
  kExponentiationBinaryOperator,  // **
  kComparisonBinaryOperator,      // < > <= >= == !=
  kUnaryOperator,                 // - + where no operand precedes
  kComment,
};

const char* TokenTypeName(TokenType type);

struct Token {
  TokenType type;
  std::string value;
  int line;  // 1-based, in the source as written
};

class Lexer {
 public:
  // The tokens of `source`, or InvalidArgumentError naming the line.
  static absl::StatusOr<std::vector<Token>> Tokenize(std::string_view source);
};

}  // namespace tandem::jinja

#endif  // TANDEM_CORE_TEXT_JINJA_JINJA_LEXER_H_
