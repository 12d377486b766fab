// Element types of the huggingface safetensors format.
//
// Thread-safety: all functions are pure and thread-safe.

#ifndef TANDEM_CORE_CHECKPOINT_SAFETENSORS_DTYPE_H_
#define TANDEM_CORE_CHECKPOINT_SAFETENSORS_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tandem {

// The subset of safetensors dtypes Tandem understands. Spelled in files as
// "F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL".
enum class SafetensorsDType {
  kF64,
  kF32,
  kF16,
  kBF16,
  kI64,
  kI32,
  kI16,
  kI8,
  kU8,
  kBool,
};

// Parses the file spelling of a dtype (case-sensitive, e.g. "BF16").
// Returns InvalidArgument for anything else.
absl::StatusOr<SafetensorsDType> ParseSafetensorsDType(absl::string_view name);

// Returns the file spelling of `dtype` (e.g. "BF16"). The returned view points
// to static storage.
absl::string_view SafetensorsDTypeName(SafetensorsDType dtype);

// Size in bytes of one element of `dtype` (BOOL is one byte).
size_t SafetensorsDTypeSize(SafetensorsDType dtype);

// Returns product(shape) * SafetensorsDTypeSize(dtype), or InvalidArgument if
// a dimension is negative or the product overflows 64 bits. An empty shape is
// a scalar (one element).
absl::StatusOr<uint64_t> SafetensorsByteSize(SafetensorsDType dtype,
                                             const std::vector<int64_t>& shape);

}  // namespace tandem

#endif  // TANDEM_CORE_CHECKPOINT_SAFETENSORS_DTYPE_H_
