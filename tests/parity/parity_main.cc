// tandem-parity: runs Tandem's model (the real family loader, and on CUDA
// the fused decode path the server runs) on prompts
// and writes what the Hugging Face comparison needs: prefill logits of every
// prompt position, the logits of the first decode steps, and greedy tokens.
// All prompts decode together as one batch over their KV slots, so batches
// mix prompt lengths.
//
// Input (--prompts): JSON {"prompts": [[ids...], ...]}.
// Output: --out JSON {"vocab": V, "prompts": [{"prefill_rows": T,
// "decode_rows": K, "tokens": [...]}]} and --out.bin: float32 logits rows,
// for each prompt its T prefill rows then its K decode rows.
#include <fstream>
#include <iostream>
#include <sstream>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <nlohmann/json.hpp>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "core/base/host_allocator.h"
#include "core/base/program_usage.h"
#include "core/model/kv_cache.h"
#include "core/model/model_families.h"
#include "core/model/model_options.h"
#include "core/model/placement.h"

ABSL_FLAG(std::string, model, "", "checkpoint directory");
ABSL_FLAG(std::string, prompts, "", "JSON file with token id prompts");
ABSL_FLAG(std::string, out, "", "JSON output file");
ABSL_FLAG(tandem::DeviceSpec, device, tandem::DeviceSpec(), "cpu, cuda or cuda:N");
ABSL_FLAG(tandem::DType, dtype, tandem::DType::kFloat32, "float32, float16 or bfloat16");
ABSL_FLAG(int32_t, new_tokens, 64, "greedy tokens to generate");
ABSL_FLAG(int32_t, logit_steps, 8, "decode steps whose logits are written");
ABSL_FLAG(int32_t, max_context, 4096,
          "KV positions per slot (at most the model's; Llama 3's 131072 would not fit)");

namespace tandem {
namespace {

at::Tensor Host(const at::Tensor& logits) {  // [N, V] -> float32 on the CPU
  return logits.to(at::kCPU, at::kFloat).contiguous();
}

int Main() {
  c10::InferenceMode inference_mode;
  const std::string dir = absl::GetFlag(FLAGS_model);
  auto device = ResolveDevice(absl::GetFlag(FLAGS_device));
  const absl::StatusOr<at::ScalarType> dtype =
      device.ok() ? ResolveDType(absl::GetFlag(FLAGS_dtype), *device)
                  : absl::StatusOr<at::ScalarType>(device.status());
  auto family = ModelFamilyOf(dir);
  if (!dtype.ok() || !family.ok()) {
    std::cerr << (dtype.ok() ? family.status() : dtype.status()) << "\n";
    return 1;
  }
  auto loaded = (*family)->Load(dir, {*dtype, *device, /*fused_cuda_decode=*/true});
  if (!loaded.ok()) {
    std::cerr << loaded.status() << "\n";
    return 1;
  }
  const CausalLm& model = *loaded->model;
  std::ifstream in(absl::GetFlag(FLAGS_prompts));
  const nlohmann::json input = nlohmann::json::parse(in);
  const auto prompts = input["prompts"].get<std::vector<std::vector<int64_t>>>();
  const int64_t n = static_cast<int64_t>(prompts.size());
  KvCacheShape shape = model.kv_shape();
  shape.num_slots = n;
  shape.max_context = std::min<int64_t>(loaded->max_positions, absl::GetFlag(FLAGS_max_context));
  KvCache cache(shape, at::TensorOptions().dtype(*dtype).device(*device));
  const auto longs = at::TensorOptions().dtype(at::kLong);
  nlohmann::json out_prompts = nlohmann::json::array();
  std::vector<int64_t> next(n), position(n), slots(n);
  std::vector<std::vector<at::Tensor>> rows(n);
  for (int64_t s = 0; s < n; ++s) {
    const at::Tensor logits =
        model.Prefill(s, at::tensor(prompts[s], longs).to(*device), &cache, /*all_logits=*/true);
    rows[s].push_back(Host(logits));
    out_prompts.push_back({{"prefill_rows", logits.size(0)}, {"decode_rows", 0},
                           {"tokens", nlohmann::json::array()}});
    next[s] = logits[-1].argmax().item<int64_t>();
    out_prompts[s]["tokens"].push_back(next[s]);
    position[s] = static_cast<int64_t>(prompts[s].size());
    slots[s] = s;
  }
  for (int step = 1; step < absl::GetFlag(FLAGS_new_tokens); ++step) {
    int64_t attend = 0;
    for (int64_t p : position) attend = std::max(attend, p + 1);
    const at::Tensor logits =
        model.Decode(at::tensor(slots, longs).to(*device), at::tensor(next, longs).to(*device),
                     at::tensor(position, longs).to(*device), attend, &cache);
    const at::Tensor chosen = logits.argmax(-1).to(at::kCPU);
    for (int64_t s = 0; s < n; ++s) {
      if (step <= absl::GetFlag(FLAGS_logit_steps)) {
        rows[s].push_back(Host(logits.narrow(0, s, 1)));
        out_prompts[s]["decode_rows"] = step;
      }
      next[s] = chosen[s].item<int64_t>();
      out_prompts[s]["tokens"].push_back(next[s]);
      ++position[s];
    }
  }
  std::ofstream(absl::GetFlag(FLAGS_out))
      << nlohmann::json{{"vocab", loaded->vocab_size}, {"prompts", out_prompts}}.dump();
  std::ofstream bin(absl::GetFlag(FLAGS_out) + ".bin", std::ios::binary);
  for (const auto& prompt_rows : rows) {
    for (const at::Tensor& t : prompt_rows) {
      bin.write(static_cast<const char*>(t.data_ptr()), t.numel() * sizeof(float));
    }
  }
  return bin.good() ? 0 : 1;
}

}  // namespace
}  // namespace tandem

int main(int argc, char** argv) {
  tandem::SetProgramUsage(
      "Writes Tandem's logits and greedy tokens for the Hugging Face comparison.\n"
      "Usage: tandem-parity --model=DIR --prompts=FILE.json --out=FILE.json [flags]");
  absl::ParseCommandLine(argc, argv);
  tandem::KeepFreedHostMemory();  // before any tensor
  return tandem::Main();
}
