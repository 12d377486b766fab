// tandem-parity: runs Tandem's GPT-2 (the real loader and model) on prompts
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
#include "core/gpt2_config.h"
#include "core/gpt2_model.h"
#include "core/gpt2_weights.h"
#include "core/kv_cache.h"
#include "core/safetensors_file.h"

ABSL_FLAG(std::string, model, "", "checkpoint directory");
ABSL_FLAG(std::string, prompts, "", "JSON file with token id prompts");
ABSL_FLAG(std::string, out, "", "JSON output file");
ABSL_FLAG(std::string, device, "cpu", "cpu or cuda");
ABSL_FLAG(std::string, dtype, "float32", "float32, float16 or bfloat16");
ABSL_FLAG(int32_t, new_tokens, 64, "greedy tokens to generate");
ABSL_FLAG(int32_t, logit_steps, 8, "decode steps whose logits are written");

namespace tandem {
namespace {

at::Tensor Host(const at::Tensor& logits) {  // [N, V] -> float32 on the CPU
  return logits.to(at::kCPU, at::kFloat).contiguous();
}

int Main() {
  c10::InferenceMode inference_mode;
  const std::string dir = absl::GetFlag(FLAGS_model);
  auto config = Gpt2Config::FromFile(dir + "/config.json");
  auto file = SafetensorsFile::Open(dir + "/model.safetensors");
  if (!config.ok() || !file.ok()) {
    std::cerr << (config.ok() ? file.status() : config.status()) << "\n";
    return 1;
  }
  const std::string dtype_name = absl::GetFlag(FLAGS_dtype);
  const at::ScalarType dtype = dtype_name == "bfloat16" ? at::kBFloat16
                               : dtype_name == "float16" ? at::kHalf : at::kFloat;
  const at::Device device(absl::GetFlag(FLAGS_device));
  auto weights = Gpt2Weights::Load(**file, *config, dtype, device);
  if (!weights.ok()) {
    std::cerr << weights.status() << "\n";
    return 1;
  }
  Gpt2Model model(*config, *std::move(weights));
  std::ifstream in(absl::GetFlag(FLAGS_prompts));
  const nlohmann::json input = nlohmann::json::parse(in);
  const auto prompts = input["prompts"].get<std::vector<std::vector<int64_t>>>();
  const int64_t n = static_cast<int64_t>(prompts.size());
  KvCache cache(config->n_layer, n, config->n_head, config->n_positions, config->head_dim(),
                at::TensorOptions().dtype(dtype).device(device));
  const auto longs = at::TensorOptions().dtype(at::kLong);
  nlohmann::json out_prompts = nlohmann::json::array();
  std::vector<int64_t> next(n), position(n), slots(n);
  std::vector<std::vector<at::Tensor>> rows(n);
  for (int64_t s = 0; s < n; ++s) {
    const at::Tensor logits =
        model.Prefill(s, at::tensor(prompts[s], longs).to(device), &cache, /*all_logits=*/true);
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
        model.Decode(at::tensor(slots, longs).to(device), at::tensor(next, longs).to(device),
                     at::tensor(position, longs).to(device), attend, &cache);
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
      << nlohmann::json{{"vocab", config->vocab_size}, {"prompts", out_prompts}}.dump();
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
  absl::ParseCommandLine(argc, argv);
  return tandem::Main();
}
