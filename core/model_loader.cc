#include "core/model_loader.h"

#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <limits>

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <torch/version.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/embedded_vocab.h"
#include "core/gpt2_runner.h"
#if TANDEM_WITH_CUDA
#include <cuda_runtime.h>

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

#include "core/cuda/cuda_gpt2_runner.h"
#endif
#include "core/logging.h"
#include "core/safetensors_writer.h"
#include "core/status_macros.h"

namespace tandem {
namespace {

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

absl::StatusOr<at::Device> ParseDevice(const std::string& name) {
  std::string resolved = name;
  if (resolved == "auto") resolved = CudaAvailable() ? "cuda" : "cpu";
  if (resolved == "cpu") return at::Device(at::kCPU);
  if (absl::StartsWith(resolved, "cuda")) {
    if (!CudaAvailable()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--device=", name, ": this build of Tandem has no CUDA device available "
          "(LibTorch ", TorchVersion(), ")"));
    }
    try {
      return at::Device(resolved);
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat("--device=", name, ": ", e.what()));
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--device=", name, ": expected cpu, cuda, cuda:N or auto"));
}

absl::StatusOr<at::ScalarType> ParseDtype(const std::string& name, at::Device device) {
  if (name == "auto") return device.is_cuda() ? at::kBFloat16 : at::kFloat;
  if (name == "float32" || name == "fp32") return at::kFloat;
  if (name == "float16" || name == "fp16") return at::kHalf;
  if (name == "bfloat16" || name == "bf16") return at::kBFloat16;
  return absl::InvalidArgumentError(absl::StrCat(
      "dtype \"", name, "\": expected float32, float16, bfloat16 or auto"));
}

std::string DtypeName(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    default: return "float32";
  }
}

SafetensorsDType SafetensorsTypeFor(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf: return SafetensorsDType::kF16;
    case at::kBFloat16: return SafetensorsDType::kBF16;
    default: return SafetensorsDType::kF32;
  }
}

// Free memory where the KV slots will live: the driver's free device memory
// (weights are already loaded), or MemAvailable for the CPU.
int64_t FreeBytes(at::Device device) {
#if TANDEM_WITH_CUDA
  if (device.is_cuda()) {
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      return static_cast<int64_t>(free_bytes);
    }
  }
#endif
  (void)device;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::numeric_limits<int64_t>::max();  // unknown: do not refuse
}

// Fails with the numbers when the KV slots cannot fit, before allocating.
absl::Status CheckKvCacheFits(const Gpt2Config& config, int32_t slots, int32_t context,
                              at::ScalarType dtype, at::Device device) {
  const int64_t need = KvCache::BytesFor(config.n_layer, slots, config.n_head, context,
                                         config.head_dim(), dtype);
  // Leave room for activations, sampling buffers and CUDA graphs.
  const int64_t headroom = device.is_cuda() ? (int64_t{1} << 30) : 0;
  const int64_t free_bytes = FreeBytes(device);
  if (need + headroom <= free_bytes) return absl::OkStatus();
  auto gib = [](int64_t bytes) { return absl::StrFormat("%.2f GiB", bytes / 1073741824.0); };
  return absl::ResourceExhaustedError(absl::StrCat(
      "the KV slots need ", gib(need), " (", config.n_layer, " layers x ", slots,
      " slots x ", context, " positions x 2 (K, V) x ", config.n_embd, " hidden x ",
      at::elementSize(dtype), " bytes)", headroom > 0 ? " plus 1 GiB of headroom" : "",
      " but only ", gib(free_bytes), " is free on ", device.str(),
      "; lower --max_slots or --max_context"));
}

