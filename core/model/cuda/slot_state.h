// The per-slot decode state a CUDA runner keeps on the device (CUDA builds
// only; see CudaRunner).
#ifndef TANDEM_CORE_MODEL_CUDA_SLOT_STATE_H_
#define TANDEM_CORE_MODEL_CUDA_SLOT_STATE_H_

#include <cstdint>

#include <ATen/ATen.h>

namespace tandem {

// Every tensor is [num_slots + 1] (the last is the scratch slot) on the
// device. A prefill that ends a prompt writes its slot's entries; each decode
// step reads them by slot and advances token, position and RNG offset.
// Owned by the runner; engine thread only.
struct SlotState {
  at::Tensor next_token;   // int64: the token the next decode step feeds
  at::Tensor position;     // int64: its position
  at::Tensor rng_offset;   // int64: index of the token it samples
  at::Tensor temperature;  // float32
  at::Tensor top_p;        // float32
  at::Tensor min_p;        // float32
  at::Tensor top_k;        // int64
  at::Tensor seed;         // int64

  // Zeros (top_p ones) for `states` slots on `device`.
  static SlotState Zeros(int64_t states, at::Device device) {
    const auto longs = at::TensorOptions().dtype(at::kLong).device(device);
    const auto floats = at::TensorOptions().dtype(at::kFloat).device(device);
    return {at::zeros({states}, longs),  at::zeros({states}, longs),
            at::zeros({states}, longs),  at::zeros({states}, floats),
            at::ones({states}, floats),  at::zeros({states}, floats),
            at::zeros({states}, longs),  at::zeros({states}, longs)};
  }
};

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_CUDA_SLOT_STATE_H_
