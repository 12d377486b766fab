// Builds the syntax tree from tokens, with @huggingface/jinja's grammar and
// operator precedence, then rejects what this interpreter cannot evaluate:
// unknown statements, filters, tests, functions and methods, call blocks,
// macros that read `varargs`/`kwargs`, and forms @huggingface/jinja
// accepts but can only fail on at run time (`x|default` without
// parentheses, `x is eq`, `{% set d['k'] = v %}`, ...). Every error names
// the construct and its line.
#ifndef TANDEM_CORE_TEXT_JINJA_JINJA_PARSER_H_
#define TANDEM_CORE_TEXT_JINJA_JINJA_PARSER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "core/text/jinja/jinja_ast.h"
#include "core/text/jinja/jinja_lexer.h"

namespace tandem::jinja {

class Parser {
 public:
  // Deeper nesting of expressions or blocks than this is an error (the
  // parser recurses on it).
  static constexpr int kMaxNesting = 100;
  // A deeper syntax tree (chains of operators or elifs count) is an error:
  // the validator and the interpreter recurse on it.
  static constexpr int kMaxTreeDepth = 1000;

  // The template's statements, or InvalidArgumentError naming the line.
  static absl::StatusOr<NodeList> Parse(const std::vector<Token>& tokens);
};

}  // namespace tandem::jinja

#endif  // TANDEM_CORE_TEXT_JINJA_JINJA_PARSER_H_
