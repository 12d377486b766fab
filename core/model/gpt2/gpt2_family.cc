#include "core/model/gpt2/gpt2_family.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/read_file.h"
#include "core/base/status_macros.h"
#include "core/checkpoint/safetensors_file.h"
#include "core/model/checkpoint_reader.h"
#include "core/model/checkpoint_writer.h"
#include "core/model/gpt2/gpt2_config.h"
#include "core/model/gpt2/gpt2_model.h"
#include "core/model/gpt2/gpt2_weights.h"
#include "core/text/embedded_vocab.h"
#include "core/text/gpt2_tokenizer.h"
#include "core/text/plain_chat_template.h"
#if TANDEM_WITH_CUDA
#include "core/model/cuda/gpt2_fused_decoder.h"
#endif

namespace tandem {
namespace {

// The model over `weights` (already on the placement's device and dtype).
std::unique_ptr<CausalLm> MakeModel(const Gpt2Config& config, Gpt2Weights weights,
                                    const WeightPlacement& placement) {
#if TANDEM_WITH_CUDA
  if (placement.fused_cuda_decode && placement.device.is_cuda()) {
    return std::make_unique<Gpt2FusedDecoder>(config, std::move(weights));
  }
#endif
  (void)placement;
  return std::make_unique<Gpt2Model>(config, std::move(weights));
}

FamilyModel Describe(std::string name, const Gpt2Config& config, Gpt2Weights weights,
                     std::unique_ptr<Tokenizer> tokenizer, const WeightPlacement& placement) {
  FamilyModel out;
  out.name = std::move(name);
  out.architecture = "gpt2";
  out.tokenizer = std::move(tokenizer);
  out.chat_template = std::make_unique<PlainChatTemplate>();  // GPT-2 has none of its own
  out.vocab_size = config.vocab_size;
  out.max_positions = config.n_positions;
  out.hidden_size = config.n_embd;
  out.num_heads = config.n_head;
  out.eos_token_ids = {config.eos_token_id};
  out.weight_bytes = weights.bytes();
  out.model = MakeModel(config, std::move(weights), placement);
  return out;
}

}  // namespace

std::vector<std::string> Gpt2Family::presets() const {
  return {"gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "tiny"};
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Gpt2Family::LoadTokenizer(
    const std::string& dir) const {
  if (dir.empty()) {
    return Gpt2Tokenizer::FromStrings(EmbeddedGpt2VocabJson(), EmbeddedGpt2Merges());
  }
  const std::string vocab = dir + "/vocab.json";
  const std::string merges = dir + "/merges.txt";
  if (FileExists(vocab) && FileExists(merges)) return Gpt2Tokenizer::FromFiles(vocab, merges);
  const std::string fast = dir + "/tokenizer.json";
  if (FileExists(fast)) return Gpt2Tokenizer::FromTokenizerJson(fast);
  return absl::NotFoundError(absl::StrCat(
      dir, ": expected vocab.json and merges.txt, or tokenizer.json (GPT-2's byte-level BPE)"));
}

absl::StatusOr<FamilyModel> Gpt2Family::Load(const std::string& dir,
                                             const WeightPlacement& placement) const {
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, LoadTokenizer(dir));
  ASSIGN_OR_RETURN(const Gpt2Config config, Gpt2Config::FromFile(dir + "/config.json"));
  ASSIGN_OR_RETURN(std::unique_ptr<CheckpointReader> reader, CheckpointReader::Open(dir));
  ASSIGN_OR_RETURN(Gpt2Weights weights,
                   Gpt2Weights::Load(*reader, config, placement.dtype, placement.device));
  return Describe(BaseName(dir), config, std::move(weights), std::move(tokenizer), placement);
}

absl::StatusOr<FamilyModel> Gpt2Family::LoadRandom(absl::string_view preset, uint64_t seed,
                                                   const WeightPlacement& placement) const {
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, LoadTokenizer(""));
  ASSIGN_OR_RETURN(const Gpt2Config config, Gpt2Config::Preset(preset));
  Gpt2Weights weights = Gpt2Weights::Random(config, seed).To(placement.dtype, placement.device);
  return Describe(absl::StrCat(preset, "-random"), config, std::move(weights),
                  std::move(tokenizer), placement);
}

absl::Status Gpt2Family::WriteRandom(const std::string& dir, absl::string_view preset,
                                     const RandomCheckpointOptions& options,
                                     at::ScalarType dtype) const {
  const ShapeOverrides& overrides = options.overrides;
  ASSIGN_OR_RETURN(Gpt2Config config, Gpt2Config::Preset(preset));
  if (overrides.num_layers > 0) config.n_layer = overrides.num_layers;
  if (overrides.hidden_size > 0) config.n_embd = overrides.hidden_size;
  if (overrides.num_heads > 0) config.n_head = overrides.num_heads;
  if (overrides.max_positions > 0) config.n_positions = overrides.max_positions;
  if (overrides.vocab_size > 0) {
    config.vocab_size = overrides.vocab_size;
    config.bos_token_id = config.eos_token_id = overrides.vocab_size - 1;
  }
  return WriteRandomGpt2Checkpoint(dir, config, options.seed, dtype, options.max_shard_bytes);
}

absl::Status WriteRandomGpt2Checkpoint(const std::string& dir, const Gpt2Config& config,
                                       uint64_t seed, at::ScalarType dtype,
                                       int64_t max_shard_bytes) {
  RETURN_IF_ERROR(config.Validate());
  const Gpt2Weights weights = Gpt2Weights::Random(config, seed);
  RETURN_IF_ERROR(WriteCheckpointTensors(dir, weights.Named(), dtype, seed, max_shard_bytes));
  RETURN_IF_ERROR(WriteTextFile(dir + "/config.json", config.ToJson()));
  RETURN_IF_ERROR(WriteTextFile(dir + "/vocab.json", EmbeddedGpt2VocabJson()));
  RETURN_IF_ERROR(WriteTextFile(dir + "/merges.txt", EmbeddedGpt2Merges()));
  return absl::OkStatus();
}

}  // namespace tandem
