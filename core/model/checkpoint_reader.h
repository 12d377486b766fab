// Tensors of a Hugging Face checkpoint directory: one model.safetensors, or
// shards listed by model.safetensors.index.json ("weight_map": name -> file).
#ifndef TANDEM_CORE_MODEL_CHECKPOINT_READER_H_
#define TANDEM_CORE_MODEL_CHECKPOINT_READER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "absl/status/statusor.h"
#include "core/checkpoint/safetensors_file.h"

namespace tandem {

// Owns the mapped files; immutable after Open, so const methods may be
// called from several threads. Tensors read are copies (the mappings can
// go once loading ends).
class CheckpointReader {
 public:
  // Opens `dir`/model.safetensors.index.json and every shard it names, or
  // else `dir`/model.safetensors. Errors name the file (missing, malformed
  // index, a shard that lacks a tensor the index puts there).
  static absl::StatusOr<std::unique_ptr<CheckpointReader>> Open(const std::string& dir);

  // The tensor `name` converted to `dtype` on `device`. Errors name the file
  // and tensor: missing, a shape other than `shape` (from config.json), or
  // not a floating-point type.
  absl::StatusOr<at::Tensor> Read(const std::string& name, const std::vector<int64_t>& shape,
                                  at::ScalarType dtype, at::Device device) const;
  bool Contains(const std::string& name) const;
  // What errors call the checkpoint: the index or the single file.
  const std::string& path() const { return path_; }

  // Reads one tensor of `file` (shape checked against `shape`).
  static absl::StatusOr<at::Tensor> ReadTensor(const SafetensorsFile& file,
                                               const SafetensorsTensor& info,
                                               const std::vector<int64_t>& shape,
                                               at::ScalarType dtype, at::Device device);

 private:
  CheckpointReader() = default;

  std::string path_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const SafetensorsFile*> where_;  // tensor name -> its file
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CHECKPOINT_READER_H_
