#include "core/text/bpe_tokenizer.h"

#include <cstdint>
#include <deque>
#include <exception>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/read_file.h"
#include "core/text/bpe_model.h"
#include "core/text/regex_splitter.h"
#include "core/text/vocab_json.h"

namespace tandem {
namespace {

using Json = nlohmann::json;

// At most ~80 bytes of `text`, cut at a character boundary, in quotes.
std::string Quote(absl::string_view text) {
  size_t quoted = std::min<size_t>(text.size(), 80);
  while (quoted < text.size() && quoted > 0 &&
         (static_cast<unsigned char>(text[quoted]) & 0xC0) == 0x80) {
    --quoted;
  }
  return absl::StrCat("\"", text.substr(0, quoted),
                      quoted < text.size() ? "...\"" : "\"");
}

// A JSON value, for messages: its dump, shortened.
std::string Show(const Json& value) {
  return Quote(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

// Reads fields of one file, producing errors "<file>: <field>: <what>".
class FieldReader {
 public:
  explicit FieldReader(absl::string_view file) : file_(file) {}

  absl::Status Error(absl::string_view field, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, ": ", field, ": ", what));
  }

  absl::StatusOr<Json> Parse(absl::string_view text,
                             Json::parser_callback_t callback = nullptr) const {
    Json json;
    try {
      json = Json::parse(text.begin(), text.end(), std::move(callback));
    } catch (const Json::parse_error& e) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_, ": malformed JSON: ", e.what()));
    } catch (const std::exception& e) {  // e.g. std::bad_alloc.
      return absl::InvalidArgumentError(
          absl::StrCat(file_, ": cannot parse: ", e.what()));
    }
    if (!json.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(file_, ": not a JSON object"));
    }
    return json;
  }

  // The member `key` of `object`, or nullptr when absent or null.
  static const Json* Find(const Json& object, absl::string_view key) {
    if (!object.is_object()) return nullptr;
    const auto it = object.find(std::string(key));
    if (it == object.end() || it->is_null()) return nullptr;
    return &*it;
  }

  // A boolean member; `fallback` when absent or null.
  absl::StatusOr<bool> Bool(const Json& object, absl::string_view key,
                            absl::string_view path, bool fallback) const {
    const Json* value = Find(object, key);
    if (value == nullptr) return fallback;
    if (!value->is_boolean()) {
      return Error(Path(path, key), absl::StrCat("expected true or false, got ", Show(*value)));
    }
    return value->get<bool>();
  }

  // A string member; nullopt when absent or null.
  absl::StatusOr<std::optional<std::string>> OptString(
      const Json& object, absl::string_view key, absl::string_view path) const {
    const Json* value = Find(object, key);
    if (value == nullptr) return std::optional<std::string>();
    if (!value->is_string()) {
      return Error(Path(path, key), absl::StrCat("expected a string, got ", Show(*value)));
    }
    return std::optional<std::string>(value->get<std::string>());
  }

  // The "type" member of a component at `path`.
  absl::StatusOr<std::string> Type(const Json& component,
                                   absl::string_view path) const {
    if (!component.is_object()) {
      return Error(path, absl::StrCat("expected an object, got ", Show(component)));
    }
    absl::StatusOr<std::optional<std::string>> type = OptString(component, "type", path);
    if (!type.ok()) return type.status();
    if (!type->has_value()) return Error(Path(path, "type"), "missing");
    return **type;
  }

  // A token id: an integer in [0, kMaxTokenId].
  absl::StatusOr<int32_t> Id(const Json& value, absl::string_view path) const {
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() <= static_cast<uint64_t>(kMaxTokenId)) {
      return static_cast<int32_t>(value.get<uint64_t>());
    }
    if (value.is_number_integer() && value.get<int64_t>() < 0) {
      return Error(path, absl::StrCat("the id ", value.get<int64_t>(), " is negative"));
    }
    return Error(path, absl::StrCat("expected a token id (an integer from 0 to ",
                                    kMaxTokenId, "), got ", Show(value)));
  }

  static std::string Path(absl::string_view path, absl::string_view key) {
    return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
  }
  static std::string Index(absl::string_view path, size_t i) {
    return absl::StrCat(path, "[", i, "]");
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

absl::Status Unsupported(const FieldReader& r, absl::string_view path,
                         absl::string_view type, absl::string_view supported) {
  return r.Error(FieldReader::Path(path, "type"),
                 absl::StrCat("\"", type, "\" is not supported (supported: ",
                              supported, ")"));
}

// model.vocab and model.merges of tokenizer.json, taken out while parsing:
// a DOM of their million-odd small values would cost more than the rest of
// loading together.
struct ModelTables {
  bool vocab_seen = false;   // model.vocab was an object.
  bool merges_seen = false;  // model.merges was an array.
  std::vector<std::pair<std::string, Json>> vocab;
  std::vector<Json> merges;
  std::optional<std::string> nested_vocab_value;  // A key whose value is not a scalar.
};

absl::StatusOr<Json> ParseTokenizerJson(const FieldReader& r, absl::string_view text,
                                        ModelTables* tables) {
  using Event = Json::parse_event_t;
  enum class In { kOther, kVocab, kMerges };
  std::string root_key, model_key, pending_key;
  In in = In::kOther;
  // Depths as nlohmann counts them: the root's members are at 1, model's
  // at 2, the members of model.vocab and model.merges at 3.
  return r.Parse(text, [&](int depth, Event event, Json& parsed) -> bool {
    if (depth == 1 && event == Event::key) {
      root_key = parsed.get<std::string>();
      return true;
    }
    if (depth < 2 || root_key != "model") return true;
    if (depth == 2) {
      if (event == Event::key) {
        model_key = parsed.get<std::string>();
        in = In::kOther;
      } else if (event == Event::object_start && model_key == "vocab") {
        in = In::kVocab;
        tables->vocab_seen = true;
      } else if (event == Event::array_start && model_key == "merges") {
        in = In::kMerges;
        tables->merges_seen = true;
      } else if (event == Event::object_end || event == Event::array_end) {
        in = In::kOther;
      }
      return true;
    }
    if (depth != 3 || in == In::kOther) return true;
    // Returning false keeps the value out of the DOM.
    if (in == In::kVocab) {
      switch (event) {
        case Event::key:
          pending_key = std::move(parsed.get_ref<std::string&>());
          return false;
        case Event::value:
          tables->vocab.emplace_back(std::move(pending_key), std::move(parsed));
          return false;
        case Event::object_start:
        case Event::array_start:
          if (!tables->nested_vocab_value) tables->nested_vocab_value = pending_key;
          return false;
        default:
          return true;
      }
    }
    switch (event) {
      case Event::value:
      case Event::array_end:
      case Event::object_end:
        tables->merges.push_back(std::move(parsed));
        return false;
      default:
        return true;
    }
  });
}

// tokenizer.json's "model"; its vocab and merges are in `tables`.
absl::StatusOr<std::unique_ptr<BpeModel>> ParseModel(const FieldReader& r, const Json& root,
                                                     const ModelTables& tables) {
  const Json* model = FieldReader::Find(root, "model");
  if (model == nullptr) return r.Error("model", "missing");
  absl::StatusOr<std::string> type = r.Type(*model, "model");
  if (!type.ok()) return type.status();
  if (*type != "BPE") {
    return r.Error("model.type", absl::StrCat("\"", *type,
                                             "\" is not supported (only \"BPE\", "
                                             "byte-level)"));
  }
  if (const Json* dropout = FieldReader::Find(*model, "dropout");
      dropout != nullptr && !(dropout->is_number() && dropout->get<double>() == 0.0)) {
    return r.Error("model.dropout", "BPE dropout is not supported");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    absl::StatusOr<std::optional<std::string>> affix = r.OptString(*model, key, "model");
    if (!affix.ok()) return affix.status();
    if (affix->has_value() && !(*affix)->empty()) {
      return r.Error(FieldReader::Path("model", key), "is not supported (must be null or \"\")");
    }
  }
  absl::StatusOr<bool> byte_fallback = r.Bool(*model, "byte_fallback", "model", false);
  if (!byte_fallback.ok()) return byte_fallback.status();
  if (*byte_fallback) {
    return r.Error("model.byte_fallback", "is not supported by a byte-level BPE");
  }
  absl::StatusOr<bool> ignore_merges = r.Bool(*model, "ignore_merges", "model", false);
  if (!ignore_merges.ok()) return ignore_merges.status();

  if (!tables.vocab_seen) return r.Error("model.vocab", "missing or not an object");
  if (tables.nested_vocab_value.has_value()) {
    return r.Error(absl::StrCat("model.vocab[", Quote(*tables.nested_vocab_value), "]"),
                   "expected a token id, got an object or array");
  }
  std::vector<BpeModel::VocabEntry> vocab;
  vocab.reserve(tables.vocab.size());
  for (const auto& [token, id_json] : tables.vocab) {
    absl::StatusOr<int32_t> id = r.Id(id_json, absl::StrCat("model.vocab[", Quote(token), "]"));
    if (!id.ok()) return id.status();
    vocab.push_back({token, *id});
  }
  if (!tables.merges_seen) return r.Error("model.merges", "missing or not an array");
  std::vector<BpeModel::Merge> merges;
  merges.reserve(tables.merges.size());
  for (size_t i = 0; i < tables.merges.size(); ++i) {
    const Json& merge = tables.merges[i];
    BpeModel::Merge parsed;
    bool ok = false;
    if (merge.is_string()) {
      // "left right": exactly one space (tokens hold none: it is "Ġ").
      const std::string& text = merge.get_ref<const std::string&>();
      const size_t space = text.find(' ');
      if (space != std::string::npos && text.find(' ', space + 1) == std::string::npos) {
        parsed = {absl::string_view(text).substr(0, space),
                  absl::string_view(text).substr(space + 1)};
        ok = true;
      }
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      parsed = {merge[0].get_ref<const std::string&>(), merge[1].get_ref<const std::string&>()};
      ok = true;
    }
    if (!ok || parsed.left.empty() || parsed.right.empty()) {
      return r.Error(FieldReader::Index("model.merges", i),
                     absl::StrCat("expected \"left right\" or [\"left\", \"right\"], got ",
                                  Show(merge)));
    }
    merges.push_back(parsed);
  }
  size_t bad_merge = SIZE_MAX;
  absl::StatusOr<std::unique_ptr<BpeModel>> bpe =
      BpeModel::Create(vocab, merges, *ignore_merges, &bad_merge);
  if (!bpe.ok()) {
    if (bad_merge == SIZE_MAX) return r.Error("model.vocab", bpe.status().message());
    return r.Error(FieldReader::Index("model.merges", bad_merge),
                   absl::StrCat(bpe.status().message(), " in ", Show(tables.merges[bad_merge])));
  }
  return std::move(*bpe);
}

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

// The special tokens that a post-processor puts around the text.
struct Template {
  bool present = false;
  std::vector<int32_t> prefix;
  std::vector<int32_t> suffix;
};

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

BpeTokenizer::BpeTokenizer() = default;
BpeTokenizer::~BpeTokenizer() = default;

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

absl::StatusOr<std::unique_ptr<BpeTokenizer>> BpeTokenizer::FromParts(
    std::unique_ptr<BpeModel> model, Parts parts) {
  if (model == nullptr) return absl::InvalidArgumentError("no BPE model");
  if (parts.pre_tokenizer.empty()) return absl::InvalidArgumentError("no pre-tokenizer");
  std::unique_ptr<BpeTokenizer> tok(new BpeTokenizer());
  tok->vocab_size_ = model->vocab_size();
  tok->model_ = std::move(model);
  std::vector<AddedToken> raw, normalized;
  for (AddedToken& token : parts.added_tokens) {
    if (token.id < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("added token ", Quote(token.content), " has a negative id"));
    }
    tok->vocab_size_ = std::max(tok->vocab_size_, token.id + 1);
    tok->added_content_[token.id] = token.content;
    tok->added_ids_[token.content] = token.id;
    if (token.special) tok->special_ids_.insert(token.id);
    (token.normalized && !parts.normalizer.empty() ? normalized : raw).push_back(token);
  }
  if (!raw.empty()) tok->raw_matcher_ = std::make_unique<AddedTokenMatcher>(raw);
  if (!normalized.empty()) tok->normalized_matcher_ = std::make_unique<AddedTokenMatcher>(normalized);
  if (!parts.normalizer.empty()) {
    tok->normalizer_ = std::make_unique<UnicodeNormalizer>(std::move(parts.normalizer));
  }
  tok->pre_tokenizer_ = std::move(parts.pre_tokenizer);
  for (const std::vector<int32_t>* ids : {&parts.prefix_ids, &parts.suffix_ids}) {
    for (int32_t id : *ids) {
      if (!tok->IsValidId(id)) {
        return absl::InvalidArgumentError(
            absl::StrCat("the post-processor's token id ", id, " is not a token"));
      }
    }
  }
  for (const std::optional<int32_t>& id : {parts.bos_token_id, parts.eos_token_id}) {
    if (id.has_value() && !tok->IsValidId(*id)) {
      return absl::InvalidArgumentError(absl::StrCat("the bos/eos id ", *id, " is not a token"));
    }
  }
  tok->prefix_ids_ = std::move(parts.prefix_ids);
  tok->suffix_ids_ = std::move(parts.suffix_ids);
  tok->bos_token_id_ = parts.bos_token_id;
  tok->eos_token_id_ = parts.eos_token_id;
  tok->add_bos_token_ = parts.add_bos_token;
  tok->chat_template_ = std::move(parts.chat_template);
  return tok;
}

