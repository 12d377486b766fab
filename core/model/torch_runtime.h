// Facts about the LibTorch this binary runs on, for logs, metrics and the
// benchmark. Torch-free header.
#ifndef TANDEM_CORE_MODEL_TORCH_RUNTIME_H_
#define TANDEM_CORE_MODEL_TORCH_RUNTIME_H_

#include <cstdint>
#include <string>

namespace tandem {

std::string TorchVersion();
bool CudaAvailable();

// Device memory held by this process's LibTorch caching allocator on
// `device` ("cuda", "cuda:N"), which must already have allocated there:
// StartDeviceMemoryMeasurement returns cached, unused blocks to the driver,
// resets the peak and returns the bytes still reserved (memory in use);
// PeakDeviceMemory is the most reserved since (weights, KV slots, CUDA graph
// pools, activations, cache). Both do nothing and return 0 for the CPU.
int64_t StartDeviceMemoryMeasurement(const std::string& device);
int64_t PeakDeviceMemory(const std::string& device);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_TORCH_RUNTIME_H_
