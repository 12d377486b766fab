// Interpreter's calls: evaluating call arguments (*x and **x unpacked),
// calling global functions and bound methods, and calling macros.
#include "core/text/jinja/jinja_interpreter.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/text/jinja/jinja_builtins.h"
#include "core/text/jinja/jinja_interpreter_internal.h"
#include "core/text/jinja/jinja_js.h"

namespace tandem::jinja {
namespace {

using interpreter_internal::Error;
using Type = Value::Type;

}  // namespace

absl::Status Interpreter::EvalArguments(const Node* n, size_t first, Scope* scope,
                                        std::vector<Value>* positional, ValueMap* kwargs) {
  for (size_t i = first; i < n->args.size(); ++i) {
    const Node* a = n->arg(i);
    if (a->kind == NodeKind::kSpread) {
      ASSIGN_OR_RETURN(const Value v, Eval(a->arg(0), scope));
      if (!v.is_list()) return Error(absl::StrCat("Cannot unpack non-iterable type: ", v.type_name()));
      for (const Value& item : v.list()) positional->push_back(item);
    } else if (a->kind != NodeKind::kKeywordArg && a->kind != NodeKind::kKwSpread) {
      ASSIGN_OR_RETURN(Value v, Eval(a, scope));
      positional->push_back(std::move(v));
    }
  }
  const auto add = [&](const std::string& key, Value value) -> absl::Status {
    if (kwargs->Find(key) != nullptr) {
      return Error(absl::StrCat("Got multiple values for keyword argument '", key, "'"));
    }
    kwargs->Set(key, std::move(value));
    return absl::OkStatus();
  };
  for (size_t i = first; i < n->args.size(); ++i) {
    const Node* a = n->arg(i);
    if (a->kind == NodeKind::kKeywordArg) {
      ASSIGN_OR_RETURN(Value v, Eval(a->arg(0), scope));
      RETURN_IF_ERROR(add(a->text, std::move(v)));
    } else if (a->kind == NodeKind::kKwSpread) {
      ASSIGN_OR_RETURN(const Value v, Eval(a->arg(0), scope));
      if (!v.is_object()) {
        return Error(absl::StrCat("Argument after ** must be a mapping, not ", v.type_name()));
      }
      for (const auto& [key, value] : v.map().entries()) RETURN_IF_ERROR(add(key, value));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Value> Interpreter::EvalCall(const Node* n, Scope* scope) {
  std::vector<Value> args;
  ValueMap kwargs;
  RETURN_IF_ERROR(EvalArguments(n, 1, scope, &args, &kwargs));
  if (!kwargs.empty()) args.push_back(Value::Kwargs(std::move(kwargs)));
  ASSIGN_OR_RETURN(const Value fn, Eval(n->arg(0), scope));
  if (fn.type() != Type::kFunction) {
    return Error(absl::StrCat("Cannot call something that is not a function: got ",
                              fn.type_name()));
  }
  return CallFunction(fn, args, scope);
}

absl::StatusOr<Value> Interpreter::CallFunction(const Value& fn, const std::vector<Value>& args,
                                                Scope* scope) {
  const Function& f = fn.function();
  switch (f.kind) {
    case Function::Kind::kNamespace: {
      ASSIGN_OR_RETURN(Value ns, MakeNamespace(args));
      RETURN_IF_ERROR(Charge(static_cast<int64_t>(ns.map().size()) + 10));
      namespaces_.push_back(ns);
      return ns;
    }
    case Function::Kind::kRaiseException: {
      std::string message;
      if (!args.empty() && !args[0].is_undefined()) {
        ASSIGN_OR_RETURN(message, ToJsString(args[0]));
      }
      raised_ = true;
      return absl::InvalidArgumentError(message);
    }
    case Function::Kind::kRange: {
      const int64_t budget = std::max<int64_t>(limits_.max_steps - steps_, 0);
      absl::StatusOr<Value> v = Range(args, budget);
      if (v.status().code() == absl::StatusCode::kResourceExhausted) {
        return Charge(budget + 1);  // fails, naming the step budget
      }
      if (v.ok()) RETURN_IF_ERROR(Charge(static_cast<int64_t>(v->list().size())));
      return v;
    }
    case Function::Kind::kStrftimeNow:
      if (args.empty() || !args[0].is_string()) return Error("strftime_now() needs a format string");
      return Value::String(StrftimeNow(args[0].str()));
    case Function::Kind::kStringMethod:
      return CallStringMethod(f.receiver, f.name, args);
    case Function::Kind::kObjectMethod:
      return CallObjectMethod(f.receiver, f.name, args);
    case Function::Kind::kMacro:
      return CallMacro(f.macro, args, scope);
  }
  return Error("unknown function");
}

absl::StatusOr<Value> Interpreter::CallMacro(const Node* macro, const std::vector<Value>& args,
                                             Scope* scope) {
  Scope macro_scope(scope);
  std::vector<Value> positional = args;
  ValueMap kwargs;
  if (!positional.empty() && positional.back().type() == Type::kKwargs) {
    kwargs = positional.back().map();
    positional.pop_back();
  }
  absl::flat_hash_set<std::string> used;
  std::vector<const Node*> pending;
  for (size_t i = 0; i < macro->args.size(); ++i) {
    const Node* param = macro->arg(i);
    std::optional<Value> value;
    if (i < positional.size()) value = positional[i];
    if (!value.has_value()) {
      if (const Value* v = kwargs.Find(param->text); v != nullptr && !used.contains(param->text)) {
        value = *v;
        used.insert(param->text);
      }
    }
    if (!value.has_value() && param->kind == NodeKind::kKeywordArg) pending.push_back(param);
    macro_scope.Set(param->text, value.value_or(Value()));
  }
  for (const auto& [key, value] : kwargs.entries()) {
    if (!used.contains(key)) {
      return Error(absl::StrCat("macro '", macro->text, "' takes no keyword argument '", key, "'"));
    }
  }
  if (positional.size() > macro->args.size()) {
    return Error(absl::StrCat("macro '", macro->text, "' takes not more than ",
                              macro->args.size(), " argument(s)"));
  }
  for (const Node* param : pending) {
    ASSIGN_OR_RETURN(Value v, Eval(param->arg(0), &macro_scope));
    macro_scope.Set(param->text, std::move(v));
  }
  ASSIGN_OR_RETURN(std::string out, EvalBlock(macro->body, &macro_scope));
  return Value::String(std::move(out));
}

}  // namespace tandem::jinja
