// How deeply a JSON text nests, counted before it is parsed: parsers and the
// code that walks their trees recurse on nesting, so untrusted JSON (a
// checkpoint's header, a tokenizer's files) is refused past a limit first.
#ifndef TANDEM_CORE_BASE_JSON_NESTING_DEPTH_H_
#define TANDEM_CORE_BASE_JSON_NESTING_DEPTH_H_

#include "absl/strings/string_view.h"

namespace tandem {

// How deeply the project's untrusted JSON inputs may nest.
inline constexpr int kMaxJsonNesting = 64;

// Returns the maximum nesting depth of arrays/objects in `json`, ignoring
// brackets inside string literals. Stops counting once `limit` is exceeded.
int JsonNestingDepth(absl::string_view json, int limit);

}  // namespace tandem

#endif  // TANDEM_CORE_BASE_JSON_NESTING_DEPTH_H_
