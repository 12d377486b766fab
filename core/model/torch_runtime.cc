#include "core/model/torch_runtime.h"

#include <ATen/Context.h>
#include <c10/core/Device.h>
#include <torch/version.h>

#include "absl/strings/match.h"
#if TANDEM_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace tandem {

std::string TorchVersion() { return TORCH_VERSION; }

bool CudaAvailable() { return at::hasCUDA(); }

#if TANDEM_WITH_CUDA
namespace {

c10::DeviceIndex CudaIndex(const std::string& device) {
  const c10::Device parsed(device);
  return parsed.has_index() ? parsed.index() : c10::cuda::current_device();
}

// Bytes the caching allocator reserves on `device`: index 0 of the stat
// array is all pools together (StatType::AGGREGATE).
auto ReservedBytes(const std::string& device) {
  return c10::cuda::CUDACachingAllocator::getDeviceStats(CudaIndex(device)).reserved_bytes[0];
}

}  // namespace
#endif

int64_t StartDeviceMemoryMeasurement(const std::string& device) {
#if TANDEM_WITH_CUDA
  if (absl::StartsWith(device, "cuda")) {
    c10::cuda::CUDACachingAllocator::emptyCache();
    c10::cuda::CUDACachingAllocator::resetPeakStats(CudaIndex(device));
    return ReservedBytes(device).current;
  }
#endif
  (void)device;
  return 0;
}

int64_t PeakDeviceMemory(const std::string& device) {
#if TANDEM_WITH_CUDA
  if (absl::StartsWith(device, "cuda")) return ReservedBytes(device).peak;
#endif
  (void)device;
  return 0;
}

}  // namespace tandem
