#include "core/text/jinja/jinja_parser.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/text/jinja/jinja_builtins.h"

namespace tandem::jinja {
namespace {

using T = TokenType;

class ParserImpl {
 public:
  explicit ParserImpl(const std::vector<Token>& tokens) : tokens_(tokens) {}

  absl::StatusOr<NodeList> ParseProgram() {
    NodeList program;
    while (cur_ < tokens_.size()) RETURN_IF_ERROR(ParseAny(&program));
    return program;
  }

 private:
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
  absl::Status ExpectEndTag(std::string_view name) {
    const std::string tag = absl::StrCat("{% ", std::string(name), " %}");
    RETURN_IF_ERROR(Expect(T::kOpenStatement, tag).status());
    if (!IsIdentifier(name)) return Error(absl::StrCat("expected ", tag));
    ++cur_;
    return Expect(T::kCloseStatement, "%} closing " + tag).status();
  }

  // Parses statements into `body` until one of the block tags `names`.
  absl::Status ParseBodyUntil(std::initializer_list<std::string_view> names, NodeList* body,
                              std::string_view opener, int opener_line) {
    std::vector<std::string> tags;
    for (std::string_view n : names) tags.push_back(absl::StrCat("{% ", std::string(n), " %}"));
    open_blocks_.push_back(absl::StrCat(std::string(opener), " at line ", opener_line, " needs ",
                                        absl::StrJoin(tags, " or ")));
    while (!IsStatement(names)) {
      if (Peek() == nullptr) {
        return Error(absl::StrCat("unexpected end of template: ", open_blocks_.back()));
      }
      RETURN_IF_ERROR(ParseAny(body));
    }
    open_blocks_.pop_back();
    return absl::OkStatus();
  }

  NodePtr MakeNode(NodeKind kind, int line) { return std::make_unique<Node>(kind, line); }

  absl::Status ParseAny(NodeList* out) {
    DepthGuard guard(this);
    RETURN_IF_ERROR(guard.Check());
    const Token* t = Peek();
    if (t == nullptr) return EndError("more template");
    switch (t->type) {
      case T::kComment:
        ++cur_;
        return absl::OkStatus();
      case T::kText: {
        NodePtr n = MakeNode(NodeKind::kText, t->line);
        n->text = t->value;
        ++cur_;
        out->push_back(std::move(n));
        return absl::OkStatus();
      }
      case T::kOpenStatement: {
        ASSIGN_OR_RETURN(NodePtr n, ParseStatement());
        out->push_back(std::move(n));
        return absl::OkStatus();
      }
      case T::kOpenExpression: {
        ++cur_;
        ASSIGN_OR_RETURN(NodePtr n, ParseExpression());
        RETURN_IF_ERROR(Expect(T::kCloseExpression, "}}").status());
        out->push_back(std::move(n));
        return absl::OkStatus();
      }
      default:
        return Error(absl::StrCat("unexpected ", TokenTypeName(t->type), " \"", t->value, "\""));
    }
  }

  absl::StatusOr<NodePtr> ParseStatement() {
    ++cur_;  // {%
    const Token* t = Peek();
    if (t == nullptr) return EndError("a statement after {%");
    if (t->type != T::kIdentifier) {
      return Error(absl::StrCat("expected a statement name after {%, got ", TokenTypeName(t->type)));
    }
    const std::string name = t->value;
    const int line = t->line;
    ++cur_;
    if (name == "set") return ParseSet(line);
    if (name == "if") {
      ASSIGN_OR_RETURN(NodePtr n, ParseIf(line));
      RETURN_IF_ERROR(ExpectEndTag("endif"));
      return n;
    }
    if (name == "for") {
      ASSIGN_OR_RETURN(NodePtr n, ParseFor(line));
      RETURN_IF_ERROR(ExpectEndTag("endfor"));
      return n;
    }
    if (name == "macro") {
      ASSIGN_OR_RETURN(NodePtr n, ParseMacro(line));
      RETURN_IF_ERROR(ExpectEndTag("endmacro"));
      return n;
    }
    if (name == "filter") return ParseFilterBlock(line);
    if (name == "break" || name == "continue") {
      RETURN_IF_ERROR(Expect(T::kCloseStatement, "%}").status());
      return MakeNode(name == "break" ? NodeKind::kBreak : NodeKind::kContinue, line);
    }
    if (name == "call") {
      return ErrorAt(line, "unsupported statement {% call %} (call blocks are not supported)");
    }
    if (name == "elif" || name == "else" || name.rfind("end", 0) == 0) {
      return ErrorAt(line, absl::StrCat("unexpected {% ", name, " %}",
                                        open_blocks_.empty() ? "" : ": ",
                                        open_blocks_.empty() ? "" : open_blocks_.back()));
    }
    return ErrorAt(line, absl::StrCat("unsupported statement {% ", name, " %}"));
  }

