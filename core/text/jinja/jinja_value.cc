#include "core/text/jinja/jinja_value.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/text/jinja/jinja_js.h"

namespace tandem::jinja {

Value Value::Null() {
  Value v;
  v.type_ = Type::kNull;
  return v;
}

Value Value::Bool(bool b) {
  Value v;
  v.type_ = Type::kBool;
  v.data_ = b;
  return v;
}

Value Value::Int(double n) {
  Value v;
  v.type_ = Type::kInt;
  v.data_ = n;
  return v;
}

Value Value::Float(double n) {
  Value v;
  v.type_ = Type::kFloat;
  v.data_ = n;
  return v;
}

Value Value::String(std::string s) {
  Value v;
  v.type_ = Type::kString;
  v.data_ = std::make_shared<const std::string>(std::move(s));
  return v;
}

Value Value::Array(std::vector<Value> items) {
  Value v;
  v.type_ = Type::kArray;
  for (const Value& item : items) v.depth_ = std::max(v.depth_, item.depth_);
  ++v.depth_;
  v.data_ = std::make_shared<const std::vector<Value>>(std::move(items));
  return v;
}

Value Value::Tuple(std::vector<Value> items) {
  Value v = Array(std::move(items));
  v.type_ = Type::kTuple;
  return v;
}

Value Value::Object(ValueMap map) {
  Value v;
  v.type_ = Type::kObject;
  for (const auto& entry : map.entries()) v.depth_ = std::max(v.depth_, entry.second.depth_);
  ++v.depth_;
  v.data_ = std::make_shared<ValueMap>(std::move(map));
  return v;
}

Value Value::Kwargs(ValueMap map) {
  Value v = Object(std::move(map));
  v.type_ = Type::kKwargs;
  return v;
}

Value Value::Namespace(ValueMap map) {
  Value v = Object(std::move(map));
  v.type_ = Type::kNamespace;
  v.depth_ = 1;
  return v;
}

Value Value::Callable(std::shared_ptr<const Function> fn) {
  Value v;
  v.type_ = Type::kFunction;
  v.depth_ = fn->receiver.depth_ + 1;
  v.data_ = std::move(fn);
  return v;
}

const char* Value::type_name() const {
  switch (type_) {
    case Type::kUndefined: return "UndefinedValue";
    case Type::kNull: return "NullValue";
    case Type::kBool: return "BooleanValue";
    case Type::kInt: return "IntegerValue";
    case Type::kFloat: return "FloatValue";
    case Type::kString: return "StringValue";
    case Type::kArray: return "ArrayValue";
    case Type::kTuple: return "TupleValue";
    case Type::kObject: return "ObjectValue";
    case Type::kKwargs: return "KeywordArgumentsValue";
    case Type::kNamespace: return "NamespaceValue";
    case Type::kFunction: return "FunctionValue";
  }
  return "?";
}

const void* Value::identity() const {
  if (const auto* p = std::get_if<ListPtr>(&data_)) return p->get();
  if (const auto* p = std::get_if<MapPtr>(&data_)) return p->get();
  if (const auto* p = std::get_if<FunctionPtr>(&data_)) return p->get();
  return nullptr;
}

const Value* ValueMap::Find(std::string_view key) const {
  const auto it = index_.find(absl::string_view(key.data(), key.size()));
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

void ValueMap::Set(std::string key, Value value) {
  const auto it = index_.find(key);
  if (it != index_.end()) {
    entries_[it->second].second = std::move(value);
    return;
  }
  index_.emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(value));
}

bool Truthy(const Value& v) {
  switch (v.type()) {
    case Value::Type::kUndefined:
    case Value::Type::kNull:
      return false;
    case Value::Type::kBool:
      return v.boolean();
    case Value::Type::kInt:
    case Value::Type::kFloat:
      return v.number() != 0 && !std::isnan(v.number());
    case Value::Type::kString:
      return !v.str().empty();
    case Value::Type::kArray:
    case Value::Type::kTuple:
      return !v.list().empty();
    case Value::Type::kObject:
    case Value::Type::kKwargs:
      return !v.map().empty();
    case Value::Type::kNamespace:  // !!Map: always true
    case Value::Type::kFunction:
      return true;
  }
  return false;
}

namespace {

absl::Status CannotPrintFunction() {
  return absl::InvalidArgumentError(
      "cannot turn a callable into a string (@huggingface/jinja prints JavaScript source)");
}

}  // namespace

namespace {

// About how many bytes `v` prints as, counting a shared part each time it
// appears; stops counting past `cap` (and past ToJson's depth).
uint64_t PrintedSize(const Value& v, uint64_t cap, int depth = 0) {
  if (depth > 257) return cap + 1;
  uint64_t n = 2;
  switch (v.type()) {
    case Value::Type::kString: return v.str().size() + 2;
    case Value::Type::kArray:
    case Value::Type::kTuple:
      for (const Value& item : v.list()) {
        n += 2 + PrintedSize(item, cap, depth + 1);
        if (n > cap) break;
      }
      return n;
    case Value::Type::kObject:
    case Value::Type::kKwargs:
    case Value::Type::kNamespace:
      for (const auto& [key, value] : v.map().entries()) {
        n += key.size() + 6 + PrintedSize(value, cap, depth + 1);
        if (n > cap) break;
      }
      return n;
    default: return 24;
  }
}

absl::Status CheckPrintedSize(const Value& v) {
  if (PrintedSize(v, kMaxBuiltStringBytes) <= kMaxBuiltStringBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("the value would print as more than ",
                                                 kMaxBuiltStringBytes >> 20, " MiB"));
}

}  // namespace

absl::StatusOr<std::string> ToDisplayString(const Value& v) {
  switch (v.type()) {
    case Value::Type::kUndefined: return std::string("undefined");
    case Value::Type::kNull: return std::string("null");
    case Value::Type::kBool: return std::string(v.boolean() ? "true" : "false");
    case Value::Type::kInt: return JsNumberToString(v.number());
    case Value::Type::kFloat: {
      const double x = v.number();
      if (x == 0 && std::signbit(x)) return std::string("-0.0");
      if (std::isfinite(x) && std::fmod(x, 1.0) == 0) return JsToFixed1(x);
      return JsNumberToString(x);
    }
    case Value::Type::kString: return v.str();
    case Value::Type::kArray:
    case Value::Type::kTuple:
    case Value::Type::kObject:
    case Value::Type::kKwargs:
    case Value::Type::kNamespace:
      return ToJson(v, JsonOptions(), /*undefined_as_null=*/false);
    case Value::Type::kFunction: return CannotPrintFunction();
  }
  return std::string();
}

absl::StatusOr<std::string> ToJsString(const Value& v) {
  if (v.is_list()) RETURN_IF_ERROR(CheckPrintedSize(v));
  switch (v.type()) {
    case Value::Type::kInt:
    case Value::Type::kFloat:
      return JsNumberToString(v.number());
    case Value::Type::kArray:
    case Value::Type::kTuple: {
      std::string out;
      bool first = true;
      for (const Value& item : v.list()) {
        if (!first) out += ',';
        first = false;
        ASSIGN_OR_RETURN(const std::string s, ToDisplayString(item));
        out += s;
      }
      return out;
    }
    case Value::Type::kObject:
    case Value::Type::kKwargs:
    case Value::Type::kNamespace:
      return std::string("[object Map]");
    default:
      return ToDisplayString(v);
  }
}

absl::StatusOr<std::string> ToJson(const Value& v, const JsonOptions& options,
                                   bool undefined_as_null, int depth) {
  const double indent = options.indent.value_or(0);
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  if (options.separators.has_value()) {
    item_separator = options.separators->first;
    key_separator = options.separators->second;
  } else if (indent != 0) {
    item_separator = ",";
  }
  switch (v.type()) {
    case Value::Type::kNull: return std::string("null");
    case Value::Type::kUndefined: return std::string(undefined_as_null ? "null" : "undefined");
    case Value::Type::kInt:
    case Value::Type::kFloat:
      return JsNumberToJson(v.number());
    case Value::Type::kBool: return std::string(v.boolean() ? "true" : "false");
    case Value::Type::kString: return JsonQuote(v.str(), options.ensure_ascii);
    case Value::Type::kArray:
    case Value::Type::kObject:
    case Value::Type::kNamespace: {
      if (depth == 0) RETURN_IF_ERROR(CheckPrintedSize(v));
      if (indent < 0 || indent > 1000 || std::isnan(indent)) {
        return absl::InvalidArgumentError(absl::StrCat("tojson: invalid indent ", indent));
      }
      if (depth > 256) return absl::InvalidArgumentError("tojson: values nest more than 256 deep");
      const std::string indent_value(static_cast<size_t>(indent), ' ');
      std::string base_padding = "\n";
      for (int i = 0; i < depth; ++i) base_padding += indent_value;
      const std::string children_padding = base_padding + indent_value;
      std::vector<std::string> core;
      if (v.type() == Value::Type::kArray) {
        for (const Value& item : v.list()) {
          ASSIGN_OR_RETURN(std::string s, ToJson(item, options, undefined_as_null, depth + 1));
          core.push_back(std::move(s));
        }
      } else {
        for (const auto& [key, value] : v.map().entries()) {
          ASSIGN_OR_RETURN(std::string s, ToJson(value, options, undefined_as_null, depth + 1));
          std::string entry = indent != 0 ? children_padding : std::string();
          absl::StrAppend(&entry, JsonQuote(key, options.ensure_ascii), key_separator, s);
          core.push_back(std::move(entry));
        }
      }
      const bool is_array = v.type() == Value::Type::kArray;
      std::string out(1, is_array ? '[' : '{');
      if (indent != 0 && !core.empty() && is_array) out += children_padding;
      const std::string joiner =
          is_array && indent != 0 ? item_separator + children_padding : item_separator;
      for (size_t i = 0; i < core.size(); ++i) {
        if (i > 0) out += joiner;
        out += core[i];
      }
      if (indent != 0 && !core.empty()) out += base_padding;
      out += is_array ? ']' : '}';
      return out;
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat("Cannot convert to JSON: ", v.type_name()));
  }
}

namespace {

enum class JsType { kUndefined, kNull, kBoolean, kNumber, kString, kObject };

JsType JsTypeOf(const Value& v) {
  switch (v.type()) {
    case Value::Type::kUndefined: return JsType::kUndefined;
    case Value::Type::kNull: return JsType::kNull;
    case Value::Type::kBool: return JsType::kBoolean;
    case Value::Type::kInt:
    case Value::Type::kFloat:
      return JsType::kNumber;
    case Value::Type::kString: return JsType::kString;
    default: return JsType::kObject;
  }
}

// A JavaScript primitive: what ToPrimitive leaves of a value.
struct Primitive {
  JsType type;
  bool boolean = false;
  double number = 0;
  std::string string;
};

}  // namespace

bool StrictEquals(const Value& a, const Value& b) {
  const JsType ta = JsTypeOf(a);
  if (ta != JsTypeOf(b)) return false;
  switch (ta) {
    case JsType::kUndefined:
    case JsType::kNull:
      return true;
    case JsType::kBoolean: return a.boolean() == b.boolean();
    case JsType::kNumber: return a.number() == b.number();
    case JsType::kString: return a.str() == b.str();
    case JsType::kObject: return a.identity() == b.identity();
  }
  return false;
}

bool SameValueZero(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number() && std::isnan(a.number()) && std::isnan(b.number())) {
    return true;
  }
  return StrictEquals(a, b);
}

