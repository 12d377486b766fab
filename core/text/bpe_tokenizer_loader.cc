// BpeTokenizer's loader: FromFiles, FromStrings and Load, which read
// tokenizer.json (through tokenizer_json_model.h and
// tokenizer_json_pipeline.h) and tokenizer_config.json (bos/eos tokens,
// add_bos_token/add_eos_token, chat_template) into a BpeTokenizer.
//
// Loading builds a new tokenizer and touches no shared state, so loads may
// run concurrently; the caller owns the tokenizer returned.
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/read_file.h"
#include "core/text/bpe_model.h"
#include "core/text/bpe_tokenizer.h"
#include "core/text/tokenizer_json_model.h"
#include "core/text/tokenizer_json_pipeline.h"
#include "core/text/tokenizer_json_reader.h"

namespace tandem {
namespace {

using tokenizer_json::FieldReader;
using tokenizer_json::Json;
using tokenizer_json::Quote;
using tokenizer_json::Show;
using tokenizer_json::CheckDecoder;
using tokenizer_json::ModelTables;
using tokenizer_json::ParseAddedTokens;
using tokenizer_json::ParseModel;
using tokenizer_json::ParseNormalizer;
using tokenizer_json::ParsePostProcessor;
using tokenizer_json::ParsePreTokenizer;
using tokenizer_json::ParseTokenizerJson;
using tokenizer_json::Template;

// tokenizer_config.json's bos_token / eos_token: a string, an object with
// "content" (an AddedToken), or null.
absl::StatusOr<std::optional<std::string>> ConfigToken(const FieldReader& r, const Json& config,
                                                       absl::string_view key) {
  const Json* value = FieldReader::Find(config, key);
  if (value == nullptr) return std::optional<std::string>();
  if (value->is_string()) return std::optional<std::string>(value->get<std::string>());
  if (value->is_object()) {
    absl::StatusOr<std::optional<std::string>> content = r.OptString(*value, "content", key);
    if (!content.ok()) return content.status();
    if (content->has_value()) return content;
  }
  return r.Error(key, absl::StrCat("expected a string or {\"content\": ...}, got ", Show(*value)));
}

absl::StatusOr<std::optional<std::string>> ChatTemplate(const FieldReader& r, const Json& config) {
  const Json* value = FieldReader::Find(config, "chat_template");
  if (value == nullptr) return std::optional<std::string>();
  if (value->is_string()) return std::optional<std::string>(value->get<std::string>());
  if (value->is_array()) {
    for (size_t i = 0; i < value->size(); ++i) {
      const Json& entry = (*value)[i];
      const Json* name = FieldReader::Find(entry, "name");
      const Json* text = FieldReader::Find(entry, "template");
      if (name == nullptr || !name->is_string() || text == nullptr || !text->is_string()) {
        return r.Error(FieldReader::Index("chat_template", i),
                       "expected {\"name\": string, \"template\": string}");
      }
      if (name->get<std::string>() == "default") {
        return std::optional<std::string>(text->get<std::string>());
      }
    }
    return std::optional<std::string>();
  }
  return r.Error("chat_template", "expected a string or a list of {name, template}");
}

}  // namespace

absl::StatusOr<std::unique_ptr<BpeTokenizer>> BpeTokenizer::FromFiles(
    const std::string& tokenizer_json_path, const std::string& tokenizer_config_json_path) {
  absl::StatusOr<std::string> tokenizer_json = ReadFile(tokenizer_json_path);
  if (!tokenizer_json.ok()) return tokenizer_json.status();
  std::string config_json;
  if (!tokenizer_config_json_path.empty()) {
    absl::StatusOr<std::string> config = ReadFile(tokenizer_config_json_path);
    if (!config.ok()) return config.status();
    config_json = std::move(*config);
    if (config_json.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(tokenizer_config_json_path, ": the file is empty"));
    }
  }
  return LoadNoThrow(*tokenizer_json, tokenizer_json_path, config_json,
                     tokenizer_config_json_path);
}

absl::StatusOr<std::unique_ptr<BpeTokenizer>> BpeTokenizer::FromStrings(
    absl::string_view tokenizer_json, absl::string_view tokenizer_config_json) {
  return LoadNoThrow(tokenizer_json, "tokenizer.json", tokenizer_config_json,
                     tokenizer_config_json.empty() ? "" : "tokenizer_config.json");
}

absl::StatusOr<std::unique_ptr<BpeTokenizer>> BpeTokenizer::LoadNoThrow(
    absl::string_view tokenizer_json, absl::string_view tokenizer_name,
    absl::string_view config_json, absl::string_view config_name) {
  // Every field is type-checked before use, so nothing below should throw;
  // this is the backstop (e.g. std::bad_alloc on a huge vocab).
  try {
    return Load(tokenizer_json, tokenizer_name, config_json, config_name);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(tokenizer_name, ": cannot load: ", e.what()));
  }
}

