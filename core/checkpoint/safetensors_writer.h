// Writer for huggingface .safetensors files.

#ifndef TANDEM_CORE_CHECKPOINT_SAFETENSORS_WRITER_H_
#define TANDEM_CORE_CHECKPOINT_SAFETENSORS_WRITER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/checkpoint/safetensors_dtype.h"

namespace tandem {

// Collects tensors (copying their bytes) and metadata in memory, then
// serializes them in the reference layout: 8-byte little-endian header length
// N, a compact JSON header ("__metadata__" first when non-empty, then tensors
// sorted by name, each as {"dtype","shape","data_offsets"}) padded with
// spaces so that N is a multiple of 8, then the tensor bytes laid out
// contiguously in name order.
//
// Owns copies of everything added. Not thread-safe for mutation (SetMetadata,
// Add); concurrent calls to const methods are safe.
class SafetensorsWriter {
 public:
  SafetensorsWriter() = default;
  SafetensorsWriter(const SafetensorsWriter&) = delete;
  SafetensorsWriter& operator=(const SafetensorsWriter&) = delete;

  // Sets (or replaces) one "__metadata__" entry. Keys and values must be valid
  // UTF-8; otherwise Serialize()/WriteFile() fail.
  void SetMetadata(std::string key, std::string value);

  // Adds a tensor, copying `bytes`. InvalidArgument when `name` is a
  // duplicate, "__metadata__" or not valid UTF-8, when a dimension is
  // negative or the size overflows, or when bytes.size() !=
  // product(shape) * SafetensorsDTypeSize(dtype).
  absl::Status Add(std::string name, SafetensorsDType dtype,
                   std::vector<int64_t> shape, absl::string_view bytes);

  // Returns the padded JSON header (without the 8-byte length prefix).
  absl::StatusOr<std::string> SerializeHeader() const;

  // Returns the complete file image.
  absl::StatusOr<std::string> Serialize() const;

  // Writes the file image to `path` atomically: a temporary file in the same
  // directory is written, fsync'ed and renamed over `path`. On error `path` is
  // left untouched and the temporary file is removed.
  absl::Status WriteFile(const std::string& path) const;

 private:
  struct Entry {
    SafetensorsDType dtype;
    std::vector<int64_t> shape;
    std::string bytes;
  };

  std::map<std::string, std::string> metadata_;
  std::map<std::string, Entry> tensors_;  // Sorted by name = file order.
};

}  // namespace tandem

#endif  // TANDEM_CORE_CHECKPOINT_SAFETENSORS_WRITER_H_
