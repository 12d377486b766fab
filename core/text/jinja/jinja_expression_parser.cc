// ParserImpl's expression parsing, with @huggingface/jinja's operator
// precedence: if-expressions, or, and, not, comparisons (in, not in, ==,
// ...), + -, * / // %, **, tests (is), filters (|), unary signs, calls and
// their arguments, member access and slices, and the primaries (literals,
// names, parenthesized expressions and tuples, arrays, objects).
#include <cstdlib>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/text/jinja/jinja_builtins.h"
#include "core/text/jinja/jinja_parser_impl.h"

namespace tandem::jinja {
namespace parser_internal {

absl::StatusOr<NodePtr> ParserImpl::ParseExpressionSequence(bool primary) {
  const int line = Line();
  ASSIGN_OR_RETURN(NodePtr first, primary ? ParsePrimary() : ParseExpression());
  if (!Is(T::kComma)) return first;
  NodePtr tuple = MakeNode(NodeKind::kTuple, line);
  tuple->args.push_back(std::move(first));
  while (true) {
    ++cur_;  // ,
    ASSIGN_OR_RETURN(NodePtr next, primary ? ParsePrimary() : ParseExpression());
    tuple->args.push_back(std::move(next));
    if (!Is(T::kComma)) break;
  }
  return tuple;
}

absl::StatusOr<NodePtr> ParserImpl::ParseExpression() { return ParseIfExpression(); }

absl::StatusOr<NodePtr> ParserImpl::ParseIfExpression() {
  // Every expression comes here, and `else` recurses: a if b else c if d else ...
  DepthGuard guard(this);
  RETURN_IF_ERROR(guard.Check());
  ASSIGN_OR_RETURN(NodePtr a, ParseLogicalOr());
  if (!IsIdentifier("if")) return a;
  const int line = Line();
  ++cur_;
  ASSIGN_OR_RETURN(NodePtr test, ParseLogicalOr());
  if (IsIdentifier("else")) {
    ++cur_;
    ASSIGN_OR_RETURN(NodePtr otherwise, ParseIfExpression());
    NodePtr n = MakeNode(NodeKind::kTernary, line);
    n->args.push_back(std::move(test));
    n->args.push_back(std::move(a));
    n->args.push_back(std::move(otherwise));
    return n;
  }
  NodePtr n = MakeNode(NodeKind::kSelect, line);
  n->args.push_back(std::move(a));
  n->args.push_back(std::move(test));
  return n;
}

NodePtr ParserImpl::Binary(std::string op, int line, NodePtr left, NodePtr right) {
  NodePtr n = MakeNode(NodeKind::kBinary, line);
  n->text = std::move(op);
  n->args.push_back(std::move(left));
  n->args.push_back(std::move(right));
  return n;
}

absl::StatusOr<NodePtr> ParserImpl::ParseLogicalOr() {
  ASSIGN_OR_RETURN(NodePtr left, ParseLogicalAnd());
  while (IsIdentifier("or")) {
    const int line = Line();
    ++cur_;
    ASSIGN_OR_RETURN(NodePtr right, ParseLogicalAnd());
    left = Binary("or", line, std::move(left), std::move(right));
  }
  return left;
}

absl::StatusOr<NodePtr> ParserImpl::ParseLogicalAnd() {
  ASSIGN_OR_RETURN(NodePtr left, ParseLogicalNegation());
  while (IsIdentifier("and")) {
    const int line = Line();
    ++cur_;
    ASSIGN_OR_RETURN(NodePtr right, ParseLogicalNegation());
    left = Binary("and", line, std::move(left), std::move(right));
  }
  return left;
}

absl::StatusOr<NodePtr> ParserImpl::ParseLogicalNegation() {
  DepthGuard guard(this);
  RETURN_IF_ERROR(guard.Check());
  NodePtr right;
  while (IsIdentifier("not")) {
    const int line = Line();
    ++cur_;
    ASSIGN_OR_RETURN(NodePtr arg, ParseLogicalNegation());
    right = MakeNode(NodeKind::kUnary, line);
    right->text = "not";
    right->args.push_back(std::move(arg));
  }
  if (right) return right;
  return ParseComparison();
}

absl::StatusOr<NodePtr> ParserImpl::ParseComparison() {
  ASSIGN_OR_RETURN(NodePtr left, ParseAdditive());
  while (true) {
    const int line = Line();
    std::string op;
    if (IsIdentifier("not") && IsIdentifier("in", 1)) {
      op = "not in";
      cur_ += 2;
    } else if (IsIdentifier("in")) {
      op = "in";
      ++cur_;
    } else if (Is(T::kComparisonBinaryOperator)) {
      op = Peek()->value;
      ++cur_;
    } else {
      break;
    }
    ASSIGN_OR_RETURN(NodePtr right, ParseAdditive());
    left = Binary(std::move(op), line, std::move(left), std::move(right));
  }
  return left;
}

absl::StatusOr<NodePtr> ParserImpl::ParseAdditive() {
  ASSIGN_OR_RETURN(NodePtr left, ParseMultiplicative());
  while (Is(T::kAdditiveBinaryOperator)) {
    const int line = Line();
    std::string op = Peek()->value;
    ++cur_;
    ASSIGN_OR_RETURN(NodePtr right, ParseMultiplicative());
    left = Binary(std::move(op), line, std::move(left), std::move(right));
  }
  return left;
}

absl::StatusOr<NodePtr> ParserImpl::ParseMultiplicative() {
  ASSIGN_OR_RETURN(NodePtr left, ParsePower());
  while (Is(T::kMultiplicativeBinaryOperator)) {
    const int line = Line();
    std::string op = Peek()->value;
    ++cur_;
    ASSIGN_OR_RETURN(NodePtr right, ParsePower());
    left = Binary(std::move(op), line, std::move(left), std::move(right));
  }
  return left;
}

absl::StatusOr<NodePtr> ParserImpl::ParsePower() {
  ASSIGN_OR_RETURN(NodePtr left, ParseTest());
  while (Is(T::kExponentiationBinaryOperator)) {
    const int line = Line();
    ++cur_;
    ASSIGN_OR_RETURN(NodePtr right, ParseTest());
    left = Binary("**", line, std::move(left), std::move(right));
  }
  return left;
}

absl::StatusOr<NodePtr> ParserImpl::ParseTest() {
  ASSIGN_OR_RETURN(NodePtr operand, ParseFilter());
  while (IsIdentifier("is")) {
    const int line = Line();
    ++cur_;
    const bool negate = IsIdentifier("not");
    if (negate) ++cur_;
    ASSIGN_OR_RETURN(NodePtr test, ParsePrimary());
    if (test->kind != NodeKind::kIdentifier) {
      return ErrorAt(line, "expected a test name after `is`");
    }
    if (!IsKnownTest(test->text)) {
      return ErrorAt(line, absl::StrCat("unknown test `is ", test->text, "`"));
    }
    if (Is(T::kOpenParen)) {
      return ErrorAt(line, absl::StrCat("tests with arguments (`is ", test->text,
                                        "(...)`) are not supported"));
    }
    NodePtr n = MakeNode(NodeKind::kTest, line);
    n->text = test->text;
    n->flag = negate;
    n->args.push_back(std::move(operand));
    operand = std::move(n);
  }
  return operand;
}

absl::StatusOr<NodePtr> ParserImpl::ParseFilter() {
  ASSIGN_OR_RETURN(NodePtr operand, ParseUnarySign());
  while (Is(T::kPipe)) {
    const int line = Line();
    ++cur_;
    ASSIGN_OR_RETURN(NodePtr name, ParsePrimary());
    if (name->kind != NodeKind::kIdentifier) {
      return ErrorAt(line, "expected a filter name after |");
    }
    NodePtr n = MakeNode(NodeKind::kFilter, line);
    n->text = name->text;
    n->args.push_back(std::move(operand));
    if (Is(T::kOpenParen)) {
      n->flag = true;
      RETURN_IF_ERROR(ParseArgs(/*parameters=*/false, &n->args));
      if (Is(T::kDot) || Is(T::kOpenSquareBracket) || Is(T::kOpenParen)) {
        return ErrorAt(line, absl::StrCat("`|", n->text,
                                          "(...)` followed by . [ or ( is not supported "
                                          "(wrap the filter in parentheses)"));
      }
    }
    if (!IsKnownFilter(n->text, n->flag)) {
      return ErrorAt(line, absl::StrCat("unknown filter `|", n->text, n->flag ? "(...)" : "",
                                        "`"));
    }
    operand = std::move(n);
  }
  return operand;
}

absl::StatusOr<NodePtr> ParserImpl::ParseUnarySign() {
  DepthGuard guard(this);
  RETURN_IF_ERROR(guard.Check());
  const Token* t = Peek();
  if (t != nullptr &&
      (t->type == T::kUnaryOperator || t->type == T::kAdditiveBinaryOperator) &&
      (t->value == "-" || t->value == "+")) {
    NodePtr n = MakeNode(NodeKind::kUnary, t->line);
    n->text = t->value;
    ++cur_;
    ASSIGN_OR_RETURN(NodePtr arg, ParseUnarySign());
    n->args.push_back(std::move(arg));
    return n;
  }
  return ParseCallMember();
}

absl::StatusOr<NodePtr> ParserImpl::ParseCallMember() {
  ASSIGN_OR_RETURN(NodePtr primary, ParsePrimary());
  ASSIGN_OR_RETURN(NodePtr member, ParseMember(std::move(primary)));
  if (Is(T::kOpenParen)) return ParseCall(std::move(member));
  return member;
}

absl::StatusOr<NodePtr> ParserImpl::ParseCall(NodePtr callee) {
  DepthGuard guard(this);
  RETURN_IF_ERROR(guard.Check());
  NodePtr n = MakeNode(NodeKind::kCall, Line());
  n->args.push_back(std::move(callee));
  RETURN_IF_ERROR(ParseArgs(/*parameters=*/false, &n->args));
  ASSIGN_OR_RETURN(n, ParseMember(std::move(n)));
  if (Is(T::kOpenParen)) return ParseCall(std::move(n));
  return n;
}

// (a, b=1, *c, **d): appended to `out`.
absl::Status ParserImpl::ParseArgs(bool parameters, NodeList* out) {
  RETURN_IF_ERROR(Expect(T::kOpenParen, "(").status());
  absl::flat_hash_set<std::string> names;
  bool saw_keyword = false;
  bool saw_spread = false;
  while (!Is(T::kCloseParen)) {
    if (Peek() == nullptr) return EndError(")");
    const int line = Line();
    const bool keyword_spread = Is(T::kExponentiationBinaryOperator);
    const bool positional_spread =
        Is(T::kMultiplicativeBinaryOperator) && Peek()->value == "*";
    if (parameters && (keyword_spread || positional_spread)) {
      return Error("argument unpacking is not allowed in parameter declarations");
    }
    if (keyword_spread) {
      ++cur_;
      NodePtr n = MakeNode(NodeKind::kKwSpread, line);
      ASSIGN_OR_RETURN(NodePtr value, ParseExpression());
      n->args.push_back(std::move(value));
      out->push_back(std::move(n));
      if (Is(T::kComma)) ++cur_;
      if (!Is(T::kCloseParen)) {
        return Error("expected ): `**` must be applied to the final argument");
      }
      break;
    }
    NodePtr argument;
    if (positional_spread) {
      if (saw_spread) return Error("only one `*` argument unpacking is allowed");
      saw_spread = true;
      ++cur_;
      argument = MakeNode(NodeKind::kSpread, line);
      ASSIGN_OR_RETURN(NodePtr value, ParseExpression());
      argument->args.push_back(std::move(value));
    } else {
      ASSIGN_OR_RETURN(argument, ParseExpression());
      if (Is(T::kEquals)) {
        ++cur_;
        if (argument->kind != NodeKind::kIdentifier) {
          return ErrorAt(line, parameters ? "expected a name for a parameter"
                                          : "expected a name for a keyword argument");
        }
        NodePtr kw = MakeNode(NodeKind::kKeywordArg, line);
        kw->text = argument->text;
        ASSIGN_OR_RETURN(NodePtr value, ParseExpression());
        kw->args.push_back(std::move(value));
        argument = std::move(kw);
      }
      if (parameters) {
        if (argument->kind != NodeKind::kIdentifier &&
            argument->kind != NodeKind::kKeywordArg) {
          return ErrorAt(line, "expected a name for a parameter");
        }
        if (!names.insert(argument->text).second) {
          return ErrorAt(line, absl::StrCat("duplicate parameter name: ", argument->text));
        }
      }
      if (argument->kind == NodeKind::kKeywordArg) {
        saw_keyword = true;
      } else if (saw_keyword) {
        return ErrorAt(line, parameters ? "non-default argument follows default argument"
                                        : "positional arguments must come before keyword "
                                          "arguments");
      } else if (saw_spread) {
        return ErrorAt(line, "positional arguments must not follow `*` argument unpacking");
      }
    }
    out->push_back(std::move(argument));
    if (Is(T::kComma)) ++cur_;
  }
  ++cur_;  // )
  return absl::OkStatus();
}

// [x], [a:b], [a:b:c], [::-1]: an expression, or a kSlice.
absl::StatusOr<NodePtr> ParserImpl::ParseMemberArguments() {
  const int line = Line();
  NodeList slices;
  bool is_slice = false;
  while (!Is(T::kCloseSquareBracket)) {
    if (Peek() == nullptr) return EndError("]");
    if (Is(T::kColon)) {
      slices.push_back(nullptr);
      ++cur_;
      is_slice = true;
    } else {
      ASSIGN_OR_RETURN(NodePtr e, ParseExpression());
      slices.push_back(std::move(e));
      if (Is(T::kColon)) {
        ++cur_;
        is_slice = true;
      }
    }
  }
  if (slices.empty()) return ErrorAt(line, "expected an index or slice inside [ ]");
  if (!is_slice) return std::move(slices[0]);
  if (slices.size() > 3) return ErrorAt(line, "a slice has at most 3 parts");
  NodePtr n = MakeNode(NodeKind::kSlice, line);
  slices.resize(3);
  n->args = std::move(slices);
  return n;
}

absl::StatusOr<NodePtr> ParserImpl::ParseMember(NodePtr object) {
  while (Is(T::kDot) || Is(T::kOpenSquareBracket)) {
    const bool computed = Is(T::kOpenSquareBracket);
    const int line = Line();
    ++cur_;
    NodePtr property;
    if (computed) {
      ASSIGN_OR_RETURN(property, ParseMemberArguments());
      RETURN_IF_ERROR(Expect(T::kCloseSquareBracket, "]").status());
    } else {
      ASSIGN_OR_RETURN(property, ParsePrimary());
      if (property->kind != NodeKind::kIdentifier && property->kind != NodeKind::kInteger) {
        return ErrorAt(line, "expected a name or an integer after .");
      }
    }
    NodePtr n = MakeNode(NodeKind::kMember, line);
    n->flag = computed;
    n->args.push_back(std::move(object));
    n->args.push_back(std::move(property));
    object = std::move(n);
  }
  return object;
}

absl::StatusOr<NodePtr> ParserImpl::ParsePrimary() {
  const Token* t = Peek();
  if (t == nullptr) return EndError("an expression");
  ++cur_;
  switch (t->type) {
    case T::kNumericLiteral: {
      const bool is_float = t->value.find('.') != std::string::npos;
      NodePtr n = MakeNode(is_float ? NodeKind::kFloat : NodeKind::kInteger, t->line);
      n->number = std::strtod(t->value.c_str(), nullptr);
      return n;
    }
    case T::kStringLiteral: {
      NodePtr n = MakeNode(NodeKind::kString, t->line);
      n->text = t->value;
      while (Is(T::kStringLiteral)) n->text += tokens_[cur_++].value;
      return n;
    }
    case T::kIdentifier: {
      NodePtr n = MakeNode(NodeKind::kIdentifier, t->line);
      n->text = t->value;
      return n;
    }
    case T::kOpenParen: {
      DepthGuard guard(this);
      RETURN_IF_ERROR(guard.Check());
      ASSIGN_OR_RETURN(NodePtr e, ParseExpressionSequence(false));
      RETURN_IF_ERROR(Expect(T::kCloseParen, ")").status());
      return e;
    }
    case T::kOpenSquareBracket: {
      DepthGuard guard(this);
      RETURN_IF_ERROR(guard.Check());
      NodePtr n = MakeNode(NodeKind::kArray, t->line);
      while (!Is(T::kCloseSquareBracket)) {
        if (Peek() == nullptr) return EndError("]");
        ASSIGN_OR_RETURN(NodePtr e, ParseExpression());
        n->args.push_back(std::move(e));
        if (Is(T::kComma)) ++cur_;
      }
      ++cur_;
      return n;
    }
    case T::kOpenCurlyBracket: {
      DepthGuard guard(this);
      RETURN_IF_ERROR(guard.Check());
      NodePtr n = MakeNode(NodeKind::kObject, t->line);
      while (!Is(T::kCloseCurlyBracket)) {
        if (Peek() == nullptr) return EndError("}");
        ASSIGN_OR_RETURN(NodePtr key, ParseExpression());
        RETURN_IF_ERROR(Expect(T::kColon, ": between a key and its value").status());
        ASSIGN_OR_RETURN(NodePtr value, ParseExpression());
        n->args.push_back(std::move(key));
        n->args.push_back(std::move(value));
        if (Is(T::kComma)) ++cur_;
      }
      ++cur_;
      return n;
    }
    default:
      return ErrorAt(t->line, absl::StrCat("unexpected ", TokenTypeName(t->type), " \"",
                                           t->value, "\" in an expression"));
  }
}

}  // namespace parser_internal
}  // namespace tandem::jinja
