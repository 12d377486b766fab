#include "core/text/jinja/jinja_interpreter.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/text/jinja/jinja_builtins.h"
#include "core/text/jinja/jinja_js.h"

namespace tandem::jinja {
namespace {

using Type = Value::Type;

absl::Status Error(std::string_view message) {
  return absl::InvalidArgumentError(std::string(message));
}

// How a break or continue unwinds to its loop (as @huggingface/jinja
// throws): an error status the loop recognizes by `control_`.
absl::Status ControlStatus() { return absl::CancelledError("jinja loop control"); }

// Array.prototype.at / String.prototype.at's index conversion.
double ToIntegerOrInfinity(double x) {
  if (std::isnan(x)) return 0;
  return std::trunc(x);
}

// utils.slice: Python-like slicing of `length` items with JavaScript
// numbers; the indices taken, in order.
std::vector<size_t> SliceIndices(size_t length, std::optional<double> start_opt,
                                 std::optional<double> stop_opt, std::optional<double> step_opt) {
  const double len = static_cast<double>(length);
  const double step = step_opt.value_or(1);
  std::vector<size_t> out;
  if (std::isnan(step) || step == 0) return out;
  double start, stop;
  const double direction = step > 0 ? 1 : -1;
  if (direction > 0) {
    start = start_opt.value_or(0);
    start = start < 0 ? std::max(len + start, 0.0) : std::min(start, len);
    stop = stop_opt.value_or(len);
    stop = stop < 0 ? std::max(len + stop, 0.0) : std::min(stop, len);
  } else {
    start = start_opt.value_or(len - 1);
    start = start < 0 ? std::max(len + start, -1.0) : std::min(start, len - 1);
    stop = stop_opt.value_or(-1);
    stop = stop < -1 ? std::max(len + stop, -1.0) : std::min(stop, len - 1);
  }
  if (std::isnan(start) || std::isnan(stop)) return out;
  for (double i = start; direction * i < direction * stop; i += step) {
    out.push_back(static_cast<size_t>(i));
  }
  return out;
}

}  // namespace

class Interpreter::Scope {
 public:
  explicit Scope(Scope* parent) : parent_(parent) {}

  Value Lookup(const std::string& name) const {
    // Every @huggingface/jinja Environment holds its own `namespace`.
    if (name == "namespace") {
      const auto it = vars_.find(name);
      return it != vars_.end() ? it->second : GlobalFunction("namespace");
    }
    for (const Scope* s = this; s != nullptr; s = s->parent_) {
      const auto it = s->vars_.find(name);
      if (it != s->vars_.end()) return it->second;
    }
    return Value();
  }
  bool Declared(const std::string& name) const {
    return name == "namespace" || vars_.contains(name);
  }
  void Set(const std::string& name, Value v) { vars_[name] = std::move(v); }

