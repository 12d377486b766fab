#include "core/model/cuda/llama_ops.h"

#include <stdexcept>

#include "core/model/cuda/cuda_support.h"
#include "core/model/cuda/gemv_kernel.h"
#include "core/model/cuda/llama_kernels.h"

namespace tandem {
namespace {

// Launches LaunchGemv writing out (checked by the callers).
void Gemv(GemvInput input, LinearEpilogue epilogue, const at::Tensor& x,
          const at::Tensor& norm_weight, double eps, const at::Tensor& weight,
          const at::Tensor& bias, at::Tensor& out) {
  CheckVectorLoads({&x, &weight, &out}, "Projection");
  if (x.size(0) != 1 || x.size(1) != weight.size(1)) {
    throw std::invalid_argument("Projection: x must be one row of the weight's K");
  }
  CheckCuda(LaunchGemv(KernelDTypeOf(x.scalar_type()), input, epilogue, x.data_ptr(),
                       norm_weight.defined() ? norm_weight.data_ptr() : nullptr,
                       static_cast<float>(eps), weight.data_ptr(),
                       bias.defined() ? bias.data_ptr() : nullptr, out.data_ptr(),
                       static_cast<int>(weight.size(1)), static_cast<int>(weight.size(0)),
                       CurrentStream()),
            "Projection");
}

}  // namespace

at::Tensor NormProjection(const at::Tensor& x, const at::Tensor& norm_weight, double eps,
                          const at::Tensor& weight, const at::Tensor& bias) {
  at::Tensor out = at::empty({x.size(0), weight.size(0)}, x.options());
  Gemv(GemvInput::kRmsNorm, LinearEpilogue::kBias, x, norm_weight, eps, weight, bias, out);
  return out;
}

at::Tensor NormSwiGluProjection(const at::Tensor& x, const at::Tensor& norm_weight, double eps,
                                const at::Tensor& gate_up_weight) {
  at::Tensor out = at::empty({x.size(0), gate_up_weight.size(0) / 2}, x.options());
  Gemv(GemvInput::kRmsNorm, LinearEpilogue::kSwiGlu, x, norm_weight, eps, gate_up_weight,
       at::Tensor(), out);
  return out;
}

void ProjectionAddResidual(const at::Tensor& x, const at::Tensor& weight, at::Tensor& residual) {
  if (residual.size(0) != x.size(0) || residual.size(1) != weight.size(0)) {
    throw std::invalid_argument("ProjectionAddResidual: residual must be [rows, N]");
  }
  Gemv(GemvInput::kPlain, LinearEpilogue::kBiasResidual, x, at::Tensor(), 0.0, weight,
       at::Tensor(), residual);
}

at::Tensor FusedRmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::Tensor in = x.contiguous();
  at::Tensor out = at::empty_like(in);
  CheckCuda(LaunchRmsNorm(KernelDTypeOf(in.scalar_type()), in.data_ptr(), weight.data_ptr(),
                      static_cast<float>(eps), out.data_ptr(), static_cast<int>(in.size(0)),
                      static_cast<int>(in.size(1)), CurrentStream()),
        "RmsNorm");
  return out;
}

void QkNormRope(at::Tensor& qkv, int64_t heads, const at::Tensor& q_norm,
                const at::Tensor& k_norm, double eps, const at::Tensor& inv_freq,
                const at::Tensor& slots, const at::Tensor& positions, int64_t max_position) {
  if (!qkv.is_contiguous() || inv_freq.scalar_type() != at::kFloat) {
    throw std::invalid_argument("QkNormRope: qkv must be contiguous, inv_freq float32");
  }
  const int64_t rows = qkv.size(0), D = qkv.size(2), kv_heads = (qkv.size(1) - heads) / 2;
  CheckCuda(LaunchQkNormRope(KernelDTypeOf(qkv.scalar_type()), qkv.data_ptr(),
                         q_norm.defined() ? q_norm.data_ptr() : nullptr,
                         k_norm.defined() ? k_norm.data_ptr() : nullptr, static_cast<float>(eps),
                         inv_freq.data_ptr<float>(),
                         slots.defined() ? slots.data_ptr<int64_t>() : nullptr,
                         positions.data_ptr<int64_t>(), max_position, static_cast<int>(rows),
                         static_cast<int>(heads), static_cast<int>(kv_heads),
                         static_cast<int>(D), CurrentStream()),
        "QkNormRope");
}

at::Tensor SwiGlu(const at::Tensor& gate_up) {
  const at::Tensor in = gate_up.contiguous();
  const int64_t rows = in.size(0), inner = in.size(1) / 2;
  at::Tensor out = at::empty({rows, inner}, in.options());
  CheckCuda(LaunchSwiGlu(KernelDTypeOf(in.scalar_type()), in.data_ptr(), out.data_ptr(),
                           static_cast<int>(rows), static_cast<int>(inner), CurrentStream()),
        "SwiGlu");
  return out;
}

}  // namespace tandem
