#include "core/text/jinja/jinja_builtins.h"

#include <cmath>
#include <ctime>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/text/jinja/jinja_js.h"

namespace tandem::jinja {
namespace {

absl::Status Error(std::string_view message) {
  return absl::InvalidArgumentError(std::string(message));
}

bool IsAttributeContainer(const Value& v) {
  return v.is_object() || v.type() == Value::Type::kNamespace;
}

bool IsNumericLike(const Value& v) {
  return v.is_number() || v.type() == Value::Type::kBool;
}

double NumericValue(const Value& v) {
  return v.type() == Value::Type::kBool ? (v.boolean() ? 1 : 0) : v.number();
}

Value Method(Function::Kind kind, std::string_view name, const Value& receiver) {
  auto fn = std::make_shared<Function>();
  fn->kind = kind;
  fn->name = std::string(name);
  fn->receiver = receiver;
  return Value::Callable(std::move(fn));
}

// The arguments of a string-pattern method: a string, or an array of
// strings (startswith/endswith).
absl::StatusOr<bool> MatchAffix(const std::string& s, const std::vector<Value>& args,
                                bool prefix) {
  const char* name = prefix ? "startswith" : "endswith";
  const auto matches = [&](const std::string& p) {
    return p.size() <= s.size() &&
           (prefix ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0);
  };
  if (args.empty()) return Error(absl::StrCat(name, "() requires at least one argument"));
  const Value& pattern = args[0];
  if (pattern.is_string()) return matches(pattern.str());
  if (pattern.is_list()) {
    for (const Value& item : pattern.list()) {
      if (!item.is_string()) return Error(absl::StrCat(name, "() tuple elements must be strings"));
      if (matches(item.str())) return true;
    }
    return false;
  }
  return Error(absl::StrCat(name, "() argument must be a string or tuple of strings"));
}

absl::StatusOr<Value> Split(const std::string& s, const std::vector<Value>& args) {
  const Value sep = args.size() > 0 ? args[0] : Value::Null();
  if (!sep.is_string() && !sep.is_null()) return Error("sep argument must be a string or null");
  const Value maxsplit_value = args.size() > 1 ? args[1] : Value::Int(-1);
  if (maxsplit_value.type() != Value::Type::kInt) {
    return Error("maxsplit argument must be a number");
  }
  const double maxsplit = maxsplit_value.number();
  std::vector<Value> result;
  if (sep.is_null()) {
    const std::string_view text = JsTrimStart(s);
    size_t i = 0;
    while (i < text.size()) {
      while (size_t n = JsSpaceLength(text, i)) i += n;
      if (i >= text.size()) break;
      const size_t start = i;
      while (i < text.size() && JsSpaceLength(text, i) == 0) {
        size_t j = i;
        DecodeUtf8(text, &j);
        i = j;
      }
      if (maxsplit != -1 && static_cast<double>(result.size()) >= maxsplit) {
        result.push_back(Value::String(std::string(text.substr(start))));
        break;
      }
      result.push_back(Value::String(std::string(text.substr(start, i - start))));
    }
    return Value::Array(std::move(result));
  }
  const std::string& separator = sep.str();
  if (separator.empty()) return Error("empty separator");
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(separator, start);
    if (at == std::string::npos) break;
    parts.push_back(s.substr(start, at - start));
    start = at + separator.size();
  }
  parts.push_back(s.substr(start));
  if (maxsplit != -1 && static_cast<double>(parts.size()) > maxsplit) {
    // result.push(result.splice(maxsplit).join(sep))
    const double len = static_cast<double>(parts.size());
    const double from = maxsplit < 0 ? std::max(len + maxsplit, 0.0) : std::min(maxsplit, len);
    const size_t cut = static_cast<size_t>(from);
    std::string rest;
    for (size_t k = cut; k < parts.size(); ++k) {
      if (k > cut) rest += separator;
      rest += parts[k];
    }
    parts.resize(cut);
    parts.push_back(std::move(rest));
  }
  for (std::string& p : parts) result.push_back(Value::String(std::move(p)));
  return Value::Array(std::move(result));
}

absl::StatusOr<Value> Replace(const std::string& s, const std::vector<Value>& args) {
  if (args.size() < 2) return Error("replace() requires at least two arguments");
  const Value& old_value = args[0];
  const Value& new_value = args[1];
  if (!old_value.is_string() || !new_value.is_string()) {
    return Error("replace() arguments must be strings");
  }
  Value count = Value::Null();
  if (args.size() > 2) {
    if (args[2].type() == Value::Type::kKwargs) {
      const Value* c = args[2].map().Find("count");
      if (c != nullptr) count = *c;
    } else {
      count = args[2];
    }
  }
  if (count.type() != Value::Type::kInt && !count.is_null()) {
    return Error("replace() count argument must be a number or null");
  }
  if (count.type() == Value::Type::kInt && count.number() == 0) return Value::String(s);
  double remaining = count.is_null() || count.number() < 0 ? INFINITY : count.number();
  const std::string& from = old_value.str();
  const std::string& to = new_value.str();
  std::string out;
  auto too_long = [&out] { return out.size() > kMaxBuiltStringBytes; };
  auto too_long_error = [] {
    return absl::InvalidArgumentError(
        absl::StrCat("replace() would build more than ", kMaxBuiltStringBytes >> 20, " MiB"));
  };
  if (from.empty()) {
    // /(?=)/gu: an empty match before every code point and at the end.
    size_t i = 0;
    while (true) {
      if (remaining > 0) {
        out += to;
        --remaining;
      }
      if (too_long()) return too_long_error();
      if (i >= s.size()) break;
      const size_t begin = i;
      DecodeUtf8(s, &i);
      out.append(s, begin, i - begin);
    }
    return Value::String(std::move(out));
  }
  size_t start = 0;
  while (remaining > 0) {
    const size_t at = s.find(from, start);
    if (at == std::string::npos) break;
    out.append(s, start, at - start);
    out += to;
    if (too_long()) return too_long_error();
    start = at + from.size();
    --remaining;
  }
  out.append(s, start, std::string::npos);
  return Value::String(std::move(out));
}

absl::StatusOr<Value> DictSort(const Value& obj, const std::vector<Value>& args) {
  ValueMap kwargs;
  std::vector<Value> positional;
  for (const Value& a : args) {
    if (a.type() == Value::Type::kKwargs) {
      kwargs = a.map();
    } else {
      positional.push_back(a);
    }
  }
  const auto option = [&](size_t i, std::string_view key, Value fallback) {
    if (i < positional.size()) return positional[i];
    if (const Value* v = kwargs.Find(key)) return *v;
    return fallback;
  };
  const Value case_sensitive = option(0, "case_sensitive", Value::Bool(false));
  if (case_sensitive.type() != Value::Type::kBool) return Error("case_sensitive must be a boolean");
  const Value by = option(1, "by", Value::String("key"));
  if (!by.is_string()) return Error("by must be a string");
  if (by.str() != "key" && by.str() != "value") return Error("by must be either 'key' or 'value'");
  const Value reverse = option(2, "reverse", Value::Bool(false));
  if (reverse.type() != Value::Type::kBool) return Error("reverse must be a boolean");
  std::vector<std::pair<Value, Value>> items;
  for (const auto& [key, value] : obj.map().entries()) {
    items.emplace_back(Value::String(key), value);
  }
  const bool by_key = by.str() == "key";
  absl::Status error;
  std::stable_sort(items.begin(), items.end(), [&](const auto& a, const auto& b) {
    if (!error.ok()) return false;
    absl::StatusOr<int> c = CompareValues(by_key ? a.first : a.second, by_key ? b.first : b.second,
                                          case_sensitive.boolean());
    if (!c.ok()) {
      error = c.status();
      return false;
    }
    return (reverse.boolean() ? -*c : *c) < 0;
  });
  RETURN_IF_ERROR(error);
  std::vector<Value> out;
  for (auto& [k, v] : items) out.push_back(Value::Array({std::move(k), std::move(v)}));
  return Value::Array(std::move(out));
}

Value Items(const Value& obj) {
  std::vector<Value> out;
  for (const auto& [key, value] : obj.map().entries()) {
    out.push_back(Value::Array({Value::String(key), value}));
  }
  return Value::Array(std::move(out));
}

}  // namespace