 private:
  Scope* parent_;
  absl::flat_hash_map<std::string, Value> vars_;
};

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
      ASSIGN_OR_RETURN(const Value test, Eval(n->arg(0), scope));
      ASSIGN_OR_RETURN(std::string s, EvalBlock(Truthy(test) ? n->body : n->alternate, scope));
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

absl::StatusOr<Value> Interpreter::EvalMember(const Node* n, Scope* scope) {
  ASSIGN_OR_RETURN(const Value object, Eval(n->arg(0), scope));
  const Node* prop = n->arg(1);
  Value property;
  if (n->flag) {
    if (prop->kind == NodeKind::kSlice) return EvalSlice(object, prop, scope);
    ASSIGN_OR_RETURN(property, Eval(prop, scope));
  } else if (prop->kind == NodeKind::kInteger) {
    property = Value::Int(prop->number);
  } else {
    property = Value::String(prop->text);
  }

  if (object.is_object() || object.type() == Type::kNamespace) {
    if (!property.is_string()) {
      return Error(absl::StrCat("Cannot access property with non-string: got ",
                                property.type_name()));
    }
    if (const Value* v = object.map().Find(property.str())) return *v;
    return object.is_object() ? ObjectMember(object, property.str()) : Value();
  }
  if (object.is_list() || object.is_string()) {
    if (property.type() == Type::kInt) {
      if (object.is_string()) {
        const std::u16string units = ToUtf16(object.str());
        double i = ToIntegerOrInfinity(property.number());
        if (i < 0) i += static_cast<double>(units.size());
        if (i < 0 || i >= static_cast<double>(units.size())) return Value();
        return Value::String(FromUtf16(std::u16string_view(units).substr(static_cast<size_t>(i), 1)));
      }
      const std::vector<Value>& list = object.list();
      double i = ToIntegerOrInfinity(property.number());
      if (i < 0) i += static_cast<double>(list.size());
      if (i < 0 || i >= static_cast<double>(list.size())) return Value();
      return list[static_cast<size_t>(i)];
    }
    if (property.is_string()) {
      if (object.is_string()) return StringMember(object, property.str());
      if (property.str() == "length") return Value::Int(static_cast<double>(object.list().size()));
      return Value();
    }
    return Error(absl::StrCat("Cannot access property with non-string/non-number: got ",
                              property.type_name()));
  }
  if (!property.is_string()) {
    return Error(absl::StrCat("Cannot access property with non-string: got ",
                              property.type_name()));
  }
  return Value();  // numbers, booleans, null, undefined and callables have no members
}

absl::StatusOr<Value> Interpreter::EvalSlice(const Value& object, const Node* slice, Scope* scope) {
  if (!object.is_list() && !object.is_string()) {
    return Error("Slice object must be an array or string");
  }
  std::optional<double> bounds[3];
  static constexpr const char* kNames[] = {"start", "stop", "step"};
  for (int i = 0; i < 3; ++i) {
    ASSIGN_OR_RETURN(const Value v, Eval(slice->arg(i), scope));
    if (v.type() == Type::kInt) {
      bounds[i] = v.number();
    } else if (!v.is_undefined()) {
      return Error(absl::StrCat("Slice ", kNames[i], " must be numeric or undefined"));
    }
  }
  if (object.is_list()) {
    const std::vector<Value>& list = object.list();
    const std::vector<size_t> indices = SliceIndices(list.size(), bounds[0], bounds[1], bounds[2]);
    RETURN_IF_ERROR(Charge(static_cast<int64_t>(indices.size())));
    std::vector<Value> out;
    out.reserve(indices.size());
    for (size_t i : indices) out.push_back(list[i]);
    return Value::Array(std::move(out));
  }
  const std::vector<std::string> cps = SplitCodePoints(object.str());
  const std::vector<size_t> indices = SliceIndices(cps.size(), bounds[0], bounds[1], bounds[2]);
  std::string out;
  for (size_t i : indices) out += cps[i];
  return Value::String(std::move(out));
}

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

absl::StatusOr<Value> Interpreter::EvalUnary(const Node* n, Scope* scope) {
  ASSIGN_OR_RETURN(const Value arg, Eval(n->arg(0), scope));
  if (n->text == "not") return Value::Bool(!Truthy(arg));
  const double sign = n->text == "-" ? -1 : 1;
  if (arg.is_number() || arg.type() == Type::kBool) {
    const double x = arg.type() == Type::kBool ? (arg.boolean() ? 1 : 0) : arg.number();
    return arg.type() == Type::kFloat ? Value::Float(sign * x) : Value::Int(sign * x);
  }
  return Error(absl::StrCat("Unknown operator \"", n->text, "\" for ", arg.type_name()));
}

absl::StatusOr<Value> Interpreter::EvalBinary(const Node* n, Scope* scope) {
  const std::string& op = n->text;
  ASSIGN_OR_RETURN(const Value left, Eval(n->arg(0), scope));
  if (op == "and") return Truthy(left) ? Eval(n->arg(1), scope) : left;
  if (op == "or") return Truthy(left) ? left : Eval(n->arg(1), scope);
  ASSIGN_OR_RETURN(const Value right, Eval(n->arg(1), scope));
  if (op == "==") return Value::Bool(LooseEquals(left, right));
  if (op == "!=") return Value::Bool(!LooseEquals(left, right));

  if (left.is_undefined() || right.is_undefined()) {
    if (right.is_undefined() && (op == "in" || op == "not in")) return Value::Bool(op == "not in");
    return Error(absl::StrCat("Cannot perform operation ", op, " on undefined values"));
  }
  if (left.is_null() || right.is_null()) return Error("Cannot perform operation on null values");
  if (op == "~") {
    ASSIGN_OR_RETURN(const std::string a, ToJsString(left));
    ASSIGN_OR_RETURN(const std::string b, ToJsString(right));
    RETURN_IF_ERROR(CheckSize(a.size() + b.size()));
    return Value::String(a + b);
  }
  const auto numeric_like = [](const Value& v) { return v.is_number() || v.type() == Type::kBool; };
  const auto numeric_value = [](const Value& v) {
    return v.type() == Type::kBool ? (v.boolean() ? 1.0 : 0.0) : v.number();
  };
  if (op == "**" && numeric_like(left) && numeric_like(right)) {
    const double a = numeric_value(left);
    const double b = numeric_value(right);
    if (a == 0 && b < 0) return Error("0.0 cannot be raised to a negative power");
    const double result = std::pow(a, b);
    if (!std::isfinite(result)) return Error("Exponentiation result is not a finite real number");
    const bool is_float = left.type() == Type::kFloat || right.type() == Type::kFloat || b < 0;
    return is_float ? Value::Float(result) : Value::Int(result);
  } else if (left.is_number() && right.is_number()) {
    const double a = left.number();
    const double b = right.number();
    const bool is_float = left.type() == Type::kFloat || right.type() == Type::kFloat;
    const auto number = [&](double x) { return is_float ? Value::Float(x) : Value::Int(x); };
    if (op == "+") return number(a + b);
    if (op == "-") return number(a - b);
    if (op == "*") return number(a * b);
    if (op == "/") return Value::Float(a / b);
    if (op == "//") return number(std::floor(a / b));
    if (op == "%") return number(std::fmod(a, b));
    if (op == "<") return Value::Bool(a < b);
    if (op == ">") return Value::Bool(a > b);
    if (op == ">=") return Value::Bool(a >= b);
    if (op == "<=") return Value::Bool(a <= b);
  } else if (left.is_list() && right.is_list()) {
    if (op == "+") {
      RETURN_IF_ERROR(Charge(static_cast<int64_t>(left.list().size() + right.list().size())));
      std::vector<Value> items = left.list();
      items.insert(items.end(), right.list().begin(), right.list().end());
      return Value::Array(std::move(items));
    }
  } else if (right.is_list()) {
    if (op == "in" || op == "not in") {
      bool member = false;
      for (const Value& x : right.list()) member |= StrictEquals(x, left);
      return Value::Bool(op == "in" ? member : !member);
    }
  }
  if ((left.is_string() || right.is_string()) && op == "+") {
    ASSIGN_OR_RETURN(const std::string a, ToJsString(left));
    ASSIGN_OR_RETURN(const std::string b, ToJsString(right));
    RETURN_IF_ERROR(CheckSize(a.size() + b.size()));
    return Value::String(a + b);
  }
  if (left.is_string() && right.is_string() && (op == "in" || op == "not in")) {
    const bool contains = right.str().find(left.str()) != std::string::npos;
    return Value::Bool(op == "in" ? contains : !contains);
  }
  if (left.is_string() && right.is_object() && (op == "in" || op == "not in")) {
    const bool has = right.map().Find(left.str()) != nullptr;
    return Value::Bool(op == "in" ? has : !has);
  }
  return Error(absl::StrCat("Unknown operator \"", op, "\" between ", left.type_name(), " and ",
                            right.type_name()));
}

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

absl::StatusOr<Value> Interpreter::EvalFilter(const Node* n, Scope* scope, bool allow_hole) {
  ASSIGN_OR_RETURN(const Value operand, Eval(n->arg(0), scope));
  return ApplyFilter(operand, n, scope, allow_hole);
}

absl::StatusOr<Value> Interpreter::ApplyFilter(const Value& operand, const Node* filter,
                                               Scope* scope, bool allow_hole) {
  const std::string& name = filter->text;
  const Type t = operand.type();
  const auto cannot_apply = [&] {
    return Error(absl::StrCat("Cannot apply filter \"", name, "\" to type: ", operand.type_name()));
  };
  const auto unknown = [&](const char* type) {
    return Error(absl::StrCat("Unknown ", type, " filter: ", name));
  };
  const auto sort = [&](const std::vector<Value>& items, bool reverse, bool case_sensitive,
                        const Value* attribute) -> absl::StatusOr<Value> {
    RETURN_IF_ERROR(Charge(static_cast<int64_t>(items.size())));
    std::vector<Value> sorted = items;
    absl::Status error;
    std::string path;
    if (attribute != nullptr) {
      if (attribute->is_string()) {
        path = attribute->str();
      } else {
        path = JsNumberToString(attribute->number());
      }
    }
    std::stable_sort(sorted.begin(), sorted.end(), [&](const Value& a, const Value& b) {
      if (!error.ok()) return false;
      const Value va = attribute != nullptr ? GetAttributeValue(a, path) : a;
      const Value vb = attribute != nullptr ? GetAttributeValue(b, path) : b;
      absl::StatusOr<int> c = CompareValues(va, vb, case_sensitive);
      if (!c.ok()) {
        error = c.status();
        return false;
      }
      return (reverse ? -*c : *c) < 0;
    });
    RETURN_IF_ERROR(error);
    return Value::Array(std::move(sorted));
  };
  const auto hole = [&](const char* what) -> absl::StatusOr<Value> {
    if (allow_hole) return Value();
    return Error(absl::StrCat("|", what, " of an empty array"));
  };

  if (!filter->flag) {
    if (name == "safe") return operand;
    if (name == "tojson") {
      ASSIGN_OR_RETURN(std::string s, ToJson(operand, JsonOptions()));
      return Value::String(std::move(s));
    }
    if (operand.is_list()) {
      const std::vector<Value>& list = operand.list();
      if (name == "list") return operand;
      if (name == "first") return list.empty() ? hole("first") : absl::StatusOr<Value>(list.front());
      if (name == "last") return list.empty() ? hole("last") : absl::StatusOr<Value>(list.back());
      if (name == "length") return Value::Int(static_cast<double>(list.size()));
      if (name == "reverse") return Value::Array(std::vector<Value>(list.rbegin(), list.rend()));
      if (name == "sort") return sort(list, false, false, nullptr);
      if (name == "join") {
        ASSIGN_OR_RETURN(std::string s, JsJoin(list, ""));
        return Value::String(std::move(s));
      }
      if (name == "string") {
        ASSIGN_OR_RETURN(std::string s, ToJson(operand, JsonOptions(), false));
        return Value::String(std::move(s));
      }
      if (name == "unique") {
        std::vector<Value> out;
        for (const Value& item : list) {
          RETURN_IF_ERROR(Charge(static_cast<int64_t>(out.size()) + 1));
          bool seen = false;
          for (const Value& o : out) seen = seen || SameValueZero(o, item);
          if (!seen) out.push_back(item);
        }
        return Value::Array(std::move(out));
      }
      return unknown("ArrayValue");
    }
    if (t == Type::kString) {
      const std::string& s = operand.str();
      if (name == "length") return Value::Int(static_cast<double>(Utf16Length(s)));
      if (name == "upper") return Value::String(JsToUpper(s));
      if (name == "lower") return Value::String(JsToLower(s));
      if (name == "title") return Value::String(TitleCase(s));
      if (name == "capitalize") return Value::String(Capitalize(s));
      if (name == "trim") return Value::String(std::string(JsTrim(s)));
      if (name == "indent") {
        std::string out;
        size_t start = 0;
        bool first_line = true;
        while (true) {
          const size_t nl = s.find('\n', start);
          const std::string_view line =
              std::string_view(s).substr(start, nl == std::string::npos ? std::string::npos : nl - start);
          if (!first_line) out += '\n';
          if (!first_line && !line.empty()) out += "    ";
          out += line;
          first_line = false;
          if (nl == std::string::npos) break;
          start = nl + 1;
        }
        return Value::String(std::move(out));
      }
      if (name == "join" || name == "string") return operand;
      if (name == "int") {
        const double v = JsParseInt(s);
        return Value::Int(std::isnan(v) ? 0 : v);
      }
      if (name == "float") {
        const double v = JsParseFloat(s);
        return Value::Float(std::isnan(v) ? 0 : v);
      }
      return unknown("StringValue");
    }
    if (operand.is_number()) {
      const double x = operand.number();
      if (name == "abs") return t == Type::kInt ? Value::Int(std::fabs(x)) : Value::Float(std::fabs(x));
      if (name == "int") return Value::Int(std::floor(x));
      if (name == "float") return Value::Float(x);
      if (name == "string") {
        ASSIGN_OR_RETURN(std::string s, ToDisplayString(operand));
        return Value::String(std::move(s));
      }
      return unknown("NumericValue");
    }
    if (operand.is_object()) {
      if (name == "items") return CallObjectMethod(operand, "items", {});
      if (name == "length") return Value::Int(static_cast<double>(operand.map().size()));
      if (ObjectMember(operand, name).type() == Type::kFunction) {
        return CallObjectMethod(operand, name, {});
      }
      return unknown("ObjectValue");
    }
    if (t == Type::kBool) {
      const bool b = operand.boolean();
      if (name == "bool") return Value::Bool(b);
      if (name == "int") return Value::Int(b ? 1 : 0);
      if (name == "float") return Value::Float(b ? 1 : 0);
      if (name == "string") return Value::String(b ? "true" : "false");
      return unknown("BooleanValue");
    }
    return cannot_apply();
  }

  // Filters called with arguments.
  std::vector<Value> args;
  ValueMap kwargs;
  const auto option = [&](std::optional<size_t> position, std::string_view key) -> const Value* {
    if (position.has_value() && *position < args.size()) return &args[*position];
    return kwargs.Find(key);
  };
  if (name != "selectattr" && name != "rejectattr") {
    RETURN_IF_ERROR(EvalArguments(filter, 1, scope, &args, &kwargs));
  }

  if (name == "tojson") {
    JsonOptions options;
    if (const Value* indent = kwargs.Find("indent"); indent != nullptr && !indent->is_null()) {
      if (indent->type() != Type::kInt) return Error("If set, indent must be a number");
      options.indent = indent->number();
    }
    if (const Value* ascii = kwargs.Find("ensure_ascii")) {
      if (ascii->type() != Type::kBool) return Error("If set, ensure_ascii must be a boolean");
      options.ensure_ascii = ascii->boolean();
    }
    if (const Value* sort_keys = kwargs.Find("sort_keys")) {
      if (sort_keys->type() != Type::kBool) return Error("If set, sort_keys must be a boolean");
      if (sort_keys->boolean()) {
        return Error("tojson(sort_keys=true) is not supported (it sorts by the JavaScript locale)");
      }
    }
    if (const Value* separators = kwargs.Find("separators");
        separators != nullptr && !separators->is_null()) {
      if (!separators->is_list()) return Error("If set, separators must be a tuple of two strings");
      const std::vector<Value>& seps = separators->list();
      if (seps.size() != 2 || !seps[0].is_string() || !seps[1].is_string()) {
        return Error("separators must be a tuple of two strings");
      }
      options.separators = std::make_pair(seps[0].str(), seps[1].str());
    }
    ASSIGN_OR_RETURN(std::string s, ToJson(operand, options));
    return Value::String(std::move(s));
  }
  if (name == "join") {
    std::vector<Value> items;
    if (t == Type::kString) {
      for (std::string& c : SplitCodePoints(operand.str())) items.push_back(Value::String(std::move(c)));
    } else if (operand.is_list()) {
      items = operand.list();
    } else {
      return cannot_apply();
    }
    const Value* separator = option(0, "separator");
    if (separator != nullptr && !separator->is_string()) return Error("separator must be a string");
    ASSIGN_OR_RETURN(std::string s, JsJoin(items, separator != nullptr ? separator->str() : ""));
    return Value::String(std::move(s));
  }
  if (name == "int" || name == "float") {
    const bool is_int = name == "int";
    const Value* d = option(0, "default");
    const Value fallback = d != nullptr ? *d : (is_int ? Value::Int(0) : Value::Float(0));
    if (t == Type::kString) {
      const double v = is_int ? JsParseInt(operand.str()) : JsParseFloat(operand.str());
      if (std::isnan(v)) return fallback;
      return is_int ? Value::Int(v) : Value::Float(v);
    }
    if (operand.is_number()) return operand;
    if (t == Type::kBool) {
      return is_int ? Value::Int(operand.boolean() ? 1 : 0) : Value::Float(operand.boolean() ? 1 : 0);
    }
    return cannot_apply();
  }
  if (name == "default") {
    const Value fallback = !args.empty() ? args[0] : Value::String("");
    const Value* boolean = option(1, "boolean");
    if (boolean != nullptr && boolean->type() != Type::kBool) {
      return Error("`default` filter flag must be a boolean");
    }
    const bool use_boolean = boolean != nullptr && boolean->boolean();
    if (operand.is_undefined() || (use_boolean && !Truthy(operand))) return fallback;
    return operand;
  }

  if (operand.is_list()) {
    const std::vector<Value>& list = operand.list();
    if (name == "sort") {
      const Value* reverse = option(0, "reverse");
      if (reverse != nullptr && reverse->type() != Type::kBool) return Error("reverse must be a boolean");
      const Value* case_sensitive = option(1, "case_sensitive");
      if (case_sensitive != nullptr && case_sensitive->type() != Type::kBool) {
        return Error("case_sensitive must be a boolean");
      }
      const Value* attribute = option(2, "attribute");
      if (attribute != nullptr && attribute->is_null()) attribute = nullptr;
      if (attribute != nullptr && !attribute->is_string() && attribute->type() != Type::kInt) {
        return Error("attribute must be a string, integer, or null");
      }
      return sort(list, reverse != nullptr && reverse->boolean(),
                  case_sensitive != nullptr && case_sensitive->boolean(), attribute);
    }
    if (name == "selectattr" || name == "rejectattr") {
      const bool select = name == "selectattr";
      for (const Value& item : list) {
        if (!item.is_object() && item.type() != Type::kNamespace) {
          return Error(absl::StrCat("`", name, "` can only be applied to array of objects"));
        }
      }
      for (size_t i = 1; i < filter->args.size(); ++i) {
        if (filter->arg(i)->kind != NodeKind::kString) {
          return Error(absl::StrCat("arguments of `", name, "` must be strings"));
        }
      }
      if (filter->args.size() < 2) {
        if (list.empty()) return Value::Array({});
        return Error(absl::StrCat("`", name, "` needs an attribute"));
      }
      const std::string& attr = filter->arg(1)->text;
      const Node* test_name = filter->arg(2);
      const Node* test_value = filter->arg(3);
      std::optional<Value> compare_to;
      if (test_value != nullptr) compare_to = Value::String(test_value->text);
      if (test_name != nullptr && !IsKnownTest(test_name->text) && test_name->text != "equalto" &&
          test_name->text != "eq") {
        return Error(absl::StrCat("Unknown test: ", test_name->text));
      }
      std::vector<Value> out;
      for (const Value& item : list) {
        const Value* a = item.map().Find(attr);
        bool result = false;
        if (a != nullptr) {
          if (test_name != nullptr) {
            ASSIGN_OR_RETURN(result, RunTest(test_name->text, *a,
                                             compare_to.has_value() ? &*compare_to : nullptr));
          } else {
            result = Truthy(*a);
          }
        }
        if (result == select) out.push_back(item);
      }
      return Value::Array(std::move(out));
    }
    if (name == "map") {
      const Value* attribute = kwargs.Find("attribute");
      if (attribute == nullptr) {
        return Error("`map` expressions without `attribute` set are not currently supported.");
      }
      if (!attribute->is_string()) return Error("attribute must be a string");
      const Value* fallback = kwargs.Find("default");
      std::vector<Value> out;
      for (const Value& item : list) {
        if (!item.is_object() && item.type() != Type::kNamespace) {
          return Error("items in map must be an object");
        }
        Value v = GetAttributeValue(item, attribute->str());
        if (v.is_undefined() && fallback != nullptr) v = *fallback;
        out.push_back(std::move(v));
      }
      return Value::Array(std::move(out));
    }
    return unknown("ArrayValue");
  }
  if (t == Type::kString) {
    if (name == "indent") {
      const Value* width = option(0, "width");
      if (width != nullptr && width->type() != Type::kInt) return Error("width must be a number");
      const double w = width != nullptr ? width->number() : 4;
      if (w < 0 || w > static_cast<double>(limits_.max_output_bytes)) {
        return Error("indent: invalid width");
      }
      const Value* first = option(1, "first");
      const Value* blank = option(2, "blank");
      const bool indent_first = first != nullptr && JsTruthy(*first);
      const bool indent_blank = blank != nullptr && JsTruthy(*blank);
      const std::string pad(static_cast<size_t>(w), ' ');
      const std::string& s = operand.str();
      std::string out;
      size_t start = 0;
      for (size_t i = 0;; ++i) {
        const size_t nl = s.find('\n', start);
        const std::string_view line =
            std::string_view(s).substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        if (i > 0) out += '\n';
        if (!((!indent_first && i == 0) || (!indent_blank && line.empty()))) {
          RETURN_IF_ERROR(Append(&out, pad));
        }
        RETURN_IF_ERROR(Append(&out, line));
        if (nl == std::string::npos) break;
        start = nl + 1;
      }
      return Value::String(std::move(out));
    }
    if (name == "replace") {
      std::vector<Value> call_args = args;
      call_args.push_back(Value::Kwargs(std::move(kwargs)));
      return CallStringMethod(operand, "replace", call_args);
    }
    return unknown("StringValue");
  }
  if (operand.is_object()) {
    if (ObjectMember(operand, name).type() == Type::kFunction) {
      if (!kwargs.empty()) args.push_back(Value::Kwargs(std::move(kwargs)));
      return CallObjectMethod(operand, name, args);
    }
    return unknown("ObjectValue");
  }
  return cannot_apply();
}

}  // namespace tandem::jinja