absl::StatusOr<std::unique_ptr<BpeTokenizer>> BpeTokenizer::Load(
    absl::string_view tokenizer_json, absl::string_view tokenizer_name,
    absl::string_view config_json, absl::string_view config_name) {
  const FieldReader r(tokenizer_name);
  absl::StatusOr<std::unique_ptr<BpeModel>> model;
  absl::StatusOr<Json> root;
  {
    ModelTables tables;
    root = ParseTokenizerJson(r, tokenizer_json, &tables);
    if (!root.ok()) return root.status();
    model = ParseModel(r, *root, tables);
    if (!model.ok()) return model.status();
  }
  Parts parts;
  absl::StatusOr<std::vector<AddedToken>> added = ParseAddedTokens(r, *root);
  if (!added.ok()) return added.status();
  parts.added_tokens = std::move(*added);
  if (const Json* normalizer = FieldReader::Find(*root, "normalizer"); normalizer != nullptr) {
    absl::Status status = ParseNormalizer(r, *normalizer, "normalizer", &parts.normalizer);
    if (!status.ok()) return status;
  }
  bool saw_byte_level = false;
  if (const Json* pre = FieldReader::Find(*root, "pre_tokenizer"); pre != nullptr) {
    absl::Status status =
        ParsePreTokenizer(r, *pre, "pre_tokenizer", &saw_byte_level, &parts.pre_tokenizer);
    if (!status.ok()) return status;
  }
  if (!saw_byte_level) {
    return r.Error("pre_tokenizer", "has no ByteLevel pre-tokenizer (only byte-level BPE is "
                                    "supported)");
  }
  Template post;
  if (const Json* processor = FieldReader::Find(*root, "post_processor"); processor != nullptr) {
    absl::Status status = ParsePostProcessor(r, *processor, "post_processor", &post);
    if (!status.ok()) return status;
  }
  // A missing decoder is accepted: decoding always maps the byte-level
  // alphabet back to bytes.
  if (const Json* decoder = FieldReader::Find(*root, "decoder"); decoder != nullptr) {
    absl::Status status = CheckDecoder(r, *decoder, "decoder");
    if (!status.ok()) return status;
  }
  parts.prefix_ids = post.prefix;
  parts.suffix_ids = post.suffix;
  parts.add_bos_token = !post.prefix.empty();
  absl::StatusOr<std::unique_ptr<BpeTokenizer>> tokenizer =
      FromParts(std::move(*model), std::move(parts));
  if (!tokenizer.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(tokenizer_name, ": ",
                                                   tokenizer.status().message()));
  }
  BpeTokenizer& tok = **tokenizer;
  if (config_json.empty()) return tokenizer;

  const FieldReader c(config_name);
  absl::StatusOr<Json> config = c.Parse(config_json);
  if (!config.ok()) return config.status();
  for (const char* key : {"bos_token", "eos_token"}) {
    absl::StatusOr<std::optional<std::string>> name = ConfigToken(c, *config, key);
    if (!name.ok()) return name.status();
    if (!name->has_value()) continue;
    const std::optional<int32_t> id = tok.TokenId(**name);
    if (!id.has_value()) {
      return c.Error(key, absl::StrCat(Quote(**name), " is not a token of ", tokenizer_name));
    }
    (std::string(key) == "bos_token" ? tok.bos_token_id_ : tok.eos_token_id_) = *id;
  }
  const auto config_flag = [&](const char* key) -> absl::StatusOr<std::optional<bool>> {
    if (FieldReader::Find(*config, key) == nullptr) return std::optional<bool>();
    absl::StatusOr<bool> value = c.Bool(*config, key, "", false);
    if (!value.ok()) return value.status();
    return std::optional<bool>(*value);
  };
  absl::StatusOr<std::optional<bool>> add_bos = config_flag("add_bos_token");
  if (!add_bos.ok()) return add_bos.status();
  absl::StatusOr<std::optional<bool>> add_eos = config_flag("add_eos_token");
  if (!add_eos.ok()) return add_eos.status();
  // As transformers' Llama tokenizers do, explicit flags override the
  // post-processor's template.
  if (add_bos->has_value()) {
    if (**add_bos && !tok.bos_token_id_.has_value()) {
      return c.Error("add_bos_token", "is true but bos_token is not set");
    }
    tok.add_bos_token_ = **add_bos;
    tok.prefix_ids_.clear();
    if (**add_bos) tok.prefix_ids_.push_back(*tok.bos_token_id_);
  }
  if (add_eos->has_value()) {
    if (**add_eos && !tok.eos_token_id_.has_value()) {
      return c.Error("add_eos_token", "is true but eos_token is not set");
    }
    tok.suffix_ids_.clear();
    if (**add_eos) tok.suffix_ids_.push_back(*tok.eos_token_id_);
  }
  absl::StatusOr<std::optional<std::string>> chat_template = ChatTemplate(c, *config);
  if (!chat_template.ok()) return chat_template.status();
  tok.chat_template_ = std::move(*chat_template);
  return tokenizer;
}

}  // namespace tandem
