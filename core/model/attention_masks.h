// The masks of the reference (ATen) attention paths: where a query may not
// look. Model layer only (Torch types).
#ifndef TANDEM_CORE_MODEL_ATTENTION_MASKS_H_
#define TANDEM_CORE_MODEL_ATTENTION_MASKS_H_

#include <cstdint>

#include <ATen/ATen.h>

namespace tandem {

// bool [groups * n, n] on `device`: a prefill segment's n queries against its
// own n keys (query i sits at the segment's position start + i and sees the
// keys up to it): true above the diagonal. The rows repeat `groups` times,
// for grouped-query heads stacked along the query rows ([G n, ...]).
at::Tensor FutureKeyMask(int64_t n, int64_t groups, at::Device device);

// bool [B, attend_len]: true where key position t > positions[b], past each
// decode row's own position. positions int64 [B].
at::Tensor PastPositionMask(const at::Tensor& positions, int64_t attend_len);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_ATTENTION_MASKS_H_
