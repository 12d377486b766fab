#include "core/model/cuda/side_stream.h"

#include <c10/cuda/CUDAGuard.h>

#include "core/model/cuda/cuda_support.h"

namespace tandem {

SideStream::SideStream(c10::DeviceIndex device)
    : stream_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device)) {
  c10::cuda::CUDAGuard guard(device);
  const cudaError_t forked = cudaEventCreateWithFlags(&forked_, cudaEventDisableTiming);
  const cudaError_t joined = cudaEventCreateWithFlags(&joined_, cudaEventDisableTiming);
  if (forked != cudaSuccess || joined != cudaSuccess) {
    DestroyEvents();  // the destructor does not run when the constructor throws
    CheckCuda(forked != cudaSuccess ? forked : joined, "cudaEventCreate");
  }
}

SideStream::~SideStream() { DestroyEvents(); }

void SideStream::DestroyEvents() {
  if (forked_ != nullptr) cudaEventDestroy(forked_);
  if (joined_ != nullptr) cudaEventDestroy(joined_);
  forked_ = joined_ = nullptr;
}

void SideStream::Fork() const {
  CheckCuda(cudaEventRecord(forked_, CurrentStream()), "cudaEventRecord");
  CheckCuda(cudaStreamWaitEvent(stream_.stream(), forked_, 0), "cudaStreamWaitEvent");
}

void SideStream::Join() const {
  CheckCuda(cudaEventRecord(joined_, stream_.stream()), "cudaEventRecord");
  CheckCuda(cudaStreamWaitEvent(CurrentStream(), joined_, 0), "cudaStreamWaitEvent");
}

}  // namespace tandem