  absl::StatusOr<NodePtr> ParseSet(int line) {
    NodePtr n = MakeNode(NodeKind::kSet, line);
    ASSIGN_OR_RETURN(NodePtr target, ParseExpressionSequence(false));
    RETURN_IF_ERROR(CheckSetTarget(*target));
    n->args.push_back(std::move(target));
    if (Is(T::kEquals)) {
      ++cur_;
      ASSIGN_OR_RETURN(NodePtr value, ParseExpressionSequence(false));
      n->args.push_back(std::move(value));
      RETURN_IF_ERROR(Expect(T::kCloseStatement, "%} closing {% set %}").status());
      return n;
    }
    n->args.push_back(nullptr);
    RETURN_IF_ERROR(Expect(T::kCloseStatement, "= or %} in {% set %}").status());
    RETURN_IF_ERROR(ParseBodyUntil({"endset"}, &n->body, "{% set %}", line));
    RETURN_IF_ERROR(ExpectEndTag("endset"));
    return n;
  }

  absl::Status CheckSetTarget(const Node& target) {
    switch (target.kind) {
      case NodeKind::kIdentifier:
        return absl::OkStatus();
      case NodeKind::kTuple:
        for (const NodePtr& item : target.args) {
          if (item->kind != NodeKind::kIdentifier) {
            return ErrorAt(target.line, "{% set a, b = ... %} can only unpack into names");
          }
        }
        return absl::OkStatus();
      case NodeKind::kMember:
        if (target.flag || target.arg(1)->kind != NodeKind::kIdentifier) {
          return ErrorAt(target.line,
                         "{% set x[...] = ... %} is not supported: only {% set ns.name = ... %}");
        }
        return absl::OkStatus();
      default:
        return ErrorAt(target.line, "{% set %} needs a name, names or ns.attribute to assign");
    }
  }

  absl::StatusOr<NodePtr> ParseIf(int line) {
    NodePtr n = MakeNode(NodeKind::kIf, line);
    ASSIGN_OR_RETURN(NodePtr test, ParseExpression());
    n->args.push_back(std::move(test));
    RETURN_IF_ERROR(Expect(T::kCloseStatement, "%} closing {% if %}").status());
    RETURN_IF_ERROR(ParseBodyUntil({"elif", "else", "endif"}, &n->body, "{% if %}", line));
    if (IsStatement({"elif"})) {
      const int elif_line = Peek(1)->line;
      cur_ += 2;
      ASSIGN_OR_RETURN(NodePtr nested, ParseIf(elif_line));
      n->alternate.push_back(std::move(nested));
    } else if (IsStatement({"else"})) {
      cur_ += 2;
      RETURN_IF_ERROR(Expect(T::kCloseStatement, "%} closing {% else %}").status());
      RETURN_IF_ERROR(ParseBodyUntil({"endif"}, &n->alternate, "{% if %}", line));
    }
    return n;
  }

  absl::StatusOr<NodePtr> ParseMacro(int line) {
    NodePtr n = MakeNode(NodeKind::kMacro, line);
    ASSIGN_OR_RETURN(NodePtr name, ParsePrimary());
    if (name->kind != NodeKind::kIdentifier) {
      return ErrorAt(line, "expected a name after {% macro");
    }
    n->text = name->text;
    RETURN_IF_ERROR(ParseArgs(/*parameters=*/true, &n->args));
    RETURN_IF_ERROR(Expect(T::kCloseStatement, "%} closing {% macro %}").status());
    RETURN_IF_ERROR(ParseBodyUntil({"endmacro"}, &n->body, "{% macro %}", line));
    return n;
  }

