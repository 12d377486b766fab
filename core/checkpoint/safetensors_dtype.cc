#include "core/checkpoint/safetensors_dtype.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tandem {
namespace {

struct DTypeInfo {
  SafetensorsDType dtype;
  absl::string_view name;
  size_t size;
};

constexpr DTypeInfo kDTypeInfos[] = {
    {SafetensorsDType::kF64, "F64", 8}, {SafetensorsDType::kF32, "F32", 4},
    {SafetensorsDType::kF16, "F16", 2}, {SafetensorsDType::kBF16, "BF16", 2},
    {SafetensorsDType::kI64, "I64", 8}, {SafetensorsDType::kI32, "I32", 4},
    {SafetensorsDType::kI16, "I16", 2}, {SafetensorsDType::kI8, "I8", 1},
    {SafetensorsDType::kU8, "U8", 1},   {SafetensorsDType::kBool, "BOOL", 1},
};

}  // namespace

absl::StatusOr<SafetensorsDType> ParseSafetensorsDType(absl::string_view name) {
  for (const DTypeInfo& info : kDTypeInfos) {
    if (info.name == name) return info.dtype;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown safetensors dtype \"", name, "\""));
}

absl::string_view SafetensorsDTypeName(SafetensorsDType dtype) {
  for (const DTypeInfo& info : kDTypeInfos) {
    if (info.dtype == dtype) return info.name;
  }
  return "UNKNOWN";
}

size_t SafetensorsDTypeSize(SafetensorsDType dtype) {
  for (const DTypeInfo& info : kDTypeInfos) {
    if (info.dtype == dtype) return info.size;
  }
  return 0;
}

absl::StatusOr<uint64_t> SafetensorsByteSize(
    SafetensorsDType dtype, const std::vector<int64_t>& shape) {
  uint64_t bytes = SafetensorsDTypeSize(dtype);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("negative dimension ", shape[i], " at index ", i));
    }
    const uint64_t dim = static_cast<uint64_t>(shape[i]);
    if (dim != 0 && bytes > UINT64_MAX / dim) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape overflows 64 bits at dimension ", i, " (", shape[i], ")"));
    }
    bytes *= dim;
  }
  return bytes;
}

}  // namespace tandem
