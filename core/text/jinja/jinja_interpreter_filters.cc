// Interpreter's filters: x|name and x|name(...) (and {% filter %}
// blocks), as @huggingface/jinja applies them by the operand's type.
#include "core/text/jinja/jinja_interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

}  // namespace

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
