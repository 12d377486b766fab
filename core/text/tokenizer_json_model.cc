// Streaming parse of tokenizer.json and validation of its "model"; see
// tokenizer_json_model.h.
#include "core/text/tokenizer_json_model.h"

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tandem {
namespace tokenizer_json {

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
}  // namespace tokenizer_json
}  // namespace tandem
