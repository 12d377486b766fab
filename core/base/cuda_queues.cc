#include "core/base/cuda_queues.h"

#include <cstdlib>

namespace tandem {

std::string UseOneCudaHardwareQueue() {
  constexpr char kName[] = "CUDA_DEVICE_MAX_CONNECTIONS";
  setenv(kName, "1", /*overwrite=*/0);
  const char* value = std::getenv(kName);
  return value != nullptr ? value : "";
}

}  // namespace tandem
