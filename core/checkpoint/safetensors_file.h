// Memory-mapped reader for huggingface .safetensors files.
//
// Layout: an 8-byte little-endian u64 N, then N bytes of UTF-8 JSON (an
// object mapping tensor names to {"dtype","shape","data_offsets"} plus an
// optional "__metadata__" object of strings), then the data buffer. Offsets
// are relative to the start of the data buffer, end exclusive.

#ifndef TANDEM_CORE_CHECKPOINT_SAFETENSORS_FILE_H_
#define TANDEM_CORE_CHECKPOINT_SAFETENSORS_FILE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/checkpoint/safetensors_dtype.h"

namespace tandem {

// One tensor of a SafetensorsFile: a non-owning view into the file image.
// `data` is valid while the SafetensorsFile that returned it lives; it may be
// unaligned (use memcpy to read elements). `data` points inside the image
// even for empty tensors (size_bytes == 0).
struct SafetensorsTensor {
  std::string name;
  SafetensorsDType dtype;
  std::vector<int64_t> shape;
  const void* data;
  size_t size_bytes;
};

// A parsed .safetensors image. Owns a read-only private mmap of the file when
// created by Open(); borrows the caller's bytes when created by FromBuffer().
// Every tensor entry is validated at construction: known dtype, non-negative
// dims, size == product(shape) * dtype size, [begin, end) inside the data
// buffer, no two non-empty tensors overlapping, no duplicate JSON keys. Gaps
// between tensors and trailing bytes after the last tensor are allowed.
//
// Immutable after construction; all const methods are thread-safe.
// Note: if another process truncates the file while it is mapped, touching
// tensor data raises SIGBUS; Tandem assumes model files are not modified in
// place (SafetensorsWriter replaces files atomically, which is safe).
class SafetensorsFile {
 public:
  // Largest accepted JSON header, as in the reference implementation.
  static constexpr uint64_t kMaxHeaderBytes = 100'000'000;

  // Maps and parses the file at `path`. Errors: the errno-derived status when
  // the file cannot be opened/mapped, InvalidArgument (naming the file and,
  // where applicable, the tensor) when it is not a valid safetensors file.
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> Open(
      const std::string& path);

  // Parses an in-memory image. Does not copy: `bytes` must outlive the
  // returned object. `display_name` is used in error messages and returned by
  // path(). Never throws; any input gives either a valid object or an error.
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> FromBuffer(
      absl::string_view bytes, std::string display_name);

  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  // Unmaps the file (if mapped). Invalidates all SafetensorsTensor::data.
  ~SafetensorsFile();

  // Returns the tensor called `name`, or nullptr when absent. The pointer is
  // owned by this object.
  const SafetensorsTensor* Find(absl::string_view name) const;

  // All tensors ordered by data offset (ties broken by end offset, then name).
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }

  // The "__metadata__" entries (empty when absent).
  const std::map<std::string, std::string>& metadata() const {
    return metadata_;
  }

  // The path given to Open(), or the display name given to FromBuffer().
  const std::string& path() const { return path_; }

  // Size in bytes of the JSON header (N) and of the data buffer.
  uint64_t header_size() const { return header_size_; }
  uint64_t data_size() const { return data_size_; }

 private:
  explicit SafetensorsFile(std::string path);

  // Parses `bytes` (the whole image) into tensors_/metadata_/index_.
  absl::Status Parse(absl::string_view bytes);

  std::string path_;
  // Owned mapping (Open only); nullptr for FromBuffer.
  void* mapping_ = nullptr;
  size_t mapping_size_ = 0;
  uint64_t header_size_ = 0;
  uint64_t data_size_ = 0;
  std::vector<SafetensorsTensor> tensors_;
  // Name -> index into tensors_.
  std::map<std::string, size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_CHECKPOINT_SAFETENSORS_FILE_H_
