// Interpreter's expression operators: member access (x.name, x[i]),
// slices (x[a:b:c]), unary (not, -, +) and binary operators.
#include "core/text/jinja/jinja_interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
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
using Type = Value::Type;

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

}  // namespace tandem::jinja
