// How to load the served model: plain options, parsed once at the border
// (the typed command-line flags below). Torch-free: the server, the CLI and
// the benchmark include it.
#ifndef TANDEM_CORE_MODEL_MODEL_OPTIONS_H_
#define TANDEM_CORE_MODEL_MODEL_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace tandem {

// Weights' and KV cache's element type (--dtype).
enum class DType { kAuto, kFloat32, kFloat16, kBFloat16 };

// Where the model runs (--device): auto, cpu, cuda or cuda:N.
struct DeviceSpec {
  enum class Kind { kAuto, kCpu, kCuda };
  Kind kind = Kind::kAuto;
  int index = -1;  // cuda:N; -1 = the current device
};

// --kv_cache: static slots (the server), or the naive growing baseline.
enum class KvCacheMode { kStatic, kDynamic };

// KV slots when ModelOptions::max_slots is 0.
inline constexpr int32_t kDefaultCpuSlots = 8;
inline constexpr int32_t kDefaultGpuSlots = 64;

struct ModelOptions {
  // A Hugging Face checkpoint directory (config.json names the family).
  // Empty: the embedded default model, random weights of `embedded_preset`
  // from `embedded_seed` with the family's real tokenizer.
  std::string model_dir;
  uint64_t embedded_seed = 20241129;
  std::string embedded_preset;  // empty: the default family's default size
  int32_t max_slots = 0;    // 0: kDefaultCpuSlots or kDefaultGpuSlots
  int32_t max_context = 0;  // 0: the model's maximum positions
  DType dtype = DType::kAuto;  // auto: float32 on the CPU, bfloat16 on a GPU
  DeviceSpec device;           // auto: cuda when present
  bool cuda_graphs = true;     // CUDA: capture decode steps per batch bucket
  // CUDA: a step with prompt chunks and decode rows runs as one forward
  // where the model can (false: its prefill, then its decode; benchmarks).
  bool one_forward_mixed_steps = true;
  // CUDA: prefill packs are padded to bucketed token counts, each run once
  // at start-up up to this size (the engine's largest pack), so no request
  // meets a new shape.
  int32_t max_prefill_tokens = 8192;
  KvCacheMode kv_cache = KvCacheMode::kStatic;
};

// Abseil flag parsing, so each flag is checked once, where it is read.
bool AbslParseFlag(absl::string_view text, DType* dtype, std::string* error);
std::string AbslUnparseFlag(DType dtype);
bool AbslParseFlag(absl::string_view text, DeviceSpec* device, std::string* error);
std::string AbslUnparseFlag(const DeviceSpec& device);
bool AbslParseFlag(absl::string_view text, KvCacheMode* mode, std::string* error);
std::string AbslUnparseFlag(KvCacheMode mode);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_MODEL_OPTIONS_H_
