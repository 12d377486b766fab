// A Jinja template, parsed once and rendered as @huggingface/jinja (the
// renderer transformers.js uses for Hugging Face chat templates) renders
// it: byte for byte the same text, or an error where it fails.
//
// Supported: text, {{ }}, {# #}, whitespace control ({%- -%} {{- -}} {#- -#},
// trim_blocks and lstrip_blocks as transformers sets them), {% if/elif/else %},
// {% for %} (with `if` filters, tuple unpacking, else blocks, loop.index,
// index0, revindex, revindex0, first, last, length, previtem, nextitem),
// {% break %}, {% continue %}, {% set %} (names, tuples, ns.attr, blocks),
// {% macro %} (without varargs/kwargs), {% filter %} blocks; literals
// (strings, numbers, lists, tuples, dicts, true/false/none in both cases);
// `.attr`, `[key]`, slices (`[::-1]`), calls with keyword arguments and
// `*`/`**` unpacking; + - * / // % ** ~, comparisons, and/or/not, in/not in,
// `x if c else y`; the tests boolean callable odd even false true none string
// number integer iterable mapping sequence lower upper defined undefined; the
// filters safe tojson (indent, ensure_ascii, separators) list first last
// length reverse sort unique join string upper lower title capitalize trim
// indent int float abs items keys values dictsort bool default replace
// selectattr rejectattr map(attribute=) get; string methods upper lower strip
// lstrip rstrip title capitalize startswith endswith split replace; dict
// methods get items keys values dictsort; the globals namespace(),
// raise_exception(), range(), strftime_now().
//
// Semantics are @huggingface/jinja's, not Python Jinja's, where they
// differ: e.g. strip('\n') strips all whitespace, capitalize() leaves the
// rest of the string alone, lengths count UTF-16 units, `{% break %}` drops
// the output of the iteration it ends. Anything else (call blocks,
// include/extends, unknown filters, tests, functions or methods) is an
// InvalidArgumentError from Parse, naming the construct and its line.
//
// Thread safety: a JinjaTemplate is immutable once parsed; Render may be
// called from any number of threads at once.
#ifndef TANDEM_CORE_TEXT_JINJA_JINJA_TEMPLATE_H_
#define TANDEM_CORE_TEXT_JINJA_JINJA_TEMPLATE_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/text/jinja/jinja_ast.h"
#include "core/text/jinja/jinja_interpreter.h"
#include "core/text/jinja/jinja_value.h"
#include "nlohmann/json.hpp"

namespace tandem::jinja {

class JinjaTemplate {
 public:
  // Tokenizes and parses `source`; InvalidArgumentError("line N: ...") for
  // a syntax error or an unsupported construct.
  static absl::StatusOr<std::unique_ptr<JinjaTemplate>> Parse(std::string_view source,
                                                              Limits limits = Limits());

  // Renders with the entries of the JSON object `context` as variables, its
  // values converted as JSON.parse and @huggingface/jinja convert them
  // (whole numbers are integers, objects keep their key order, integer-like
  // keys first). raise_exception(msg) fails with InvalidArgumentError(msg);
  // other failures are InvalidArgumentError("line N: ...").
  absl::StatusOr<std::string> Render(const nlohmann::ordered_json& context) const;
  // The same with the variables already converted.
  absl::StatusOr<std::string> Render(const ValueMap& context) const;

  // A JSON value as @huggingface/jinja sees it.
  static absl::StatusOr<Value> FromJson(const nlohmann::ordered_json& json);

 private:
  JinjaTemplate(NodeList program, Limits limits)
      : program_(std::move(program)), limits_(limits) {}

  const NodeList program_;
  const Limits limits_;
};

}  // namespace tandem::jinja

#endif  // TANDEM_CORE_TEXT_JINJA_JINJA_TEMPLATE_H_
