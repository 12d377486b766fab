// Evaluates a parsed template, as @huggingface/jinja's Interpreter does:
// the same scoping (a for loop has one scope for all its iterations; if
// and set blocks share the enclosing one; macros see their caller's), the
// same coercions, truthiness and errors, and its filters.
#ifndef TANDEM_CORE_TEXT_JINJA_JINJA_INTERPRETER_H_
#define TANDEM_CORE_TEXT_JINJA_JINJA_INTERPRETER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/text/jinja/jinja_ast.h"
#include "core/text/jinja/jinja_value.h"

namespace tandem::jinja {

// Bounds on one rendering, against runaway templates. At the defaults a
// rendering needs at most about 0.5 MB of stack.
struct Limits {
  // The longest string (the output included) a rendering may build.
  size_t max_output_bytes = 16 << 20;
  // The deepest nesting of evaluation (recursive macros, nested blocks).
  int max_depth = 128;
  // How many expressions and statements a rendering may evaluate, plus the
  // items of the arrays it builds.
  int64_t max_steps = 5'000'000;
  // The deepest nesting of arrays and objects a rendering may build.
  uint32_t max_value_depth = 256;
};

// One rendering: make an Interpreter per Render call (it holds the state of
// that rendering); the program and limits are only read.
class Interpreter {
 public:
  explicit Interpreter(const Limits& limits) : limits_(limits) {}
  // Empties the namespaces the rendering made, which may refer to each
  // other (in cycles, or in chains too long to free recursively).
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // The text `program` renders to with `context`'s entries as variables. A
  // raise_exception(msg) call fails with InvalidArgumentError(msg); other
  // failures are InvalidArgumentError naming the template line.
  absl::StatusOr<std::string> Render(const NodeList& program, const ValueMap& context);

 private:
  class Scope;
  enum class Control { kNone, kBreak, kContinue };

  absl::StatusOr<Value> Eval(const Node* n, Scope* scope);
  absl::StatusOr<Value> EvalNode(const Node* n, Scope* scope);
  absl::StatusOr<std::string> EvalBlock(const NodeList& statements, Scope* scope);
  absl::StatusOr<Value> EvalMember(const Node* n, Scope* scope);
  absl::StatusOr<Value> EvalSlice(const Value& object, const Node* slice, Scope* scope);
  absl::StatusOr<Value> EvalCall(const Node* n, Scope* scope);
  absl::StatusOr<Value> CallFunction(const Value& fn, const std::vector<Value>& args,
                                     Scope* scope);
  absl::StatusOr<Value> CallMacro(const Node* macro, const std::vector<Value>& args,
                                  Scope* scope);
  absl::StatusOr<Value> EvalUnary(const Node* n, Scope* scope);
  absl::StatusOr<Value> EvalBinary(const Node* n, Scope* scope);
  absl::StatusOr<Value> EvalFor(const Node* n, Scope* scope);
  absl::StatusOr<Value> EvalSet(const Node* n, Scope* scope);
  absl::StatusOr<Value> EvalFilter(const Node* n, Scope* scope, bool allow_hole);
  absl::StatusOr<Value> ApplyFilter(const Value& operand, const Node* filter, Scope* scope,
                                    bool allow_hole);
  // The arguments of a call: positional (with *x unpacked) and keyword (with
  // **x unpacked); `first` is the index in `n->args` of the first argument.
  absl::Status EvalArguments(const Node* n, size_t first, Scope* scope,
                             std::vector<Value>* positional, ValueMap* kwargs);

  absl::Status Charge(int64_t steps);
  absl::Status CheckSize(size_t bytes) const;
  absl::Status Append(std::string* out, std::string_view s) const;

  const Limits& limits_;
  int depth_ = 0;
  int64_t steps_ = 0;
  Control control_ = Control::kNone;
  bool raised_ = false;  // the failure is raise_exception's
  int error_line_ = 0;   // the line of the innermost node that failed
  std::vector<Value> namespaces_;  // made by this rendering
};

}  // namespace tandem::jinja

#endif  // TANDEM_CORE_TEXT_JINJA_JINJA_INTERPRETER_H_