bool IsKnownTest(std::string_view name) {
  static const auto* const kTests = new absl::flat_hash_set<std::string_view>{
      "boolean", "callable", "odd",      "even",     "false",    "true",  "none",
      "string",  "number",   "integer",  "iterable", "mapping",  "sequence",
      "lower",   "upper",    "defined",  "undefined"};
  return kTests->contains(name);
}

bool IsKnownFilter(std::string_view name, bool called) {
  static const auto* const kPlain = new absl::flat_hash_set<std::string_view>{
      "safe",  "tojson", "list",  "first",      "last",   "length", "reverse", "sort", "join",
      "string", "unique", "upper", "lower",     "title",  "capitalize", "trim", "indent",
      "int",   "float",  "abs",   "items",      "bool",   "keys",   "values",  "dictsort"};
  static const auto* const kCalled = new absl::flat_hash_set<std::string_view>{
      "tojson", "join",   "int",  "float", "default", "sort",  "selectattr", "rejectattr",
      "map",    "indent", "replace", "get", "items",  "keys",  "values",     "dictsort"};
  return (called ? kCalled : kPlain)->contains(name);
}

bool IsGlobalFunction(std::string_view name) {
  return name == "namespace" || name == "raise_exception" || name == "range" ||
         name == "strftime_now";
}

