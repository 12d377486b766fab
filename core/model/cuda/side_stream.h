// A second CUDA stream for work that may run beside the current stream's.
#ifndef TANDEM_CORE_MODEL_CUDA_SIDE_STREAM_H_
#define TANDEM_CORE_MODEL_CUDA_SIDE_STREAM_H_

#include <c10/core/Device.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

namespace tandem {

// A pooled CUDA stream plus two events: Fork makes the side stream wait for
// what the current stream has queued so far, Join makes the current stream
// wait for what the side stream has queued, so work queued on the side
// between them runs beside the current stream's. Works eagerly and under
// CUDA graph capture, where the fork and the join become the graph's edges
// (the side stream joins the capture at Fork and must Join before it ends).
// Tensors the side work uses must outlive the Join on the current stream
// (the caching allocator orders frees by the stream that allocated).
// Owns the events. Threading: one thread at a time (the engine thread).
class SideStream {
 public:
  explicit SideStream(c10::DeviceIndex device);
  ~SideStream();
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;

  void Fork() const;
  void Join() const;
  c10::cuda::CUDAStream stream() const { return stream_; }

 private:
  void DestroyEvents();

  c10::cuda::CUDAStream stream_;
  cudaEvent_t forked_ = nullptr;  // recorded on the current stream
  cudaEvent_t joined_ = nullptr;  // recorded on the side stream
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_SIDE_STREAM_H_
