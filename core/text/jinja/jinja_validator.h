// Internal to the parser (not a public header): the checks Parser::Parse
// runs on the whole parsed tree, after parsing it.
#ifndef TANDEM_CORE_TEXT_JINJA_JINJA_VALIDATOR_H_
#define TANDEM_CORE_TEXT_JINJA_JINJA_VALIDATOR_H_

#include "absl/status/status.h"
#include "core/text/jinja/jinja_ast.h"

namespace tandem::jinja {

// Rejects calls of unknown functions (neither global functions nor names
// the template assigns), calls of unsupported methods, and macros that read
// `varargs` or `kwargs` without declaring them: InvalidArgumentError
// naming the line.
absl::Status ValidateProgram(const NodeList& program);

}  // namespace tandem::jinja

#endif  // TANDEM_CORE_TEXT_JINJA_JINJA_VALIDATOR_H_
