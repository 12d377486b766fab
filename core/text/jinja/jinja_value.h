// A value at template run time, with @huggingface/jinja's types and
// semantics: undefined, null, booleans, integers and floats (both JavaScript
// doubles), strings, arrays and tuples, objects (insertion-ordered maps),
// keyword-argument maps, namespaces and callables.
#ifndef TANDEM_CORE_TEXT_JINJA_JINJA_VALUE_H_
#define TANDEM_CORE_TEXT_JINJA_JINJA_VALUE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace tandem::jinja {

class ValueMap;
struct Node;

// What a callable value calls: a global function, a method bound to the
// string or object it was read from, or a macro.
struct Function;

class Value {
 public:
  // The names are @huggingface/jinja's, which its error messages use.
  enum class Type {
    kUndefined,
    kNull,
    kBool,
    kInt,
    kFloat,
    kString,
    kArray,
    kTuple,
    kObject,
    kKwargs,  // keyword arguments passed to a callable: an object
    kNamespace,
    kFunction,
  };

  Value() = default;  // undefined
  static Value Null();
  static Value Bool(bool b);
  static Value Int(double n);
  static Value Float(double n);
  static Value String(std::string s);
  static Value Array(std::vector<Value> items);
  static Value Tuple(std::vector<Value> items);
  static Value Object(ValueMap map);
  static Value Kwargs(ValueMap map);
  static Value Namespace(ValueMap map);
  static Value Callable(std::shared_ptr<const Function> fn);

  Type type() const { return type_; }
  // "IntegerValue", "StringValue", ...: @huggingface/jinja's type names.
  const char* type_name() const;
  bool is_undefined() const { return type_ == Type::kUndefined; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_number() const { return type_ == Type::kInt || type_ == Type::kFloat; }
  // Arrays and tuples (a tuple is an array to everything but its type name).
  bool is_list() const { return type_ == Type::kArray || type_ == Type::kTuple; }
  // Objects and keyword-argument maps (not namespaces).
  bool is_object() const { return type_ == Type::kObject || type_ == Type::kKwargs; }

  bool boolean() const { return std::get<bool>(data_); }
  double number() const { return std::get<double>(data_); }
  const std::string& str() const { return *std::get<StringPtr>(data_); }
  const std::vector<Value>& list() const { return *std::get<ListPtr>(data_); }
  // Objects, keyword arguments and namespaces.
  const ValueMap& map() const { return *std::get<MapPtr>(data_); }
  // A namespace's attributes, which `{% set ns.x = ... %}` changes; every
  // copy of the value shares them.
  ValueMap& mutable_map() const { return *std::get<MapPtr>(data_); }
  const Function& function() const { return *std::get<FunctionPtr>(data_); }

  // The identity of an array, map or callable (JavaScript compares these by
  // reference); nullptr for the others.
  const void* identity() const;

  // How deeply arrays and objects nest in the value: 0 for scalars, 1 for
  // an array of scalars, .... A namespace counts 1 whatever it holds (its
  // attributes change after it is made).
  uint32_t depth() const { return depth_; }

 private:
  using StringPtr = std::shared_ptr<const std::string>;
  using ListPtr = std::shared_ptr<const std::vector<Value>>;
  using MapPtr = std::shared_ptr<ValueMap>;
  using FunctionPtr = std::shared_ptr<const Function>;

  Type type_ = Type::kUndefined;
  uint32_t depth_ = 0;
  std::variant<std::monostate, bool, double, StringPtr, ListPtr, MapPtr, FunctionPtr> data_;
};

// A string-keyed map that keeps its keys in insertion order.
class ValueMap {
 public:
  const Value* Find(std::string_view key) const;
  // Replaces the value of an existing key in place, or appends the key.
  void Set(std::string key, Value value);
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, Value>> entries_;
  absl::flat_hash_map<std::string, size_t> index_;
};

struct Function {
  enum class Kind {
    kNamespace,       // namespace(...)
    kRaiseException,  // raise_exception(message)
    kRange,           // range(stop) / range(start, stop[, step])
    kStrftimeNow,     // strftime_now(format)
    kStringMethod,    // "abc".upper() etc.: `name` on `receiver`
    kObjectMethod,    // dict.items() etc.: `name` on `receiver`
    kMacro,           // {% macro name(...) %}: `macro` is its node
  };
  Kind kind;
  std::string name;
  Value receiver;
  const Node* macro = nullptr;
};

// Python-like truthiness as @huggingface/jinja defines it: false, 0, NaN, "",
// empty arrays and objects, null and undefined are false; namespaces and
// callables are true.
bool Truthy(const Value& v);

// The longest string one operation (printing a value, replace()) builds:
// the rendering's own limit (Limits::max_output_bytes) checks only what an
// operation returns, and a value whose parts are shared ([a, a] doubled 40
// times) prints far longer than it is big. Past it, an error.
inline constexpr size_t kMaxBuiltStringBytes = 64 << 20;

// How `{{ v }}` prints v (RuntimeValue.toString): floats with a fractional
// part or ".0", arrays and objects as JSON, undefined as "undefined".
absl::StatusOr<std::string> ToDisplayString(const Value& v);

// String(v.value): how `~` and `+` turn v into a string: numbers without
// ".0", arrays as their elements' display strings joined by ",", objects as
// "[object Map]".
absl::StatusOr<std::string> ToJsString(const Value& v);

// @huggingface/jinja's toJSON.
struct JsonOptions {
  std::optional<double> indent;  // unset or 0: one line
  bool ensure_ascii = false;
  std::optional<std::pair<std::string, std::string>> separators;  // item, key
};
absl::StatusOr<std::string> ToJson(const Value& v, const JsonOptions& options,
                                   bool undefined_as_null = true, int depth = 0);

// JavaScript's `a.value == b.value` (with type coercion), `===`, and the
// SameValueZero a Set uses.
bool LooseEquals(const Value& a, const Value& b);
bool StrictEquals(const Value& a, const Value& b);
bool SameValueZero(const Value& a, const Value& b);

}  // namespace tandem::jinja

#endif  // TANDEM_CORE_TEXT_JINJA_JINJA_VALUE_H_