absl::Status WriteText(const std::string& path, absl::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::string BaseName(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string TorchVersion() { return TORCH_VERSION; }

bool CudaAvailable() { return at::hasCUDA(); }

#if TANDEM_WITH_CUDA
namespace {
c10::DeviceIndex CudaIndex(const std::string& device) {
  const at::Device parsed(device);
  return parsed.has_index() ? parsed.index() : c10::cuda::current_device();
}
}  // namespace
#endif

int64_t StartDeviceMemoryMeasurement(const std::string& device) {
#if TANDEM_WITH_CUDA
  if (absl::StartsWith(device, "cuda")) {
    c10::cuda::CUDACachingAllocator::emptyCache();
    c10::cuda::CUDACachingAllocator::resetPeakStats(CudaIndex(device));
    return c10::cuda::CUDACachingAllocator::getDeviceStats(CudaIndex(device))
        .reserved_bytes[0]
        .current;
  }
#endif
  (void)device;
  return 0;
}

int64_t PeakDeviceMemory(const std::string& device) {
#if TANDEM_WITH_CUDA
  if (absl::StartsWith(device, "cuda")) {
    // Index 0 of a stat array: all pools together (StatType::AGGREGATE).
    return c10::cuda::CUDACachingAllocator::getDeviceStats(CudaIndex(device))
        .reserved_bytes[0]
        .peak;
  }
#endif
  (void)device;
  return 0;
}

absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> LoadTokenizer(
    const std::string& model_dir) {
  if (model_dir.empty()) {
    return Gpt2Tokenizer::FromStrings(EmbeddedGpt2VocabJson(), EmbeddedGpt2Merges());
  }
  const std::string vocab = model_dir + "/vocab.json";
  const std::string merges = model_dir + "/merges.txt";
  if (FileExists(vocab) && FileExists(merges)) return Gpt2Tokenizer::FromFiles(vocab, merges);
  const std::string fast = model_dir + "/tokenizer.json";
  if (FileExists(fast)) return Gpt2Tokenizer::FromTokenizerJson(fast);
  return absl::NotFoundError(absl::StrCat(
      model_dir, ": expected vocab.json and merges.txt, or tokenizer.json (GPT-2's byte-level BPE)"));
}

absl::StatusOr<LoadedModel> LoadModel(const ModelOptions& options) {
  const absl::Time start = absl::Now();
  ASSIGN_OR_RETURN(const at::Device device, ParseDevice(options.device));
  ASSIGN_OR_RETURN(const at::ScalarType dtype, ParseDtype(options.dtype, device));
  if (device.is_cpu() && dtype == at::kHalf) {
    return absl::InvalidArgumentError(
        "--dtype=float16 is not supported on the CPU; use float32 or bfloat16");
  }
  if (options.kv_cache != "static" && options.kv_cache != "dynamic") {
    return absl::InvalidArgumentError(
        absl::StrCat("--kv_cache=", options.kv_cache, ": expected static or dynamic"));
  }
  const bool growing_cache = options.kv_cache == "dynamic";
  LoadedModel loaded;
  ASSIGN_OR_RETURN(loaded.tokenizer, LoadTokenizer(options.model_dir));
  Gpt2Weights weights;
  std::string name;
  if (options.model_dir.empty()) {
    ASSIGN_OR_RETURN(loaded.config, Gpt2Config::Preset(options.embedded_size));
    weights = Gpt2Weights::Random(loaded.config, options.embedded_seed)
                  .To(dtype, device);
    name = absl::StrCat(options.embedded_size, "-random");
  } else {
    ASSIGN_OR_RETURN(loaded.config,
                     Gpt2Config::FromFile(options.model_dir + "/config.json"));
    ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file,
                     SafetensorsFile::Open(options.model_dir + "/model.safetensors"));
    ASSIGN_OR_RETURN(weights, Gpt2Weights::Load(*file, loaded.config, dtype, device));
    name = BaseName(options.model_dir);
  }
  const Gpt2Config& config = loaded.config;
  if (loaded.tokenizer->vocab_size() > config.vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the tokenizer has ", loaded.tokenizer->vocab_size(),
        " tokens but config.json's vocab_size is ", config.vocab_size));
  }
  const int32_t max_context =
      options.max_context > 0 ? options.max_context : config.n_positions;
  if (max_context > config.n_positions) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_context=", max_context, " exceeds the model's n_positions = ",
        config.n_positions));
  }
  const int32_t slots =
      options.max_slots > 0 ? options.max_slots : (device.is_cuda() ? 64 : 8);
  // The CUDA runner pads batches into one extra scratch slot.
  const bool cuda_runner = device.is_cuda() && !growing_cache;
  const int32_t cache_slots = cuda_runner ? slots + 1 : slots;
  RETURN_IF_ERROR(CheckKvCacheFits(config, cache_slots, max_context, dtype, device));
  auto cache = std::make_unique<KvCache>(
      config.n_layer, cache_slots, config.n_head, max_context, config.head_dim(),
      at::TensorOptions().dtype(dtype).device(device),
      growing_cache ? KvCache::Growth::kConcatenate : KvCache::Growth::kStatic);
  ModelDescription description;
  description.name = name;
  description.architecture = "gpt2";
  description.vocab_size = config.vocab_size;
  description.max_context = max_context;
  description.num_slots = slots;
  description.num_layers = config.n_layer;
  description.hidden_size = config.n_embd;
  description.num_heads = config.n_head;
  description.dtype = DtypeName(dtype);
  description.device = device.str();
  description.weight_bytes = weights.bytes();
  // A growing cache starts empty; report what it may grow to.
  description.kv_cache_bytes = KvCache::BytesFor(config.n_layer, cache_slots, config.n_head,
                                                 max_context, config.head_dim(), dtype);
  description.eos_token_id = config.eos_token_id;
  auto model = std::make_unique<Gpt2Model>(config, std::move(weights));
  model->set_use_decode_kernel(options.decode_kernel);
  if (cuda_runner) {
#if TANDEM_WITH_CUDA
    description.runner = options.cuda_graphs ? "cuda, CUDA graphs" : "cuda, eager";
    CudaRunnerOptions cuda_options;
    cuda_options.cuda_graphs = options.cuda_graphs;
    try {
      loaded.runner = std::make_unique<CudaGpt2Runner>(
          description, std::move(model), std::move(cache), device, cuda_options);
    } catch (const std::exception& e) {
      return absl::InternalError(absl::StrCat("cannot set up the CUDA runner: ", e.what()));
    }
#else
    return absl::FailedPreconditionError(
        "this tandem build has no CUDA code (built against a CPU-only LibTorch)");
#endif
  } else {
    description.runner = growing_cache ? "eager, dynamic KV cache" : "eager";
    loaded.runner = std::make_unique<Gpt2Runner>(description, std::move(model),
                                                 std::move(cache), device);
  }
  LogInfo("loaded model ", name, " (", config.n_layer, " layers, hidden ",
          config.n_embd, ", ", config.n_head, " heads, vocab ", config.vocab_size,
          ") on ", description.device, " in ", description.dtype, ": weights ",
          absl::StrFormat("%.1f", description.weight_bytes / 1048576.0),
          " MiB, KV slots ", slots, " x ", max_context, " positions = ",
          absl::StrFormat("%.1f", description.kv_cache_bytes / 1048576.0),
          " MiB, in ", absl::FormatDuration(absl::Trunc(absl::Now() - start,
                                                           absl::Milliseconds(1))));
  return loaded;
}

