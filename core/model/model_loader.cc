#include "core/model/model_loader.h"

#include <utility>

#include <ATen/ATen.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/base/logging.h"
#include "core/base/status_macros.h"
#include "core/model/eager_runner.h"
#include "core/model/growing_cache_runner.h"
#include "core/model/model_families.h"
#include "core/model/placement.h"
#if TANDEM_WITH_CUDA
#include "core/model/cuda/cuda_runner.h"
#endif

namespace tandem {
namespace {

absl::StatusOr<FamilyModel> LoadFamilyModel(const ModelOptions& options,
                                            const WeightPlacement& placement) {
  if (options.model_dir.empty()) {
    const ModelFamily& family = *ModelFamilies().front();
    const std::string preset =
        options.embedded_preset.empty() ? family.presets().front() : options.embedded_preset;
    return family.LoadRandom(preset, options.embedded_seed, placement);
  }
  ASSIGN_OR_RETURN(const ModelFamily* family, ModelFamilyOf(options.model_dir));
  return family->Load(options.model_dir, placement);
}

ModelDescription Describe(const FamilyModel& loaded, const KvCacheShape& cache,
                          int32_t slots, at::ScalarType dtype, at::Device device) {
  ModelDescription description;
  description.name = loaded.name;
  description.architecture = loaded.architecture;
  description.vocab_size = loaded.vocab_size;
  description.max_context = static_cast<int32_t>(cache.max_context);
  description.num_slots = slots;
  description.num_layers = static_cast<int32_t>(cache.num_layers);
  description.hidden_size = loaded.hidden_size;
  description.num_heads = loaded.num_heads;
  description.dtype = DTypeName(dtype);
  description.device = device.str();
  description.weight_bytes = loaded.weight_bytes;
  // A growing cache starts empty; this is what it may grow to.
  description.kv_cache_bytes = cache.Bytes(dtype);
  description.eos_token_ids = loaded.eos_token_ids;
  return description;
}

// The runner for the options: see LoadModel.
absl::StatusOr<std::unique_ptr<ModelRunner>> MakeRunner(
    const ModelOptions& options, ModelDescription description, std::unique_ptr<CausalLm> model,
    const KvCacheShape& cache, at::TensorOptions tensor_options) {
  if (options.kv_cache == KvCacheMode::kDynamic) {
    description.runner = "eager, dynamic KV cache";
    return std::make_unique<GrowingCacheRunner>(std::move(description), std::move(model), cache,
                                                tensor_options);
  }
  const at::Device device = tensor_options.device();
  if (device.is_cpu()) {
    description.runner = "eager";
    return std::make_unique<EagerRunner>(std::move(description), std::move(model),
                                         std::make_unique<KvCache>(cache, tensor_options),
                                         device);
  }
#if TANDEM_WITH_CUDA
  description.runner = options.cuda_graphs ? "cuda, CUDA graphs" : "cuda, eager";
  CudaRunnerOptions cuda_options;
  cuda_options.cuda_graphs = options.cuda_graphs;
  cuda_options.one_forward_mixed_steps = options.one_forward_mixed_steps;
  cuda_options.max_prefill_tokens = options.max_prefill_tokens;
  try {
    return std::make_unique<CudaRunner>(std::move(description), std::move(model),
                                        std::make_unique<KvCache>(cache, tensor_options),
                                        device, cuda_options);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("cannot set up the CUDA runner: ", e.what()));
  }
#else
  return absl::FailedPreconditionError(
      "this tandem build has no CUDA code (built against a CPU-only LibTorch)");
#endif
}

// LoadModel's work; LibTorch's errors (out of memory while placing the
// weights or allocating the cache) come out as exceptions.
absl::StatusOr<LoadedModel> LoadModelOrThrow(const ModelOptions& options);

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& model_dir) {
  if (model_dir.empty()) return ModelFamilies().front()->LoadTokenizer("");
  ASSIGN_OR_RETURN(const ModelFamily* family, ModelFamilyOf(model_dir));
  return family->LoadTokenizer(model_dir);
}

absl::StatusOr<LoadedModel> LoadModel(const ModelOptions& options) {
  try {
    return LoadModelOrThrow(options);
  } catch (const c10::OutOfMemoryError& e) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory while loading the model (fewer --max_slots, a smaller "
                     "--max_context or --dtype may fit): ",
                     e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("cannot load the model: ", e.what()));
  }
}

namespace {

absl::StatusOr<LoadedModel> LoadModelOrThrow(const ModelOptions& options) {
  const absl::Time start = absl::Now();
  ASSIGN_OR_RETURN(const at::Device device, ResolveDevice(options.device));
  ASSIGN_OR_RETURN(const at::ScalarType dtype, ResolveDType(options.dtype, device));
  const bool static_cache = options.kv_cache == KvCacheMode::kStatic;
  const WeightPlacement placement{dtype, device, device.is_cuda() && static_cache};
  ASSIGN_OR_RETURN(FamilyModel loaded, LoadFamilyModel(options, placement));
  if (loaded.tokenizer->vocab_size() > loaded.vocab_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("the tokenizer has ", loaded.tokenizer->vocab_size(),
                     " tokens but config.json's vocab_size is ", loaded.vocab_size));
  }
  const int32_t max_context = options.max_context > 0 ? options.max_context : loaded.max_positions;
  if (max_context > loaded.max_positions) {
    return absl::InvalidArgumentError(absl::StrCat("--max_context=", max_context,
                                                   " exceeds the model's maximum positions (",
                                                   loaded.max_positions, ")"));
  }
  const int32_t slots = options.max_slots > 0    ? options.max_slots
                        : device.is_cuda() ? kDefaultGpuSlots
                                           : kDefaultCpuSlots;
  KvCacheShape cache = loaded.model->kv_shape();
  // The CUDA runner pads batches into one extra scratch slot.
  cache.num_slots = device.is_cuda() && static_cache ? slots + 1 : slots;
  cache.max_context = max_context;
  RETURN_IF_ERROR(CheckKvCacheFits(cache, dtype, device));
  ModelDescription description = Describe(loaded, cache, slots, dtype, device);
  ASSIGN_OR_RETURN(std::unique_ptr<ModelRunner> runner,
                   MakeRunner(options, std::move(description), std::move(loaded.model), cache,
                              at::TensorOptions().dtype(dtype).device(device)));
  const ModelDescription& d = runner->description();
  LogInfo("loaded model ", d.name, " (", d.architecture, ", ", d.num_layers, " layers, hidden ",
          d.hidden_size, ", ", d.num_heads, " heads, vocab ", d.vocab_size, ") on ", d.device,
          " in ", d.dtype, ": weights ", absl::StrFormat("%.1f", d.weight_bytes / 1048576.0),
          " MiB, KV slots ", slots, " x ", max_context, " positions = ",
          absl::StrFormat("%.1f", d.kv_cache_bytes / 1048576.0), " MiB, runner ", d.runner,
          ", in ", absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Milliseconds(1))));
  return LoadedModel{std::move(runner), std::move(loaded.tokenizer),
                     std::move(loaded.chat_template)};
}

}  // namespace

}  // namespace tandem
