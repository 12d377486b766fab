// Parser::Parse, and ParserImpl's template and statement parsing: text,
// {{ expressions }}, comments and the {% ... %} statements (set, if, for,
// macro, filter, break, continue) with their bodies. The expressions are
// parsed in jinja_expression_parser.cc; the whole-tree checks are in
// jinja_validator.cc.
#include "core/text/jinja/jinja_parser.h"

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/text/jinja/jinja_parser_impl.h"
#include "core/text/jinja/jinja_validator.h"

namespace tandem::jinja {
namespace parser_internal {

absl::StatusOr<NodeList> ParserImpl::ParseProgram() {
  NodeList program;
  while (cur_ < tokens_.size()) RETURN_IF_ERROR(ParseAny(&program));
  return program;
}

absl::Status ParserImpl::ExpectEndTag(std::string_view name) {
  const std::string tag = absl::StrCat("{% ", std::string(name), " %}");
  RETURN_IF_ERROR(Expect(T::kOpenStatement, tag).status());
  if (!IsIdentifier(name)) return Error(absl::StrCat("expected ", tag));
  ++cur_;
  return Expect(T::kCloseStatement, "%} closing " + tag).status();
}

// Parses statements into `body` until one of the block tags `names`.
absl::Status ParserImpl::ParseBodyUntil(std::initializer_list<std::string_view> names,
                                        NodeList* body, std::string_view opener,
                                        int opener_line) {
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

absl::Status ParserImpl::ParseAny(NodeList* out) {
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

absl::StatusOr<NodePtr> ParserImpl::ParseStatement() {
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

absl::StatusOr<NodePtr> ParserImpl::ParseSet(int line) {
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

absl::Status ParserImpl::CheckSetTarget(const Node& target) {
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

// Each {% elif %} is a kIf alone in the previous one's alternate, parsed in
// this loop (not by recursion: a long chain is not nesting).
absl::StatusOr<NodePtr> ParserImpl::ParseIf(int line) {
  NodePtr head;
  Node* last = nullptr;
  for (int branch_line = line;;) {
    NodePtr n = MakeNode(NodeKind::kIf, branch_line);
    ASSIGN_OR_RETURN(NodePtr test, ParseExpression());
    n->args.push_back(std::move(test));
    RETURN_IF_ERROR(Expect(T::kCloseStatement, "%} closing {% if %}").status());
    RETURN_IF_ERROR(ParseBodyUntil({"elif", "else", "endif"}, &n->body, "{% if %}", line));
    Node* added = n.get();
    if (last == nullptr) {
      head = std::move(n);
    } else {
      last->alternate.push_back(std::move(n));
    }
    last = added;
    if (!IsStatement({"elif"})) break;
    branch_line = Peek(1)->line;
    cur_ += 2;
  }
  if (IsStatement({"else"})) {
    cur_ += 2;
    RETURN_IF_ERROR(Expect(T::kCloseStatement, "%} closing {% else %}").status());
    RETURN_IF_ERROR(ParseBodyUntil({"endif"}, &last->alternate, "{% if %}", line));
  }
  return head;
}

absl::StatusOr<NodePtr> ParserImpl::ParseMacro(int line) {
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

absl::StatusOr<NodePtr> ParserImpl::ParseFor(int line) {
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

absl::StatusOr<NodePtr> ParserImpl::ParseFilterBlock(int line) {
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

}  // namespace parser_internal

namespace {

// The tree's depth, walked without recursion: a chain of operators (a + b +
// ...) or of elifs is as deep as it is long, and the validator and the
// interpreter recurse on depth.
absl::Status CheckTreeDepth(const NodeList& program) {
  std::vector<std::pair<const Node*, int>> pending;
  for (const NodePtr& n : program) pending.emplace_back(n.get(), 1);
  while (!pending.empty()) {
    const auto [n, depth] = pending.back();
    pending.pop_back();
    if (n == nullptr) continue;
    if (depth > Parser::kMaxTreeDepth) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", n->line, ": the template's syntax tree is deeper than ", Parser::kMaxTreeDepth,
          " levels (a chain of that many operators or elifs)"));
    }
    for (const auto* list : {&n->args, &n->body, &n->alternate}) {
      for (const NodePtr& child : *list) pending.emplace_back(child.get(), depth + 1);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NodeList> Parser::Parse(const std::vector<Token>& tokens) {
  ASSIGN_OR_RETURN(NodeList program, parser_internal::ParserImpl(tokens).ParseProgram());
  RETURN_IF_ERROR(CheckTreeDepth(program));
  RETURN_IF_ERROR(ValidateProgram(program));
  return program;
}

}  // namespace tandem::jinja
