// What the engine and the server know of the model being served: plain data,
// filled in by the model layer, whatever the family.
#ifndef TANDEM_CORE_ENGINE_MODEL_DESCRIPTION_H_
#define TANDEM_CORE_ENGINE_MODEL_DESCRIPTION_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tandem {

struct ModelDescription {
  std::string name;
  std::string architecture;  // the checkpoint's family, e.g. as config.json names it
  int32_t vocab_size = 0;
  int32_t max_context = 0;  // positions per KV slot
  int32_t num_slots = 0;
  int32_t num_layers = 0;
  int32_t hidden_size = 0;
  int32_t num_heads = 0;
  std::string dtype;   // "float32", "float16", "bfloat16"
  std::string device;  // "cpu", "cuda:0"
  int64_t weight_bytes = 0;
  int64_t kv_cache_bytes = 0;
  // The one source of end-of-sequence ids (the checkpoint's config): a
  // sampled token in this list ends its sequence unless the request sets
  // ignore_eos. The scheduler applies it on the host.
  std::vector<int32_t> eos_token_ids;
  std::string runner;  // e.g. "eager", "cuda, CUDA graphs"
  // The time of the smallest prefill step (its fixed cost), when the runner
  // measured it at start-up; 0 when unknown. See PrefillBudget.
  double prefill_fixed_seconds = 0;
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_MODEL_DESCRIPTION_H_
