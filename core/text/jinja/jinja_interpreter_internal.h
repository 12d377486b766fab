// Internal to the interpreter (not a public header): what the files that
// define Interpreter's members share. The interpreter's members are spread
// over several files by job:
//   jinja_interpreter.cc              rendering, the step/size/depth limits,
//                                     blocks and the node dispatch
//   jinja_interpreter_expressions.cc  member access, slices, unary and
//                                     binary operators
//   jinja_interpreter_calls.cc        call arguments, functions and macros
//   jinja_interpreter_statements.cc   {% for %} and {% set %}
//   jinja_interpreter_filters.cc      filters (x|name, x|name(...))
#ifndef TANDEM_CORE_TEXT_JINJA_JINJA_INTERPRETER_INTERNAL_H_
#define TANDEM_CORE_TEXT_JINJA_JINJA_INTERPRETER_INTERNAL_H_

#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "core/text/jinja/jinja_builtins.h"
#include "core/text/jinja/jinja_interpreter.h"
#include "core/text/jinja/jinja_value.h"

namespace tandem::jinja {
namespace interpreter_internal {

// The interpreter's failures: InvalidArgumentError(message) (Render adds
// the template line).
inline absl::Status Error(std::string_view message) {
  return absl::InvalidArgumentError(std::string(message));
}

}  // namespace interpreter_internal

// The variables of one scope, and the scope it is nested in.
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

}  // namespace tandem::jinja

#endif  // TANDEM_CORE_TEXT_JINJA_JINJA_INTERPRETER_INTERNAL_H_