  absl::StatusOr<NodePtr> ParseFor(int line) {
    NodePtr n = MakeNode(NodeKind::kFor, line);
    ASSIGN_OR_RETURN(NodePtr loopvar, ParseExpressionSequence(true));
    if (loopvar->kind == NodeKind::kTuple) {
      for (const NodePtr& item : loopvar->args) {
        if (item->kind != NodeKind::kIdentifier) {
          return ErrorAt(line, "{% for a, b in ... %} can only unpack into names");
        }
      }
    } else if (loopvar->kind != NodeKind::kIdentifier) {
      return ErrorAt(line, "expected a name or names after {% for");
    }
    if (!IsIdentifier("in")) return Error("expected `in` after the {% for %} loop variable");
    ++cur_;
    ASSIGN_OR_RETURN(NodePtr iterable, ParseExpression());
    NodePtr test;
    if (iterable->kind == NodeKind::kSelect) {  // for x in xs if cond
      test = std::move(iterable->args[1]);
      iterable = std::move(iterable->args[0]);
    }
    n->args.push_back(std::move(loopvar));
    n->args.push_back(std::move(iterable));
    n->args.push_back(std::move(test));
    RETURN_IF_ERROR(Expect(T::kCloseStatement, "%} closing {% for %}").status());
    RETURN_IF_ERROR(ParseBodyUntil({"endfor", "else"}, &n->body, "{% for %}", line));
    if (IsStatement({"else"})) {
      cur_ += 2;
      RETURN_IF_ERROR(Expect(T::kCloseStatement, "%} closing {% else %}").status());
      RETURN_IF_ERROR(ParseBodyUntil({"endfor"}, &n->alternate, "{% for %}", line));
    }
    return n;
  }

  absl::StatusOr<NodePtr> ParseFilterBlock(int line) {
    NodePtr n = MakeNode(NodeKind::kFilterBlock, line);
    ASSIGN_OR_RETURN(NodePtr name, ParsePrimary());
    if (name->kind != NodeKind::kIdentifier) {
      return ErrorAt(line, "expected a filter name after {% filter");
    }
    NodePtr filter = MakeNode(NodeKind::kFilter, line);
    filter->text = name->text;
    filter->args.push_back(nullptr);  // the operand: the block's text
    if (Is(T::kOpenParen)) {
      filter->flag = true;
      RETURN_IF_ERROR(ParseArgs(/*parameters=*/false, &filter->args));
    }
    n->args.push_back(std::move(filter));
    RETURN_IF_ERROR(Expect(T::kCloseStatement, "%} closing {% filter %}").status());
    RETURN_IF_ERROR(ParseBodyUntil({"endfilter"}, &n->body, "{% filter %}", line));
    RETURN_IF_ERROR(ExpectEndTag("endfilter"));
    return n;
  }

