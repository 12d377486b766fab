// @huggingface/jinja's built-in tests, string and object methods and global
// functions, on evaluated values. (The filters, which evaluate their own
// arguments, are in the interpreter; they use these.)
#ifndef TANDEM_CORE_TEXT_JINJA_JINJA_BUILTINS_H_
#define TANDEM_CORE_TEXT_JINJA_JINJA_BUILTINS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/text/jinja/jinja_value.h"

namespace tandem::jinja {

// What the parser accepts: tests usable as `x is name`, filters usable as
// `x|name` (called = false) or `x|name(...)` (called = true), global
// functions, and methods (`x.name(...)`) of strings and objects.
bool IsKnownTest(std::string_view name);
bool IsKnownFilter(std::string_view name, bool called);
bool IsGlobalFunction(std::string_view name);
bool IsKnownMethod(std::string_view name);

// The global callables: namespace, raise_exception, range, strftime_now.
Value GlobalFunction(std::string_view name);

// `operand is name`; `arg` is the second operand selectattr passes
// (equalto/eq), or null.
absl::StatusOr<bool> RunTest(std::string_view name, const Value& operand, const Value* arg);

// `s.name` on a string: `length`, a bound method, or undefined.
Value StringMember(const Value& s, std::string_view name);
// The built-in `obj.name` of an object (get, items, keys, values, dictsort),
// or undefined.
Value ObjectMember(const Value& obj, std::string_view name);

// Calls a bound method with the call's arguments (keyword arguments, if
// any, are the last argument, a kKwargs value).
absl::StatusOr<Value> CallStringMethod(const Value& s, std::string_view name,
                                       const std::vector<Value>& args);
absl::StatusOr<Value> CallObjectMethod(const Value& obj, std::string_view name,
                                       const std::vector<Value>& args);

absl::StatusOr<Value> MakeNamespace(const std::vector<Value>& args);
// range(...): ResourceExhaustedError past `max_items` numbers.
absl::StatusOr<Value> Range(const std::vector<Value>& args, int64_t max_items);
// strftime_now(format): the local time, with %Y %m %d %b %B %H %M %%.
std::string StrftimeNow(std::string_view format);

// @huggingface/jinja's compareRuntimeValues, for sort and dictsort: <0, 0
// or >0, or an error for values it cannot compare.
absl::StatusOr<int> CompareValues(const Value& a, const Value& b, bool case_sensitive);
// getAttributeValue: "a.b.0" through objects, namespaces and arrays.
Value GetAttributeValue(const Value& item, std::string_view path);

// Array.prototype.join over the values' JavaScript values (null and
// undefined join as "").
absl::StatusOr<std::string> JsJoin(const std::vector<Value>& items, std::string_view separator);
// Whether v's JavaScript value is truthy (`!!v.value`: arrays, objects and
// namespaces always are).
bool JsTruthy(const Value& v);

// String.prototype filters: title (ASCII words) and capitalize (first
// UTF-16 unit upper-cased, the rest as is).
std::string TitleCase(std::string_view s);
std::string Capitalize(std::string_view s);

}  // namespace tandem::jinja

#endif  // TANDEM_CORE_TEXT_JINJA_JINJA_BUILTINS_H_
