#include "core/text/gpt2_tokenizer.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/base/read_file.h"
#include "core/text/bpe_model.h"
#include "core/text/bpe_tokenizer.h"
#include "core/text/regex_splitter.h"
#include "core/text/vocab_json.h"

namespace tandem {

Gpt2Tokenizer::Gpt2Tokenizer(std::unique_ptr<BpeTokenizer> bpe,
                             int32_t end_of_text_id)
    : bpe_(std::move(bpe)), end_of_text_id_(end_of_text_id) {}

Gpt2Tokenizer::~Gpt2Tokenizer() = default;

absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> Gpt2Tokenizer::FromFiles(
    const std::string& vocab_json_path, const std::string& merges_txt_path) {
  absl::StatusOr<std::string> vocab = ReadFile(vocab_json_path);
  if (!vocab.ok()) return vocab.status();
  absl::StatusOr<std::string> merges = ReadFile(merges_txt_path);
  if (!merges.ok()) return merges.status();
  return Create(*vocab, *merges, vocab_json_path, merges_txt_path);
}

absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> Gpt2Tokenizer::FromStrings(
    absl::string_view vocab_json, absl::string_view merges_txt) {
  return Create(vocab_json, merges_txt, "vocab.json", "merges.txt");
}

absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> Gpt2Tokenizer::FromTokenizerJson(
    const std::string& path) {
  absl::StatusOr<std::unique_ptr<BpeTokenizer>> bpe =
      BpeTokenizer::FromFiles(path, /*tokenizer_config_json_path=*/"");
  if (!bpe.ok()) return bpe.status();
  const int32_t end_of_text = (*bpe)->TokenId(kEndOfText).value_or(-1);
  return std::unique_ptr<Gpt2Tokenizer>(
      new Gpt2Tokenizer(std::move(*bpe), end_of_text));
}

absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> Gpt2Tokenizer::Create(
    absl::string_view vocab_json, absl::string_view merges_txt,
    absl::string_view vocab_name, absl::string_view merges_name) {
  absl::StatusOr<std::unordered_map<std::string, int32_t>> parsed =
      ParseVocabJson(vocab_json);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(vocab_name, ": ", parsed.status().message()));
  }
  std::vector<BpeModel::VocabEntry> vocab;
  vocab.reserve(parsed->size());
  for (const auto& [token, id] : *parsed) vocab.push_back({token, id});

  // merges.txt, line by line. A malformed line ends the list handed to the
  // model, so that errors come in file order: the vocab's, then those of
  // the merges before the line, then the line's.
  const std::vector<absl::string_view> lines = absl::StrSplit(merges_txt, '\n');
  std::vector<BpeModel::Merge> merges;
  std::vector<int> line_numbers;  // Of each merge.
  merges.reserve(lines.size());
  line_numbers.reserve(lines.size());
  const auto line_error = [&](int line_number, absl::string_view what) {
    absl::string_view line = lines[line_number - 1];
    absl::ConsumeSuffix(&line, "\r");
    // Quote at most ~80 bytes of the line, cut at a character boundary.
    size_t quoted = std::min<size_t>(line.size(), 80);
    while (quoted < line.size() && quoted > 0 &&
           (static_cast<unsigned char>(line[quoted]) & 0xC0) == 0x80) {
      --quoted;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        merges_name, ":", line_number, ": ", what, " in \"",
        line.substr(0, quoted), quoted < line.size() ? "...\"" : "\""));
  };
  std::optional<absl::Status> malformed;
  for (size_t i = 0; i < lines.size() && !malformed; ++i) {
    absl::string_view line = lines[i];
    const int line_number = static_cast<int>(i) + 1;
    absl::ConsumeSuffix(&line, "\r");
    if (line_number == 1 && absl::StartsWith(line, "#version")) continue;
    const std::vector<absl::string_view> parts =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (parts.empty()) continue;  // Blank line (e.g. the final newline).
    if (parts.size() != 2) {
      malformed = line_error(line_number, absl::StrCat("expected two symbols, got ",
                                                       parts.size()));
      break;
    }
    merges.push_back({parts[0], parts[1]});
    line_numbers.push_back(line_number);
  }

  size_t bad_merge = SIZE_MAX;
  absl::StatusOr<std::unique_ptr<BpeModel>> model =
      BpeModel::Create(vocab, merges, /*ignore_merges=*/false, &bad_merge);
  if (!model.ok()) {
    if (bad_merge == SIZE_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat(vocab_name, ": ", model.status().message()));
    }
    return line_error(line_numbers[bad_merge], model.status().message());
  }
  if (malformed) return *malformed;

  BpeTokenizer::Parts parts;
  const auto end_of_text = parsed->find(std::string(kEndOfText));
  const int32_t end_of_text_id =
      end_of_text == parsed->end() ? -1 : end_of_text->second;
  if (end_of_text_id >= 0) {
    AddedToken token;
    token.id = end_of_text_id;
    token.content = std::string(kEndOfText);
    token.special = true;
    parts.added_tokens.push_back(std::move(token));
  }
  absl::StatusOr<std::unique_ptr<RegexSplitter>> pattern =
      RegexSplitter::FromRegex(RegexSplitter::kGpt2Pattern);
  if (!pattern.ok()) return pattern.status();  // A bug: the pattern is fixed.
  parts.pre_tokenizer.push_back({std::move(*pattern), /*add_prefix_space=*/false});
  absl::StatusOr<std::unique_ptr<BpeTokenizer>> bpe =
      BpeTokenizer::FromParts(std::move(*model), std::move(parts));
  if (!bpe.ok()) return bpe.status();
  return std::unique_ptr<Gpt2Tokenizer>(
      new Gpt2Tokenizer(std::move(*bpe), end_of_text_id));
}

std::vector<int32_t> Gpt2Tokenizer::Encode(absl::string_view text) const {
  return bpe_->Encode(text);
}

std::string Gpt2Tokenizer::Decode(absl::Span<const int32_t> ids) const {
  return bpe_->Decode(ids);
}

const std::string& Gpt2Tokenizer::TokenBytes(int32_t id) const {
  return bpe_->TokenBytes(id);
}

bool Gpt2Tokenizer::IsValidId(int32_t id) const { return bpe_->IsValidId(id); }

int32_t Gpt2Tokenizer::vocab_size() const { return bpe_->vocab_size(); }

int32_t Gpt2Tokenizer::end_of_text_id() const { return end_of_text_id_; }

}  // namespace tandem
