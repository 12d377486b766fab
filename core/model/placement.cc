#include "core/model/placement.h"

#include <fstream>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/model/torch_runtime.h"
#if TANDEM_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace tandem {
namespace {

// Free memory where the KV slots will live: the driver's free device memory
// (weights are already loaded), or MemAvailable for the CPU.
int64_t FreeBytes(at::Device device) {
#if TANDEM_WITH_CUDA
  if (device.is_cuda()) {
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      return static_cast<int64_t>(free_bytes);
    }
  }
#endif
  (void)device;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::numeric_limits<int64_t>::max();  // unknown: do not refuse
}

}  // namespace

absl::StatusOr<at::Device> ResolveDevice(const DeviceSpec& spec) {
  DeviceSpec::Kind kind = spec.kind;
  if (kind == DeviceSpec::Kind::kAuto) {
    kind = CudaAvailable() ? DeviceSpec::Kind::kCuda : DeviceSpec::Kind::kCpu;
  }
  if (kind == DeviceSpec::Kind::kCpu) return at::Device(at::kCPU);
  if (!CudaAvailable()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--device=", AbslUnparseFlag(spec), ": this build of Tandem has no CUDA device "
        "available (LibTorch ", TorchVersion(), ")"));
  }
  return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(spec.index));
}

absl::StatusOr<at::ScalarType> ResolveDType(DType dtype, at::Device device) {
  switch (dtype) {
    case DType::kAuto: return device.is_cuda() ? at::kBFloat16 : at::kFloat;
    case DType::kFloat32: return at::kFloat;
    case DType::kBFloat16: return at::kBFloat16;
    case DType::kFloat16:
      if (device.is_cpu()) {
        return absl::InvalidArgumentError(
            "--dtype=float16 is not supported on the CPU; use float32 or bfloat16");
      }
      return at::kHalf;
  }
  return absl::InvalidArgumentError("unknown dtype");
}

std::string DTypeName(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    default: return "float32";
  }
}

absl::Status CheckKvCacheFits(const KvCacheShape& shape, at::ScalarType dtype,
                              at::Device device) {
  const int64_t need = shape.Bytes(dtype);
  // Leave room for activations, sampling buffers and CUDA graphs.
  const int64_t headroom = device.is_cuda() ? (int64_t{1} << 30) : 0;
  const int64_t free_bytes = FreeBytes(device);
  if (need + headroom <= free_bytes) return absl::OkStatus();
  auto gib = [](int64_t bytes) { return absl::StrFormat("%.2f GiB", bytes / 1073741824.0); };
  return absl::ResourceExhaustedError(absl::StrCat(
      "the KV slots need ", gib(need), " (", shape.num_layers, " layers x ", shape.num_slots,
      " slots x ", shape.max_context, " positions x 2 (K, V) x ",
      shape.num_kv_heads * shape.head_dim, " K/V width x ", at::elementSize(dtype), " bytes)",
      headroom > 0 ? " plus 1 GiB of headroom" : "", " but only ", gib(free_bytes),
      " is free on ", device.str(), "; lower --max_slots or --max_context"));
}

}  // namespace tandem
