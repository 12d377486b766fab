// Resolving where and in which type the model lives, and whether its KV
// slots fit there. Model layer only (Torch types).
#ifndef TANDEM_CORE_MODEL_PLACEMENT_H_
#define TANDEM_CORE_MODEL_PLACEMENT_H_

#include <cstdint>
#include <string>

#include <ATen/ATen.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/model/kv_cache.h"
#include "core/model/model_options.h"

namespace tandem {

// auto -> cuda when a CUDA device is present, else cpu. FAILED_PRECONDITION
// for cuda in a build or on a machine without one.
absl::StatusOr<at::Device> ResolveDevice(const DeviceSpec& spec);
// auto -> bfloat16 on CUDA, float32 on the CPU; float16 is refused on the CPU.
absl::StatusOr<at::ScalarType> ResolveDType(DType dtype, at::Device device);
// "float32", "float16", "bfloat16".
std::string DTypeName(at::ScalarType dtype);

// Fails with the numbers (RESOURCE_EXHAUSTED) when a cache of `shape` cannot
// fit in the free memory of `device` (the driver's free memory on CUDA,
// with 1 GiB of headroom for activations and graphs; MemAvailable on the
// CPU), before anything is allocated.
absl::Status CheckKvCacheFits(const KvCacheShape& shape, at::ScalarType dtype,
                              at::Device device);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_PLACEMENT_H_
