// Internal to the parser (not a public header): ParserImpl, the recursive
// descent parser behind Parser::Parse, which holds the position in the
// tokens. Its members are defined by job in two files:
//   jinja_parser.cc             the template, statements and their bodies
//   jinja_expression_parser.cc  expressions, by operator precedence
// The token helpers, used by both, are defined here.
#ifndef TANDEM_CORE_TEXT_JINJA_JINJA_PARSER_IMPL_H_
#define TANDEM_CORE_TEXT_JINJA_JINJA_PARSER_IMPL_H_

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/text/jinja/jinja_ast.h"
#include "core/text/jinja/jinja_lexer.h"
#include "core/text/jinja/jinja_parser.h"

namespace tandem::jinja {
namespace parser_internal {

class ParserImpl {
 public:
  explicit ParserImpl(const std::vector<Token>& tokens) : tokens_(tokens) {}

  absl::StatusOr<NodeList> ParseProgram();

 private:
  using T = TokenType;

  // Counts nesting; parsing fails past Parser::kMaxNesting.
  class DepthGuard {
   public:
    explicit DepthGuard(ParserImpl* p) : p_(p) { ++p_->depth_; }
    ~DepthGuard() { --p_->depth_; }
    absl::Status Check() const {
      if (p_->depth_ > Parser::kMaxNesting) {
        return p_->Error(absl::StrCat("nesting deeper than ", Parser::kMaxNesting, " levels"));
      }
      return absl::OkStatus();
    }

   private:
    ParserImpl* p_;
  };

  const Token* Peek(size_t offset = 0) const {
    return cur_ + offset < tokens_.size() ? &tokens_[cur_ + offset] : nullptr;
  }
  int Line() const {
    if (const Token* t = Peek()) return t->line;
    return tokens_.empty() ? 1 : tokens_.back().line;
  }
  absl::Status Error(std::string_view message) const { return ErrorAt(Line(), message); }
  static absl::Status ErrorAt(int line, std::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", std::string(message)));
  }
  absl::Status EndError(std::string_view expected) const {
    return Error(absl::StrCat("unexpected end of template, expected ", std::string(expected)));
  }

  bool Is(T type, size_t offset = 0) const {
    const Token* t = Peek(offset);
    return t != nullptr && t->type == type;
  }
  bool IsIdentifier(std::string_view name, size_t offset = 0) const {
    const Token* t = Peek(offset);
    return t != nullptr && t->type == T::kIdentifier && t->value == name;
  }
  bool IsStatement(std::initializer_list<std::string_view> names) const {
    if (!Is(T::kOpenStatement) || !Is(T::kIdentifier, 1)) return false;
    return std::find(names.begin(), names.end(), Peek(1)->value) != names.end();
  }
  absl::StatusOr<const Token*> Expect(T type, std::string_view what) {
    const Token* t = Peek();
    if (t == nullptr) return EndError(what);
    if (t->type != type) {
      return Error(absl::StrCat("expected ", std::string(what), ", got ", TokenTypeName(t->type), " \"",
                                t->value, "\""));
    }
    ++cur_;
    return t;
  }
  absl::Status ExpectEndTag(std::string_view name);

  NodePtr MakeNode(NodeKind kind, int line) { return std::make_unique<Node>(kind, line); }

  // Statements (jinja_parser.cc).
  // Parses statements into `body` until one of the block tags `names`.
  absl::Status ParseBodyUntil(std::initializer_list<std::string_view> names, NodeList* body,
                              std::string_view opener, int opener_line);
  absl::Status ParseAny(NodeList* out);
  absl::StatusOr<NodePtr> ParseStatement();
  absl::StatusOr<NodePtr> ParseSet(int line);
  absl::Status CheckSetTarget(const Node& target);
  absl::StatusOr<NodePtr> ParseIf(int line);
  absl::StatusOr<NodePtr> ParseMacro(int line);
  absl::StatusOr<NodePtr> ParseFor(int line);
  absl::StatusOr<NodePtr> ParseFilterBlock(int line);

  // Expressions (jinja_expression_parser.cc), from the lowest precedence.
  // An expression (primary = false) or a primary, or a tuple of them.
  absl::StatusOr<NodePtr> ParseExpressionSequence(bool primary);
  absl::StatusOr<NodePtr> ParseExpression();
  absl::StatusOr<NodePtr> ParseIfExpression();
  NodePtr Binary(std::string op, int line, NodePtr left, NodePtr right);
  absl::StatusOr<NodePtr> ParseLogicalOr();
  absl::StatusOr<NodePtr> ParseLogicalAnd();
  absl::StatusOr<NodePtr> ParseLogicalNegation();
  absl::StatusOr<NodePtr> ParseComparison();
  absl::StatusOr<NodePtr> ParseAdditive();
  absl::StatusOr<NodePtr> ParseMultiplicative();
  absl::StatusOr<NodePtr> ParsePower();
  absl::StatusOr<NodePtr> ParseTest();
  absl::StatusOr<NodePtr> ParseFilter();
  absl::StatusOr<NodePtr> ParseUnarySign();
  absl::StatusOr<NodePtr> ParseCallMember();
  absl::StatusOr<NodePtr> ParseCall(NodePtr callee);
  // (a, b=1, *c, **d): appended to `out`.
  absl::Status ParseArgs(bool parameters, NodeList* out);
  // [x], [a:b], [a:b:c], [::-1]: an expression, or a kSlice.
  absl::StatusOr<NodePtr> ParseMemberArguments();
  absl::StatusOr<NodePtr> ParseMember(NodePtr object);
  absl::StatusOr<NodePtr> ParsePrimary();

  const std::vector<Token>& tokens_;
  size_t cur_ = 0;
  int depth_ = 0;
  std::vector<std::string> open_blocks_;  // "{% if %} at line 3 needs {% endif %}"
};

}  // namespace parser_internal
}  // namespace tandem::jinja

#endif  // TANDEM_CORE_TEXT_JINJA_JINJA_PARSER_IMPL_H_