std::vector<int32_t> BpeTokenizer::Encode(absl::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  if (raw_matcher_ == nullptr) {
    EncodeSegment(text, &ids);
    return ids;
  }
  std::vector<AddedTokenMatcher::Segment> segments;
  raw_matcher_->Split(text, &segments);
  for (const AddedTokenMatcher::Segment& segment : segments) {
    if (segment.id >= 0) {
      ids.push_back(segment.id);
    } else {
      EncodeSegment(segment.text, &ids);
    }
  }
  return ids;
}

std::vector<int32_t> BpeTokenizer::EncodeWithSpecialTokens(absl::string_view text) const {
  std::vector<int32_t> ids = prefix_ids_;
  const std::vector<int32_t> body = Encode(text);
  ids.insert(ids.end(), body.begin(), body.end());
  ids.insert(ids.end(), suffix_ids_.begin(), suffix_ids_.end());
  return ids;
}

std::vector<int32_t> BpeTokenizer::EncodePrompt(absl::string_view text) const {
  std::vector<int32_t> ids = prefix_ids_;
  const std::vector<int32_t> body = Encode(text);
  ids.insert(ids.end(), body.begin(), body.end());
  return ids;
}

void BpeTokenizer::EncodeSegment(absl::string_view text, std::vector<int32_t>* out) const {
  std::string normalized;
  if (normalizer_ != nullptr && normalizer_->Normalize(text, &normalized)) text = normalized;
  if (normalized_matcher_ == nullptr) {
    EncodeNormalized(text, out);
    return;
  }
  std::vector<AddedTokenMatcher::Segment> segments;
  normalized_matcher_->Split(text, &segments);
  for (const AddedTokenMatcher::Segment& segment : segments) {
    if (segment.id >= 0) {
      out->push_back(segment.id);
    } else {
      EncodeNormalized(segment.text, out);
    }
  }
}