bool IsKnownMethod(std::string_view name) {
  static const auto* const kMethods = new absl::flat_hash_set<std::string_view>{
      "upper",    "lower",  "strip", "title", "capitalize", "rstrip", "lstrip", "startswith",
      "endswith", "split",  "replace", "get", "items",      "keys",   "values", "dictsort"};
  return kMethods->contains(name);
}

Value GlobalFunction(std::string_view name) {
  auto fn = std::make_shared<Function>();
  fn->name = std::string(name);
  if (name == "namespace") {
    fn->kind = Function::Kind::kNamespace;
  } else if (name == "raise_exception") {
    fn->kind = Function::Kind::kRaiseException;
  } else if (name == "range") {
    fn->kind = Function::Kind::kRange;
  } else {
    fn->kind = Function::Kind::kStrftimeNow;
  }
  return Value::Callable(std::move(fn));
}

absl::StatusOr<bool> RunTest(std::string_view name, const Value& operand, const Value* arg) {
  using Type = Value::Type;
  const Type t = operand.type();
  if (name == "boolean") return t == Type::kBool;
  if (name == "callable") return t == Type::kFunction;
  if (name == "odd" || name == "even") {
    if (t != Type::kInt) return Error(absl::StrCat("cannot ", std::string(name), " on ", operand.type_name()));
    const double r = std::fmod(operand.number(), 2);
    return name == "odd" ? r != 0 : r == 0;
  }
  if (name == "false") return t == Type::kBool && !operand.boolean();
  if (name == "true") return t == Type::kBool && operand.boolean();
  if (name == "none") return t == Type::kNull;
  if (name == "string") return t == Type::kString;
  if (name == "number") return operand.is_number();
  if (name == "integer") return t == Type::kInt;
  if (name == "iterable") return t == Type::kArray || t == Type::kString;
  if (name == "mapping") return operand.is_object();
  if (name == "sequence") return operand.is_list() || operand.is_object() || t == Type::kString;
  if (name == "lower") return t == Type::kString && operand.str() == JsToLower(operand.str());
  if (name == "upper") return t == Type::kString && operand.str() == JsToUpper(operand.str());
  if (name == "defined") return t != Type::kUndefined;
  if (name == "undefined") return t == Type::kUndefined;
  if (name == "equalto" || name == "eq") {
    if (arg == nullptr) return Error(absl::StrCat("test ", std::string(name), " needs a value to compare"));
    return StrictEquals(operand, *arg);
  }
  return Error(absl::StrCat("Unknown test: ", std::string(name)));
}

Value StringMember(const Value& s, std::string_view name) {
  if (name == "length") return Value::Int(static_cast<double>(Utf16Length(s.str())));
  static const auto* const kMethods = new absl::flat_hash_set<std::string_view>{
      "upper",      "lower",  "strip",  "title",      "capitalize", "rstrip",
      "lstrip",     "startswith", "endswith", "split", "replace"};
  if (!kMethods->contains(name)) return Value();
  return Method(Function::Kind::kStringMethod, name, s);
}

Value ObjectMember(const Value& obj, std::string_view name) {
  if (name != "get" && name != "items" && name != "keys" && name != "values" &&
      name != "dictsort") {
    return Value();
  }
  return Method(Function::Kind::kObjectMethod, name, obj);
}

