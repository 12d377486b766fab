// Builds a ready-to-serve model (runner + tokenizer) from a checkpoint
// directory or the embedded default, and writes random checkpoints.
// Torch-free header: the server and client include it.
#ifndef TANDEM_CORE_MODEL_LOADER_H_
#define TANDEM_CORE_MODEL_LOADER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/gpt2_config.h"
#include "core/gpt2_tokenizer.h"
#include "core/model_runner.h"

namespace tandem {

struct ModelOptions {
  // A Hugging Face GPT-2 directory (config.json, model.safetensors,
  // vocab.json, merges.txt). Empty: the embedded default model, GPT-2 small
  // with random weights from `embedded_seed` and the real GPT-2 tokenizer.
  std::string model_dir;
  uint64_t embedded_seed = 20241129;
  std::string embedded_size = "gpt2";
  int32_t max_slots = 0;    // 0: 8 on the CPU, 64 on a GPU
  int32_t max_context = 0;  // 0: the model's n_positions
  std::string dtype = "auto";   // float32|float16|bfloat16; auto: float32 on CPU, bfloat16 on GPU
  std::string device = "auto";  // cpu|cuda|cuda:N; auto: cuda when present
  bool cuda_graphs = true;      // CUDA: capture decode steps per batch bucket
  bool decode_kernel = true;    // CUDA: the slot-reading attention kernel
  // static: KV slots allocated once at full context. dynamic: the naive
  // baseline, a cache lengthened by concatenation as steps need it, decoded
  // by the eager runner with a host read every step (no graphs, no pipeline).
  std::string kv_cache = "static";
};

struct LoadedModel {
  std::unique_ptr<ModelRunner> runner;
  std::unique_ptr<Gpt2Tokenizer> tokenizer;
  Gpt2Config config;
};

absl::StatusOr<LoadedModel> LoadModel(const ModelOptions& options);

// Loads only the tokenizer of `model_dir` (the embedded one when empty).
absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> LoadTokenizer(
    const std::string& model_dir);

// Writes a random GPT-2 checkpoint in the Hugging Face layout: config.json,
// model.safetensors (in `dtype`), vocab.json and merges.txt (GPT-2's).
absl::Status WriteRandomCheckpoint(const std::string& dir,
                                   const Gpt2Config& config, uint64_t seed,
                                   const std::string& dtype);

std::string TorchVersion();
bool CudaAvailable();
// Device memory held by this process's LibTorch caching allocator on
// `device` ("cuda", "cuda:N"), which must already have allocated there:
// StartDeviceMemoryMeasurement returns cached, unused blocks to the driver,
// resets the peak and returns the bytes still reserved (memory in use);
// PeakDeviceMemory is the most reserved since (weights, KV slots, CUDA graph
// pools, activations, cache). Both do nothing and return 0 for the CPU.
int64_t StartDeviceMemoryMeasurement(const std::string& device);
int64_t PeakDeviceMemory(const std::string& device);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_LOADER_H_