void BpeTokenizer::EncodeNormalized(absl::string_view text, std::vector<int32_t>* out) const {
  if (text.empty()) return;
  std::vector<absl::string_view> pieces = {text};
  std::vector<absl::string_view> next;
  std::deque<std::string> prefixed;  // Pieces with a space prepended.
  for (const PreTokenizerStep& step : pre_tokenizer_) {
    next.clear();
    for (absl::string_view piece : pieces) {
      if (step.add_prefix_space && piece.front() != ' ') {
        prefixed.push_back(absl::StrCat(" ", piece));
        piece = prefixed.back();
      }
      if (step.split != nullptr) {
        step.split->Split(piece, &next);
      } else {
        next.push_back(piece);
      }
    }
    pieces.swap(next);
  }
  for (absl::string_view piece : pieces) model_->Tokenize(piece, out);
}

std::string BpeTokenizer::Decode(absl::Span<const int32_t> ids) const {
  size_t size = 0;
  for (int32_t id : ids) size += TokenBytes(id).size();
  std::string text;
  text.reserve(size);
  for (int32_t id : ids) text += TokenBytes(id);
  return text;
}

const std::string& BpeTokenizer::TokenBytes(int32_t id) const {
  if (!added_content_.empty()) {
    const auto it = added_content_.find(id);
    if (it != added_content_.end()) return it->second;
  }
  return model_->TokenBytes(id);
}

bool BpeTokenizer::IsValidId(int32_t id) const {
  return model_->IsValidId(id) || added_content_.contains(id);
}

int32_t BpeTokenizer::vocab_size() const { return vocab_size_; }

int32_t BpeTokenizer::model_vocab_size() const { return model_->vocab_size(); }

std::optional<int32_t> BpeTokenizer::TokenId(absl::string_view token) const {
  const auto it = added_ids_.find(token);
  if (it != added_ids_.end()) return it->second;
  return model_->IdOfBytes(token);
}

bool BpeTokenizer::IsSpecialToken(int32_t id) const { return special_ids_.contains(id); }

}  // namespace tandem
