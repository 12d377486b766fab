// Interpreter's statements with scoping of their own: {% for %} loops
// (with loop.*, loop filters, else, break and continue) and {% set %}.
#include "core/text/jinja/jinja_interpreter.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/text/jinja/jinja_builtins.h"
#include "core/text/jinja/jinja_interpreter_internal.h"

namespace tandem::jinja {
namespace {

using interpreter_internal::Error;
using Type = Value::Type;

}  // namespace

absl::StatusOr<Value> Interpreter::EvalFor(const Node* n, Scope* outer) {
  Scope scope(outer);
  const Node* loopvar = n->arg(0);
  const Node* test = n->arg(2);
  ASSIGN_OR_RETURN(Value iterable, Eval(n->arg(1), &scope));
  if (!iterable.is_list() && !iterable.is_object()) {
    return Error(absl::StrCat("Expected iterable or object type in for loop: got ",
                              iterable.type_name()));
  }
  if (iterable.is_object()) {
    ASSIGN_OR_RETURN(iterable, CallObjectMethod(iterable, "keys", {}));
  }
  const auto assign = [&](Scope* s, const Value& current) {
    if (loopvar->kind == NodeKind::kIdentifier) {
      s->Set(loopvar->text, current);
      return;
    }
    for (size_t j = 0; j < loopvar->args.size(); ++j) {
      s->Set(loopvar->arg(j)->text, current.list()[j]);
    }
  };
  std::vector<Value> items;
  for (const Value& current : iterable.list()) {
    if (loopvar->kind == NodeKind::kTuple) {
      if (current.type() != Type::kArray) {
        return Error(absl::StrCat("Cannot unpack non-iterable type: ", current.type_name()));
      }
      if (current.list().size() != loopvar->args.size()) {
        return Error(absl::StrCat("Too ", loopvar->args.size() > current.list().size() ? "few" : "many",
                                  " items to unpack"));
      }
    }
    if (test != nullptr) {
      Scope loop_scope(&scope);
      assign(&loop_scope, current);
      ASSIGN_OR_RETURN(const Value keep, Eval(test, &loop_scope));
      if (!Truthy(keep)) continue;
    }
    items.push_back(current);
  }

  std::string result;
  bool no_iteration = true;
  const double length = static_cast<double>(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const double index = static_cast<double>(i);
    ValueMap loop;
    loop.Set("index", Value::Int(index + 1));
    loop.Set("index0", Value::Int(index));
    loop.Set("revindex", Value::Int(length - index));
    loop.Set("revindex0", Value::Int(length - index - 1));
    loop.Set("first", Value::Bool(i == 0));
    loop.Set("last", Value::Bool(i + 1 == items.size()));
    loop.Set("length", Value::Int(length));
    loop.Set("previtem", i > 0 ? items[i - 1] : Value());
    loop.Set("nextitem", i + 1 < items.size() ? items[i + 1] : Value());
    scope.Set("loop", Value::Object(std::move(loop)));
    assign(&scope, items[i]);
    absl::StatusOr<std::string> body = EvalBlock(n->body, &scope);
    if (!body.ok()) {
      if (control_ == Control::kContinue) {
        control_ = Control::kNone;
        error_line_ = 0;
        continue;
      }
      if (control_ == Control::kBreak) {
        control_ = Control::kNone;
        error_line_ = 0;
        break;
      }
      return body.status();
    }
    RETURN_IF_ERROR(Append(&result, *body));
    no_iteration = false;
  }
  if (no_iteration) {
    ASSIGN_OR_RETURN(const std::string otherwise, EvalBlock(n->alternate, &scope));
    RETURN_IF_ERROR(Append(&result, otherwise));
  }
  return Value::String(std::move(result));
}

absl::StatusOr<Value> Interpreter::EvalSet(const Node* n, Scope* scope) {
  const Node* target = n->arg(0);
  const Node* value = n->arg(1);
  Value rhs;
  if (value == nullptr) {
    ASSIGN_OR_RETURN(std::string s, EvalBlock(n->body, scope));
    rhs = Value::String(std::move(s));
  } else if (value->kind == NodeKind::kFilter) {
    // `{% set x = [] | first %}` stores JavaScript's undefined.
    ASSIGN_OR_RETURN(rhs, EvalFilter(value, scope, /*allow_hole=*/true));
  } else {
    ASSIGN_OR_RETURN(rhs, Eval(value, scope));
  }
  switch (target->kind) {
    case NodeKind::kIdentifier:
      scope->Set(target->text, std::move(rhs));
      break;
    case NodeKind::kTuple: {
      if (!rhs.is_list()) {
        return Error(absl::StrCat("Cannot unpack non-iterable type in set: ", rhs.type_name()));
      }
      const std::vector<Value>& items = rhs.list();
      if (items.size() != target->args.size()) {
        return Error(absl::StrCat("Too ", target->args.size() > items.size() ? "few" : "many",
                                  " items to unpack in set"));
      }
      for (size_t i = 0; i < items.size(); ++i) scope->Set(target->arg(i)->text, items[i]);
      break;
    }
    case NodeKind::kMember: {
      ASSIGN_OR_RETURN(const Value object, Eval(target->arg(0), scope));
      if (object.type() != Type::kNamespace) {
        return Error("cannot assign attribute on non-namespace object");
      }
      object.mutable_map().Set(target->arg(1)->text, std::move(rhs));
      break;
    }
    default:
      return Error("Invalid LHS inside assignment expression");
  }
  return Value::Null();
}

}  // namespace tandem::jinja