bool LooseEquals(const Value& a, const Value& b) {
  const JsType ta = JsTypeOf(a);
  const JsType tb = JsTypeOf(b);
  if (ta == tb) return StrictEquals(a, b);
  const auto nullish = [](JsType t) { return t == JsType::kUndefined || t == JsType::kNull; };
  if (nullish(ta) || nullish(tb)) return nullish(ta) && nullish(tb);
  // Both are now booleans, numbers, strings or objects, of different types.
  const auto to_primitive = [](const Value& v, JsType t, Primitive* p) {
    p->type = t;
    switch (t) {
      case JsType::kBoolean: p->boolean = v.boolean(); return true;
      case JsType::kNumber: p->number = v.number(); return true;
      case JsType::kString: p->string = v.str(); return true;
      default: break;
    }
    if (v.type() == Value::Type::kFunction) return false;  // its source: never equal
    absl::StatusOr<std::string> s = ToJsString(v);
    if (!s.ok()) return false;
    p->type = JsType::kString;
    p->string = *std::move(s);
    return true;
  };
  Primitive pa, pb;
  if (!to_primitive(a, ta, &pa) || !to_primitive(b, tb, &pb)) return false;
  const auto to_number = [](const Primitive& p) {
    switch (p.type) {
      case JsType::kBoolean: return p.boolean ? 1.0 : 0.0;
      case JsType::kNumber: return p.number;
      default: return JsStringToNumber(p.string);
    }
  };
  if (pa.type == JsType::kString && pb.type == JsType::kString) return pa.string == pb.string;
  if (pa.type == pb.type && pa.type == JsType::kBoolean) return pa.boolean == pb.boolean;
  return to_number(pa) == to_number(pb);
}

}  // namespace tandem::jinja
