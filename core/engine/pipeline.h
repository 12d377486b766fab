// How the engine overlaps steps; a command-line flag type (--pipeline).
#ifndef TANDEM_CORE_ENGINE_PIPELINE_H_
#define TANDEM_CORE_ENGINE_PIPELINE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tandem {

enum class Pipeline {
  kSync,            // "sync": wait for every step before launching the next
  kDoubleBuffered,  // "double_buffered": launch step i+1 before reading step i
};

// Abseil flag parsing: "sync" or "double_buffered".
bool AbslParseFlag(absl::string_view text, Pipeline* pipeline, std::string* error);
std::string AbslUnparseFlag(Pipeline pipeline);

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_PIPELINE_H_
