// Writing random checkpoints in the Hugging Face layout (tests, benchmarks):
// the weights as one model.safetensors or as shards with
// model.safetensors.index.json, and the text files beside them.
#ifndef TANDEM_CORE_MODEL_CHECKPOINT_WRITER_H_
#define TANDEM_CORE_MODEL_CHECKPOINT_WRITER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tandem {

// Writes `named` (CPU tensors, any dtype) converted to `dtype` into `dir`
// (created if missing). max_shard_bytes > 0: shards
// model-0000i-of-0000n.safetensors of at most that many bytes each (a
// tensor larger than that gets a shard of its own) and the index;
// otherwise one model.safetensors. Metadata records the seed.
absl::Status WriteCheckpointTensors(const std::string& dir,
                                    const std::vector<std::pair<std::string, at::Tensor>>& named,
                                    at::ScalarType dtype, uint64_t seed,
                                    int64_t max_shard_bytes = 0);

// Creates `dir` when missing.
absl::Status MakeDirectory(const std::string& dir);
// Writes `text` to `path`, replacing it.
absl::Status WriteTextFile(const std::string& path, absl::string_view text);
// Copies the file `from` to `to`.
absl::Status CopyFile(const std::string& from, const std::string& to);
// The last component of `path` ("a/b/" -> "b").
std::string BaseName(std::string path);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CHECKPOINT_WRITER_H_
