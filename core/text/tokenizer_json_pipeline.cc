// The tokenizer.json sections around the model: added tokens, normalizer,
// pre-tokenizer, post-processor and decoder; see tokenizer_json_pipeline.h.
#include "core/text/tokenizer_json_pipeline.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/text/regex_splitter.h"

namespace tandem {
namespace tokenizer_json {
namespace {

absl::Status Unsupported(const FieldReader& r, absl::string_view path,
                         absl::string_view type, absl::string_view supported) {
  return r.Error(FieldReader::Path(path, "type"),
                 absl::StrCat("\"", type, "\" is not supported (supported: ",
                              supported, ")"));
}

absl::Status ParseTemplate(const FieldReader& r, const Json& node, const std::string& path,
                           Template* out) {
  if (out->present) return r.Error(path, "a second TemplateProcessing is not supported");
  out->present = true;
  const Json* single = FieldReader::Find(node, "single");
  const std::string single_path = FieldReader::Path(path, "single");
  if (single == nullptr || !single->is_array()) {
    return r.Error(single_path, "missing or not an array");
  }
  const Json* specials = FieldReader::Find(node, "special_tokens");
  bool saw_sequence = false;
  for (size_t i = 0; i < single->size(); ++i) {
    const Json& item = (*single)[i];
    const std::string item_path = FieldReader::Index(single_path, i);
    if (const Json* sequence = FieldReader::Find(item, "Sequence"); sequence != nullptr) {
      absl::StatusOr<std::optional<std::string>> id = r.OptString(*sequence, "id", item_path + ".Sequence");
      if (!id.ok()) return id.status();
      if (!id->has_value() || **id != "A" || saw_sequence) {
        return r.Error(item_path, "only one Sequence, with id \"A\", is supported");
      }
      saw_sequence = true;
      continue;
    }
    const Json* special = FieldReader::Find(item, "SpecialToken");
    if (special == nullptr) {
      return r.Error(item_path, "expected {\"SpecialToken\": ...} or {\"Sequence\": ...}");
    }
    absl::StatusOr<std::optional<std::string>> name =
        r.OptString(*special, "id", item_path + ".SpecialToken");
    if (!name.ok()) return name.status();
    if (!name->has_value()) return r.Error(item_path + ".SpecialToken.id", "missing");
    const Json* entry = specials == nullptr ? nullptr : FieldReader::Find(*specials, **name);
    const std::string entry_path =
        FieldReader::Path(path, absl::StrCat("special_tokens[", Quote(**name), "]"));
    if (entry == nullptr) return r.Error(entry_path, "missing");
    const Json* ids = FieldReader::Find(*entry, "ids");
    if (ids == nullptr || !ids->is_array()) {
      return r.Error(FieldReader::Path(entry_path, "ids"), "missing or not an array");
    }
    for (size_t j = 0; j < ids->size(); ++j) {
      absl::StatusOr<int32_t> id =
          r.Id((*ids)[j], FieldReader::Index(FieldReader::Path(entry_path, "ids"), j));
      if (!id.ok()) return id.status();
      (saw_sequence ? out->suffix : out->prefix).push_back(*id);
    }
  }
  if (!saw_sequence) return r.Error(single_path, "lacks the Sequence \"A\"");
  return absl::OkStatus();
}

}  // namespace

// tokenizer.json's "added_tokens".
absl::StatusOr<std::vector<AddedToken>> ParseAddedTokens(const FieldReader& r,
                                                         const Json& root) {
  std::vector<AddedToken> tokens;
  const Json* list = FieldReader::Find(root, "added_tokens");
  if (list == nullptr) return tokens;
  if (!list->is_array()) return r.Error("added_tokens", "not an array");
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& entry = (*list)[i];
    const std::string path = FieldReader::Index("added_tokens", i);
    if (!entry.is_object()) return r.Error(path, "not an object");
    AddedToken token;
    const Json* id = FieldReader::Find(entry, "id");
    if (id == nullptr) return r.Error(FieldReader::Path(path, "id"), "missing");
    absl::StatusOr<int32_t> parsed_id = r.Id(*id, FieldReader::Path(path, "id"));
    if (!parsed_id.ok()) return parsed_id.status();
    token.id = *parsed_id;
    absl::StatusOr<std::optional<std::string>> content = r.OptString(entry, "content", path);
    if (!content.ok()) return content.status();
    if (!content->has_value() || (*content)->empty()) {
      return r.Error(FieldReader::Path(path, "content"), "missing or empty");
    }
    token.content = **content;
    const auto flag = [&](const char* key, bool fallback, bool* out) {
      absl::StatusOr<bool> value = r.Bool(entry, key, path, fallback);
      if (value.ok()) *out = *value;
      return value.status();
    };
    absl::Status status = flag("special", false, &token.special);
    if (status.ok()) status = flag("lstrip", false, &token.lstrip);
    if (status.ok()) status = flag("rstrip", false, &token.rstrip);
    if (status.ok()) status = flag("single_word", false, &token.single_word);
    // Hugging Face's default: special tokens match the raw text.
    if (status.ok()) status = flag("normalized", !token.special, &token.normalized);
    if (!status.ok()) return status;
    tokens.push_back(std::move(token));
  }
  return tokens;
}

absl::Status ParseNormalizer(const FieldReader& r, const Json& node,
                             const std::string& path,
                             std::vector<NormalizationForm>* forms) {
  absl::StatusOr<std::string> type = r.Type(node, path);
  if (!type.ok()) return type.status();
  if (*type == "NFC") {
    forms->push_back(NormalizationForm::kNFC);
  } else if (*type == "NFD") {
    forms->push_back(NormalizationForm::kNFD);
  } else if (*type == "NFKC") {
    forms->push_back(NormalizationForm::kNFKC);
  } else if (*type == "NFKD") {
    forms->push_back(NormalizationForm::kNFKD);
  } else if (*type == "Sequence") {
    const Json* list = FieldReader::Find(node, "normalizers");
    const std::string list_path = FieldReader::Path(path, "normalizers");
    if (list == nullptr || !list->is_array()) return r.Error(list_path, "missing or not an array");
    for (size_t i = 0; i < list->size(); ++i) {
      absl::Status status = ParseNormalizer(r, (*list)[i], FieldReader::Index(list_path, i), forms);
      if (!status.ok()) return status;
    }
  } else {
    return Unsupported(r, path, *type, "NFC, NFD, NFKC, NFKD, Sequence");
  }
  return absl::OkStatus();
}

absl::Status ParsePreTokenizer(const FieldReader& r, const Json& node,
                               const std::string& path, bool* saw_byte_level,
                               std::vector<BpeTokenizer::PreTokenizerStep>* steps) {
  absl::StatusOr<std::string> type = r.Type(node, path);
  if (!type.ok()) return type.status();
  if (*type == "Sequence") {
    const Json* list = FieldReader::Find(node, "pretokenizers");
    const std::string list_path = FieldReader::Path(path, "pretokenizers");
    if (list == nullptr || !list->is_array()) return r.Error(list_path, "missing or not an array");
    for (size_t i = 0; i < list->size(); ++i) {
      absl::Status status = ParsePreTokenizer(r, (*list)[i], FieldReader::Index(list_path, i),
                                              saw_byte_level, steps);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  if (*type == "Split") {
    if (*saw_byte_level) {
      // It would see the byte-level alphabet, which this implementation
      // never materializes.
      return r.Error(path, "a Split after the ByteLevel pre-tokenizer is not supported");
    }
    absl::StatusOr<std::optional<std::string>> behavior = r.OptString(node, "behavior", path);
    if (!behavior.ok()) return behavior.status();
    if (!behavior->has_value()) return r.Error(FieldReader::Path(path, "behavior"), "missing");
    if (**behavior != "Isolated") {
      return r.Error(FieldReader::Path(path, "behavior"),
                     absl::StrCat("\"", **behavior, "\" is not supported (only \"Isolated\")"));
    }
    absl::StatusOr<bool> invert = r.Bool(node, "invert", path, false);
    if (!invert.ok()) return invert.status();
    if (*invert) return r.Error(FieldReader::Path(path, "invert"), "true is not supported");
    const Json* pattern = FieldReader::Find(node, "pattern");
    const std::string pattern_path = FieldReader::Path(path, "pattern");
    if (pattern == nullptr || !pattern->is_object()) {
      return r.Error(pattern_path, "missing or not an object");
    }
    absl::StatusOr<std::optional<std::string>> regex = r.OptString(*pattern, "Regex", pattern_path);
    if (!regex.ok()) return regex.status();
    absl::StatusOr<std::optional<std::string>> literal =
        r.OptString(*pattern, "String", pattern_path);
    if (!literal.ok()) return literal.status();
    absl::StatusOr<std::unique_ptr<RegexSplitter>> splitter =
        regex->has_value() ? RegexSplitter::FromRegex(**regex)
        : literal->has_value()
            ? RegexSplitter::FromLiteral(**literal)
            : absl::StatusOr<std::unique_ptr<RegexSplitter>>(
                  absl::InvalidArgumentError("expected {\"Regex\": ...} or {\"String\": ...}"));
    if (!splitter.ok()) {
      return r.Error(regex->has_value()     ? FieldReader::Path(pattern_path, "Regex")
                     : literal->has_value() ? FieldReader::Path(pattern_path, "String")
                                            : pattern_path,
                     splitter.status().message());
    }
    steps->push_back({std::shared_ptr<const RegexSplitter>(std::move(*splitter)), false});
    return absl::OkStatus();
  }
  if (*type == "ByteLevel") {
    if (*saw_byte_level) return r.Error(path, "a second ByteLevel pre-tokenizer is not supported");
    *saw_byte_level = true;
    // Hugging Face's defaults: both true.
    absl::StatusOr<bool> add_prefix_space = r.Bool(node, "add_prefix_space", path, true);
    if (!add_prefix_space.ok()) return add_prefix_space.status();
    absl::StatusOr<bool> use_regex = r.Bool(node, "use_regex", path, true);
    if (!use_regex.ok()) return use_regex.status();
    BpeTokenizer::PreTokenizerStep step;
    step.add_prefix_space = *add_prefix_space;
    if (*use_regex) {
      absl::StatusOr<std::unique_ptr<RegexSplitter>> gpt2 =
          RegexSplitter::FromRegex(RegexSplitter::kGpt2Pattern);
      if (!gpt2.ok()) return gpt2.status();  // A bug: the pattern is fixed.
      step.split = std::move(*gpt2);
    }
    steps->push_back(std::move(step));
    return absl::OkStatus();
  }
  return Unsupported(r, path, *type, "Sequence, Split, ByteLevel");
}

absl::Status ParsePostProcessor(const FieldReader& r, const Json& node,
                                const std::string& path, Template* out) {
  absl::StatusOr<std::string> type = r.Type(node, path);
  if (!type.ok()) return type.status();
  if (*type == "ByteLevel") return absl::OkStatus();  // Offsets only.
  if (*type == "TemplateProcessing") return ParseTemplate(r, node, path, out);
  if (*type == "Sequence") {
    const Json* list = FieldReader::Find(node, "processors");
    const std::string list_path = FieldReader::Path(path, "processors");
    if (list == nullptr || !list->is_array()) return r.Error(list_path, "missing or not an array");
    for (size_t i = 0; i < list->size(); ++i) {
      absl::Status status = ParsePostProcessor(r, (*list)[i], FieldReader::Index(list_path, i), out);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  return Unsupported(r, path, *type, "ByteLevel, TemplateProcessing, Sequence");
}

absl::Status CheckDecoder(const FieldReader& r, const Json& node, const std::string& path) {
  absl::StatusOr<std::string> type = r.Type(node, path);
  if (!type.ok()) return type.status();
  if (*type == "ByteLevel") return absl::OkStatus();
  if (*type == "Sequence") {
    const Json* list = FieldReader::Find(node, "decoders");
    const std::string list_path = FieldReader::Path(path, "decoders");
    if (list == nullptr || !list->is_array()) return r.Error(list_path, "missing or not an array");
    for (size_t i = 0; i < list->size(); ++i) {
      absl::Status status = CheckDecoder(r, (*list)[i], FieldReader::Index(list_path, i));
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  return Unsupported(r, path, *type, "ByteLevel, Sequence");
}

}  // namespace tokenizer_json
}  // namespace tandem