absl::Status WriteRandomCheckpoint(const std::string& dir,
                                   const Gpt2Config& config, uint64_t seed,
                                   const std::string& dtype_name) {
  RETURN_IF_ERROR(config.Validate());
  ASSIGN_OR_RETURN(const at::ScalarType dtype,
                   ParseDtype(dtype_name == "auto" ? "float32" : dtype_name,
                              at::Device(at::kCPU)));
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat("cannot create ", dir, ": ",
                                            std::strerror(errno)));
  }
  const Gpt2Weights weights = Gpt2Weights::Random(config, seed).To(dtype, at::kCPU);
  SafetensorsWriter writer;
  writer.SetMetadata("format", "pt");
  writer.SetMetadata("tandem_seed", std::to_string(seed));
  for (const auto& [name, tensor] : weights.Named()) {
    const at::Tensor t = tensor.contiguous();
    RETURN_IF_ERROR(writer.Add(
        name, SafetensorsTypeFor(dtype), t.sizes().vec(),
        absl::string_view(static_cast<const char*>(t.data_ptr()),
                          t.numel() * t.element_size())));
  }
  RETURN_IF_ERROR(writer.WriteFile(dir + "/model.safetensors"));
  RETURN_IF_ERROR(WriteText(dir + "/config.json", config.ToJson()));
  RETURN_IF_ERROR(WriteText(dir + "/vocab.json", EmbeddedGpt2VocabJson()));
  RETURN_IF_ERROR(WriteText(dir + "/merges.txt", EmbeddedGpt2Merges()));
  return absl::OkStatus();
}

}  // namespace tandem