absl::StatusOr<Value> CallStringMethod(const Value& receiver, std::string_view name,
                                       const std::vector<Value>& args) {
  const std::string& s = receiver.str();
  if (name == "upper") return Value::String(JsToUpper(s));
  if (name == "lower") return Value::String(JsToLower(s));
  // @huggingface/jinja ignores strip/lstrip/rstrip's argument: they always
  // remove whitespace.
  if (name == "strip") return Value::String(std::string(JsTrim(s)));
  if (name == "rstrip") return Value::String(std::string(JsTrimEnd(s)));
  if (name == "lstrip") return Value::String(std::string(JsTrimStart(s)));
  if (name == "title") return Value::String(TitleCase(s));
  if (name == "capitalize") return Value::String(Capitalize(s));
  if (name == "startswith" || name == "endswith") {
    ASSIGN_OR_RETURN(const bool b, MatchAffix(s, args, name == "startswith"));
    return Value::Bool(b);
  }
  if (name == "split") return Split(s, args);
  if (name == "replace") return Replace(s, args);
  return Error(absl::StrCat("unknown string method ", std::string(name)));
}

absl::StatusOr<Value> CallObjectMethod(const Value& obj, std::string_view name,
                                       const std::vector<Value>& args) {
  if (name == "get") {
    if (args.empty() || !args[0].is_string()) {
      return Error(absl::StrCat("Object key must be a string: got ",
                                args.empty() ? "UndefinedValue" : args[0].type_name()));
    }
    if (const Value* v = obj.map().Find(args[0].str())) return *v;
    return args.size() > 1 ? args[1] : Value::Null();
  }
  if (name == "items") return Items(obj);
  if (name == "keys") {
    std::vector<Value> out;
    for (const auto& entry : obj.map().entries()) out.push_back(Value::String(entry.first));
    return Value::Array(std::move(out));
  }
  if (name == "values") {
    std::vector<Value> out;
    for (const auto& entry : obj.map().entries()) out.push_back(entry.second);
    return Value::Array(std::move(out));
  }
  if (name == "dictsort") return DictSort(obj, args);
  return Error(absl::StrCat("unknown object method ", std::string(name)));
}

absl::StatusOr<Value> MakeNamespace(const std::vector<Value>& args) {
  std::vector<Value> positional = args;
  ValueMap kwargs;
  bool has_kwargs = false;
  if (!positional.empty() && positional.back().type() == Value::Type::kKwargs) {
    kwargs = positional.back().map();
    has_kwargs = true;
    positional.pop_back();
  }
  if (positional.size() > 1) {
    return Error(absl::StrCat("namespace expected at most 1 argument, got ", positional.size()));
  }
  ValueMap entries;
  if (positional.size() == 1) {
    const Value& source = positional[0];
    if (source.is_object()) {
      for (const auto& [key, value] : source.map().entries()) entries.Set(key, value);
    } else if (source.is_list()) {
      for (const Value& pair : source.list()) {
        std::vector<Value> values;
        if (pair.is_list()) {
          values = pair.list();
        } else if (pair.is_string()) {
          for (std::string& c : SplitCodePoints(pair.str())) values.push_back(Value::String(std::move(c)));
        }
        if (values.size() != 2) {
          return Error("namespace expected an object or an iterable of [key, value] pairs");
        }
        if (!values[0].is_string()) return Error("namespace keys must be strings");
        entries.Set(values[0].str(), values[1]);
      }
    } else {
      return Error(absl::StrCat("'", source.type_name(), "' object is not iterable"));
    }
  }
  if (has_kwargs) {
    for (const auto& [key, value] : kwargs.entries()) entries.Set(key, value);
  }
  return Value::Namespace(std::move(entries));
}

absl::StatusOr<Value> Range(const std::vector<Value>& args, int64_t max_items) {
  std::vector<double> n;
  for (const Value& a : args) {
    if (!a.is_number()) return Error("range() arguments must be numbers");
    n.push_back(a.number());
  }
  if (n.empty()) return Value::Array({});
  double start = n[0];
  double stop = 0;
  if (n.size() == 1) {
    stop = start;
    start = 0;
  } else {
    stop = n[1];
  }
  const double step = n.size() > 2 ? n[2] : 1;
  if (step == 0) return Error("range() step must not be zero");
  std::vector<Value> out;
  const auto push = [&](double i) -> absl::Status {
    if (static_cast<int64_t>(out.size()) >= max_items) {
      return absl::ResourceExhaustedError(absl::StrCat("range() of more than ", max_items, " items"));
    }
    out.push_back(std::floor(i) == i ? Value::Int(i) : Value::Float(i));
    return absl::OkStatus();
  };
  if (step > 0) {
    for (double i = start; i < stop; i += step) RETURN_IF_ERROR(push(i));
  } else {
    for (double i = start; i > stop; i += step) RETURN_IF_ERROR(push(i));
  }
  return Value::Array(std::move(out));
}

