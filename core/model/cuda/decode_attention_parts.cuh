// The decode attention kernel's building blocks (decode_attention_kernel.cu):
// the rotary embedding of the query and the new key, the cluster barrier in
// two halves, and a thread's online softmax over the positions it holds.
// Included by .cu files only.
#ifndef TANDEM_CORE_CUDA_DECODE_ATTENTION_PARTS_CUH_
#define TANDEM_CORE_CUDA_DECODE_ATTENTION_PARTS_CUH_

#include <cfloat>
#include <cstdint>

#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/kernel_math.cuh"

namespace tandem {
namespace attention {

using kernel::FromFloat;
using kernel::ToFloat;
using kernel::Vec16;

// The query (times `scale`, into shared memory) and the new key (into the
// cache at key_out) rotated as DecodeRotary says, rounded where
// LaunchQkNormRope rounds. Thread i < D / 2 owns the pair (i, i + D / 2);
// every thread of the block must call it (the norms' reductions).
template <typename T>
__device__ void RotateQueryAndKey(const T* q, const T* new_key, const DecodeRotary& rotary,
                                  int64_t position, int head_dim, float scale, float* query,
                                  T* key_out) {
  using kernel::Round;
  const int half = head_dim / 2, i = threadIdx.x;
  const bool active = i < half;
  float qa = active ? ToFloat(q[i]) : 0.0f, qb = active ? ToFloat(q[i + half]) : 0.0f;
  float ka = active ? ToFloat(new_key[i]) : 0.0f, kb = active ? ToFloat(new_key[i + half]) : 0.0f;
  auto norm = [&](const void* weight, float& a, float& b) {
    const float inv = rsqrtf(kernel::BlockSum(a * a + b * b) / head_dim + rotary.eps);
    if (!active) return;
    const T* w = static_cast<const T*>(weight);
    a = Round<T>(ToFloat(w[i]) * Round<T>(a * inv));
    b = Round<T>(ToFloat(w[i + half]) * Round<T>(b * inv));
  };
  if (rotary.q_norm != nullptr) norm(rotary.q_norm, qa, qb);
  if (rotary.k_norm != nullptr) norm(rotary.k_norm, ka, kb);
  if (!active) return;
  const float angle = static_cast<float>(position) * rotary.inv_freq[i];
  const float c = Round<T>(cosf(angle)), s = Round<T>(sinf(angle));
  // x * cos + rotate_half(x) * sin, each product rounded as ATen stores it.
  query[i] = Round<T>(Round<T>(qa * c) + Round<T>(-qb * s)) * scale;
  query[i + half] = Round<T>(Round<T>(qb * c) + Round<T>(qa * s)) * scale;
  key_out[i] = FromFloat<T>(Round<T>(ka * c) + Round<T>(-kb * s));
  key_out[i + half] = FromFloat<T>(Round<T>(kb * c) + Round<T>(ka * s));
}

constexpr int kMaxSplits = 8;  // a cluster's blocks (the portable cluster size)

// The cluster barrier in two halves (every thread of the block calls each:
// .aligned): arrive, with kRelease releasing the thread's earlier writes
// (distributed shared memory included); wait returns once every thread of
// the cluster has arrived at the phase, acquiring the released writes.
template <bool kRelease>
__device__ __forceinline__ void ClusterArrive() {
  if constexpr (kRelease) {
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  } else {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  }
}
__device__ __forceinline__ void ClusterWait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// A thread's online softmax over its positions, in log2 units (the query
// carries scale x log2 e): the largest score, the sum of 2^(score - top) and
// the values weighted by it, for its kVec dims of the head.
template <int kVec>
struct Running {
  float top = -FLT_MAX, sum = 0.0f, acc[kVec] = {};
};

// Moves `run` past kAhead positions whose keys and values this thread holds
// (its kVec dims of each). Each score is summed over the position's kLanes
// lanes (shuffles). warp_live(a): some lane of the warp has a position in
// slot a (warp-uniform: the other slots' math is skipped);
// lane_live(a): this lane's position is in the slice (else it scores -inf and
// weighs nothing).
template <typename T, int kLanes, int kAhead, typename WarpLive, typename LaneLive>
__device__ __forceinline__ void Attend(const float (&qv)[Vec16<T>::kSize],
                                       const uint4 (&key)[kAhead], const uint4 (&val)[kAhead],
                                       WarpLive warp_live, LaneLive lane_live,
                                       Running<Vec16<T>::kSize>& run) {
  constexpr int kVec = Vec16<T>::kSize;
  float score[kAhead];
  float top = run.top;
#pragma unroll
  for (int a = 0; a < kAhead; ++a) {
    score[a] = -INFINITY;
    if (!warp_live(a)) continue;
    float k[kVec];
    kernel::Unpack<T>(key[a], k);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < kVec; ++i) s += qv[i] * k[i];
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset >>= 1) {
      s += __shfl_xor_sync(0xffffffffu, s, offset);
    }
    if (lane_live(a)) score[a] = s;
    top = fmaxf(top, score[a]);
  }
  const float rescale = kernel::Exp2(run.top - top);
  run.sum *= rescale;
#pragma unroll
  for (int i = 0; i < kVec; ++i) run.acc[i] *= rescale;
#pragma unroll
  for (int a = 0; a < kAhead; ++a) {
    if (!warp_live(a)) continue;
    const float p = kernel::Exp2(score[a] - top);
    float v[kVec];
    kernel::Unpack<T>(val[a], v);
    run.sum += p;
#pragma unroll
    for (int i = 0; i < kVec; ++i) run.acc[i] += p * v[i];
  }
  run.top = top;
}

}  // namespace attention
}  // namespace tandem

#endif  // TANDEM_CORE_CUDA_DECODE_ATTENTION_PARTS_CUH_