  absl::StatusOr<NodePtr> ParseExpressionSequence(bool primary) {
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

  absl::StatusOr<NodePtr> ParseExpression() {
    DepthGuard guard(this);
    RETURN_IF_ERROR(guard.Check());
    return ParseIfExpression();
  }

  absl::StatusOr<NodePtr> ParseIfExpression() {
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

  NodePtr Binary(std::string op, int line, NodePtr left, NodePtr right) {
    NodePtr n = MakeNode(NodeKind::kBinary, line);
    n->text = std::move(op);
    n->args.push_back(std::move(left));
    n->args.push_back(std::move(right));
    return n;
  }

  absl::StatusOr<NodePtr> ParseLogicalOr() {
    ASSIGN_OR_RETURN(NodePtr left, ParseLogicalAnd());
    while (IsIdentifier("or")) {
      const int line = Line();
      ++cur_;
      ASSIGN_OR_RETURN(NodePtr right, ParseLogicalAnd());
      left = Binary("or", line, std::move(left), std::move(right));
    }
    return left;
  }

  absl::StatusOr<NodePtr> ParseLogicalAnd() {
    ASSIGN_OR_RETURN(NodePtr left, ParseLogicalNegation());
    while (IsIdentifier("and")) {
      const int line = Line();
      ++cur_;
      ASSIGN_OR_RETURN(NodePtr right, ParseLogicalNegation());
      left = Binary("and", line, std::move(left), std::move(right));
    }
    return left;
  }

  absl::StatusOr<NodePtr> ParseLogicalNegation() {
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

  absl::StatusOr<NodePtr> ParseComparison() {
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

  absl::StatusOr<NodePtr> ParseAdditive() {
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

  absl::StatusOr<NodePtr> ParseMultiplicative() {
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

  absl::StatusOr<NodePtr> ParsePower() {
    ASSIGN_OR_RETURN(NodePtr left, ParseTest());
    while (Is(T::kExponentiationBinaryOperator)) {
      const int line = Line();
      ++cur_;
      ASSIGN_OR_RETURN(NodePtr right, ParseTest());
      left = Binary("**", line, std::move(left), std::move(right));
    }
    return left;
  }

  absl::StatusOr<NodePtr> ParseTest() {
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

  absl::StatusOr<NodePtr> ParseFilter() {
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

  absl::StatusOr<NodePtr> ParseUnarySign() {
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

  absl::StatusOr<NodePtr> ParseCallMember() {
    ASSIGN_OR_RETURN(NodePtr primary, ParsePrimary());
    ASSIGN_OR_RETURN(NodePtr member, ParseMember(std::move(primary)));
    if (Is(T::kOpenParen)) return ParseCall(std::move(member));
    return member;
  }

  absl::StatusOr<NodePtr> ParseCall(NodePtr callee) {
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
  absl::Status ParseArgs(bool parameters, NodeList* out) {
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
  absl::StatusOr<NodePtr> ParseMemberArguments() {
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

  absl::StatusOr<NodePtr> ParseMember(NodePtr object) {
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

  absl::StatusOr<NodePtr> ParsePrimary() {
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

  const std::vector<Token>& tokens_;
  size_t cur_ = 0;
  int depth_ = 0;
  std::vector<std::string> open_blocks_;  // "{% if %} at line 3 needs {% endif %}"
};

// The checks that need the whole tree: what is called, and macros.
class Validator {
 public:
  absl::Status Run(const NodeList& program) {
    for (const NodePtr& n : program) CollectNames(n.get());
    for (const NodePtr& n : program) RETURN_IF_ERROR(Check(n.get(), nullptr));
    return absl::OkStatus();
  }

 private:
  void Declare(const Node* target) {
    if (target == nullptr) return;
    if (target->kind == NodeKind::kIdentifier) assigned_.insert(target->text);
    if (target->kind == NodeKind::kTuple) {
      for (const NodePtr& item : target->args) Declare(item.get());
    }
  }

  void CollectNames(const Node* n) {
    if (n == nullptr) return;
    switch (n->kind) {
      case NodeKind::kSet: Declare(n->arg(0)); break;
      case NodeKind::kFor: Declare(n->arg(0)); break;
      case NodeKind::kMacro:
        assigned_.insert(n->text);
        for (const NodePtr& p : n->args) {
          assigned_.insert(p->text);
        }
        break;
      default: break;
    }
    for (const NodePtr& c : n->args) CollectNames(c.get());
    for (const NodePtr& c : n->body) CollectNames(c.get());
    for (const NodePtr& c : n->alternate) CollectNames(c.get());
  }

  static absl::Status ErrorAt(int line, std::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", std::string(message)));
  }

  absl::Status Check(const Node* n, const Node* macro) {
    if (n == nullptr) return absl::OkStatus();
    switch (n->kind) {
      case NodeKind::kMacro:
        macro = n;
        break;
      case NodeKind::kIdentifier:
        if (macro != nullptr && (n->text == "varargs" || n->text == "kwargs")) {
          bool declared = false;
          for (const NodePtr& p : macro->args) declared |= p->text == n->text;
          if (!declared) {
            return ErrorAt(n->line, absl::StrCat("macro ", macro->text, " reads `", n->text,
                                                 "`: varargs and kwargs are not supported"));
          }
        }
        break;
      case NodeKind::kCall: {
        const Node* callee = n->arg(0);
        if (callee->kind == NodeKind::kIdentifier && !IsGlobalFunction(callee->text) &&
            !assigned_.contains(callee->text)) {
          return ErrorAt(n->line, absl::StrCat("unknown function `", callee->text, "()`"));
        }
        if (callee->kind == NodeKind::kMember && !callee->flag &&
            callee->arg(1)->kind == NodeKind::kIdentifier &&
            !IsKnownMethod(callee->arg(1)->text)) {
          return ErrorAt(n->line, absl::StrCat("unsupported method `.", callee->arg(1)->text,
                                               "()`"));
        }
        break;
      }
      default:
        break;
    }
    for (const NodePtr& c : n->args) RETURN_IF_ERROR(Check(c.get(), macro));
    for (const NodePtr& c : n->body) RETURN_IF_ERROR(Check(c.get(), macro));
    for (const NodePtr& c : n->alternate) RETURN_IF_ERROR(Check(c.get(), macro));
    return absl::OkStatus();
  }

  absl::flat_hash_set<std::string> assigned_;
};

}  // namespace

absl::StatusOr<NodeList> Parser::Parse(const std::vector<Token>& tokens) {
  ASSIGN_OR_RETURN(NodeList program, ParserImpl(tokens).ParseProgram());
  RETURN_IF_ERROR(Validator().Run(program));
  return program;
}

}  // namespace tandem::jinja