std::string StrftimeNow(std::string_view format) {
  static constexpr const char* kMonths[] = {"January", "February", "March",     "April",
                                            "May",     "June",     "July",      "August",
                                            "September", "October", "November", "December"};
  static constexpr const char* kShortMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  const auto pad2 = [](int n) { return n < 10 ? absl::StrCat("0", n) : absl::StrCat(n); };
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 >= format.size()) {
      out += format[i];
      continue;
    }
    const char c = format[i + 1];
    switch (c) {
      case 'Y': out += absl::StrCat(tm.tm_year + 1900); break;
      case 'm': out += pad2(tm.tm_mon + 1); break;
      case 'd': out += pad2(tm.tm_mday); break;
      case 'b': out += kShortMonths[tm.tm_mon]; break;
      case 'B': out += kMonths[tm.tm_mon]; break;
      case 'H': out += pad2(tm.tm_hour); break;
      case 'M': out += pad2(tm.tm_min); break;
      case '%': out += '%'; break;
      default:
        out += '%';
        continue;  // not a directive: the next character is copied as is
    }
    ++i;
  }
  return out;
}

absl::StatusOr<int> CompareValues(const Value& a, const Value& b, bool case_sensitive) {
  const auto cannot = [&] {
    return Error(absl::StrCat("Cannot compare ", a.type_name(), " with ", b.type_name()));
  };
  if (a.is_null() && b.is_null()) return 0;
  if (a.is_null() || b.is_null()) return cannot();
  if (a.is_undefined() && b.is_undefined()) return 0;
  if (a.is_undefined() || b.is_undefined()) return cannot();
  if (IsNumericLike(a) && IsNumericLike(b)) {
    const double x = NumericValue(a);
    const double y = NumericValue(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.type() != b.type()) {
    return Error(absl::StrCat("Cannot compare different types: ", a.type_name(), " and ",
                              b.type_name()));
  }
  if (a.is_string()) {
    const int c = case_sensitive ? CompareUtf16(a.str(), b.str())
                                 : CompareUtf16(JsToLower(a.str()), JsToLower(b.str()));
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  return Error(absl::StrCat("Cannot compare type: ", a.type_name()));
}

Value GetAttributeValue(const Value& item, std::string_view path) {
  Value value = item;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string_view part =
        path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (IsAttributeContainer(value)) {
      const Value* v = value.map().Find(part);
      value = v != nullptr ? *v : Value();
    } else if (value.is_list()) {
      const double index = JsParseInt(part);
      if (!std::isnan(index) && index >= 0 && index < static_cast<double>(value.list().size())) {
        value = Value(value.list()[static_cast<size_t>(index)]);
      } else {
        return Value();
      }
    } else {
      return Value();
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return value;
}

absl::StatusOr<std::string> JsJoin(const std::vector<Value>& items, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    if (items[i].is_null() || items[i].is_undefined()) continue;
    ASSIGN_OR_RETURN(const std::string s, ToJsString(items[i]));
    out += s;
  }
  return out;
}

bool JsTruthy(const Value& v) {
  switch (v.type()) {
    case Value::Type::kArray:
    case Value::Type::kTuple:
    case Value::Type::kObject:
    case Value::Type::kKwargs:
    case Value::Type::kNamespace:
    case Value::Type::kFunction:
      return true;
    default:
      return Truthy(v);
  }
}

std::string TitleCase(std::string_view s) {
  std::string out(s);
  const auto is_word = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  for (size_t i = 0; i < out.size(); ++i) {
    if (is_word(out[i]) && (i == 0 || !is_word(out[i - 1])) && out[i] >= 'a' && out[i] <= 'z') {
      out[i] = static_cast<char>(out[i] - 32);
    }
  }
  return out;
}

std::string Capitalize(std::string_view s) {
  if (s.empty()) return std::string();
  size_t i = 0;
  const char32_t first = DecodeUtf8(s, &i);
  if (first >= 0x10000) return std::string(s);  // charAt(0) is half a surrogate pair
  return JsToUpper(s.substr(0, i)) + std::string(s.substr(i));
}

}  // namespace tandem::jinja
