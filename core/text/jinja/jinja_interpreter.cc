// Interpreter's core: rendering a program, the step, size and depth
// limits, evaluating a block of statements, and the dispatch on node kinds
// (the simple kinds are evaluated here; the others are in
// jinja_interpreter_{expressions,calls,statements,filters}.cc).
#include "core/text/jinja/jinja_interpreter.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/text/jinja/jinja_builtins.h"
#include "core/text/jinja/jinja_interpreter_internal.h"
#include "core/text/jinja/jinja_js.h"

namespace tandem::jinja {
namespace {

using interpreter_internal::Error;

// How a break or continue unwinds to its loop (as @huggingface/jinja
// throws): an error status the loop recognizes by `control_`.
absl::Status ControlStatus() { return absl::CancelledError("jinja loop control"); }

}  // namespace

Interpreter::~Interpreter() {
  for (const Value& ns : namespaces_) ns.mutable_map() = ValueMap();
}

absl::Status Interpreter::Charge(int64_t steps) {
  steps_ += steps;
  if (steps_ > limits_.max_steps) {
    return Error(absl::StrCat("the template took more than ", limits_.max_steps,
                              " steps to render"));
  }
  return absl::OkStatus();
}

absl::Status Interpreter::CheckSize(size_t bytes) const {
  if (bytes > limits_.max_output_bytes) {
    return Error(absl::StrCat("the template built a string longer than ",
                              limits_.max_output_bytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status Interpreter::Append(std::string* out, std::string_view s) const {
  RETURN_IF_ERROR(CheckSize(out->size() + s.size()));
  out->append(s);
  return absl::OkStatus();
}

absl::StatusOr<std::string> Interpreter::Render(const NodeList& program, const ValueMap& context) {
  Scope global(nullptr);
  global.Set("false", Value::Bool(false));
  global.Set("true", Value::Bool(true));
  global.Set("none", Value::Null());
  global.Set("raise_exception", GlobalFunction("raise_exception"));
  global.Set("range", GlobalFunction("range"));
  global.Set("strftime_now", GlobalFunction("strftime_now"));
  global.Set("True", Value::Bool(true));
  global.Set("False", Value::Bool(false));
  global.Set("None", Value::Null());
  for (const auto& [key, value] : context.entries()) {
    if (global.Declared(key)) return Error(absl::StrCat("Variable already declared: ", key));
    global.Set(key, value);
  }
  absl::StatusOr<std::string> out = EvalBlock(program, &global);
  if (out.ok()) return out;
  if (raised_) return out.status();
  if (control_ != Control::kNone) {
    return Error(absl::StrCat("line ", error_line_, ": {% ",
                              control_ == Control::kBreak ? "break" : "continue",
                              " %} outside of a loop"));
  }
  return absl::Status(out.status().code(),
                      absl::StrCat("line ", error_line_, ": ", out.status().message()));
}

absl::StatusOr<Value> Interpreter::Eval(const Node* n, Scope* scope) {
  if (n == nullptr) return Value();
  RETURN_IF_ERROR(Charge(1));
  if (depth_ >= limits_.max_depth) {
    if (error_line_ == 0) error_line_ = n->line;
    return Error(absl::StrCat("the template nests deeper than ", limits_.max_depth,
                              " levels (runaway recursion?)"));
  }
  ++depth_;
  absl::StatusOr<Value> v = EvalNode(n, scope);
  --depth_;
  if (v.ok() && v->is_string()) {
    if (absl::Status s = CheckSize(v->str().size()); !s.ok()) v = s;
  }
  if (v.ok() && v->depth() > limits_.max_value_depth) {
    v = Error(absl::StrCat("the template built values nested more than ",
                           limits_.max_value_depth, " deep"));
  }
  if (!v.ok() && error_line_ == 0) error_line_ = n->line;
  return v;
}

absl::StatusOr<std::string> Interpreter::EvalBlock(const NodeList& statements, Scope* scope) {
  std::string out;
  for (const NodePtr& statement : statements) {
    ASSIGN_OR_RETURN(const Value v, Eval(statement.get(), scope));
    if (v.is_null() || v.is_undefined()) continue;
    if (v.is_string()) {
      RETURN_IF_ERROR(Append(&out, v.str()));
    } else {
      absl::StatusOr<std::string> s = ToDisplayString(v);
      if (!s.ok()) {
        if (error_line_ == 0) error_line_ = statement->line;
        return s.status();
      }
      RETURN_IF_ERROR(Append(&out, *s));
    }
  }
  return out;
}

absl::StatusOr<Value> Interpreter::EvalNode(const Node* n, Scope* scope) {
  switch (n->kind) {
    case NodeKind::kText:
    case NodeKind::kString:
      return Value::String(n->text);
    case NodeKind::kInteger: return Value::Int(n->number);
    case NodeKind::kFloat: return Value::Float(n->number);
    case NodeKind::kIdentifier: return scope->Lookup(n->text);
    case NodeKind::kArray:
    case NodeKind::kTuple: {
      std::vector<Value> items;
      for (const NodePtr& item : n->args) {
        ASSIGN_OR_RETURN(Value v, Eval(item.get(), scope));
        items.push_back(std::move(v));
      }
      return n->kind == NodeKind::kArray ? Value::Array(std::move(items))
                                         : Value::Tuple(std::move(items));
    }
    case NodeKind::kObject: {
      ValueMap map;
      for (size_t i = 0; i + 1 < n->args.size(); i += 2) {
        ASSIGN_OR_RETURN(const Value key, Eval(n->arg(i), scope));
        if (!key.is_string()) {
          return Error(absl::StrCat("Object keys must be strings: got ", key.type_name()));
        }
        ASSIGN_OR_RETURN(Value value, Eval(n->arg(i + 1), scope));
        map.Set(key.str(), std::move(value));
      }
      return Value::Object(std::move(map));
    }
    case NodeKind::kMember: return EvalMember(n, scope);
    case NodeKind::kCall: return EvalCall(n, scope);
    case NodeKind::kUnary: return EvalUnary(n, scope);
    case NodeKind::kBinary: return EvalBinary(n, scope);
    case NodeKind::kFilter: return EvalFilter(n, scope, /*allow_hole=*/false);
    case NodeKind::kTest: {
      ASSIGN_OR_RETURN(const Value operand, Eval(n->arg(0), scope));
      ASSIGN_OR_RETURN(const bool result, RunTest(n->text, operand, nullptr));
      return Value::Bool(n->flag ? !result : result);
    }
    case NodeKind::kSelect: {
      ASSIGN_OR_RETURN(const Value test, Eval(n->arg(1), scope));
      if (!Truthy(test)) return Value();
      return Eval(n->arg(0), scope);
    }
    case NodeKind::kTernary: {
      ASSIGN_OR_RETURN(const Value cond, Eval(n->arg(0), scope));
      return Eval(n->arg(Truthy(cond) ? 1 : 2), scope);
    }
    case NodeKind::kIf: {
      // An elif chain (each kIf alone in the previous one's alternate) is
      // walked here, so that its length does not count as nesting.
      const Node* branch = n;
      bool taken = false;
      while (true) {
        ASSIGN_OR_RETURN(const Value test, Eval(branch->arg(0), scope));
        taken = Truthy(test);
        if (taken || branch->alternate.size() != 1 ||
            branch->alternate[0]->kind != NodeKind::kIf) {
          break;
        }
        branch = branch->alternate[0].get();
      }
      ASSIGN_OR_RETURN(std::string s,
                       EvalBlock(taken ? branch->body : branch->alternate, scope));
      return Value::String(std::move(s));
    }
    case NodeKind::kFor: return EvalFor(n, scope);
    case NodeKind::kSet: return EvalSet(n, scope);
    case NodeKind::kMacro: {
      auto fn = std::make_shared<Function>();
      fn->kind = Function::Kind::kMacro;
      fn->name = n->text;
      fn->macro = n;
      scope->Set(n->text, Value::Callable(std::move(fn)));
      return Value::Null();
    }
    case NodeKind::kFilterBlock: {
      ASSIGN_OR_RETURN(std::string s, EvalBlock(n->body, scope));
      return ApplyFilter(Value::String(std::move(s)), n->arg(0), scope, false);
    }
    case NodeKind::kBreak:
      control_ = Control::kBreak;
      return ControlStatus();
    case NodeKind::kContinue:
      control_ = Control::kContinue;
      return ControlStatus();
    case NodeKind::kSlice:
    case NodeKind::kKeywordArg:
    case NodeKind::kSpread:
    case NodeKind::kKwSpread:
      break;
  }
  return Error("Unknown node type");
}

}  // namespace tandem::jinja
