#include "core/engine/pipeline.h"

namespace tandem {

bool AbslParseFlag(absl::string_view text, Pipeline* pipeline, std::string* error) {
  if (text == "sync") {
    *pipeline = Pipeline::kSync;
  } else if (text == "double_buffered") {
    *pipeline = Pipeline::kDoubleBuffered;
  } else {
    *error = "expected sync or double_buffered";
    return false;
  }
  return true;
}

std::string AbslUnparseFlag(Pipeline pipeline) {
  return pipeline == Pipeline::kSync ? "sync" : "double_buffered";
}

}  // namespace tandem
