#include "core/model/cuda/side_stream.h"

#include <c10/cuda/CUDAGuard.h>

#include "core/model/cuda/cuda_support.h"

namespace tandem {

SideStream::SideStream(c10::DeviceIndex device)
    : stream_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device)) {
  c10::cuda::CUDAGuard guard(device);
  CheckCuda(cudaEventCreateWithFlags(&forked_, cudaEventDisableTiming), "cudaEventCreate");
  CheckCuda(cudaEventCreateWithFlags(&joined_, cudaEventDisableTiming), "cudaEventCreate");
}

SideStream::~SideStream() {
  cudaEventDestroy(forked_);
  cudaEventDestroy(joined_);
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
