#include "core/text/gpt2_tokenizer.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/base/read_file.h"
#include "core/text/utf8.h"
#include "core/text/vocab_json.h"

namespace tandem {
namespace {

// Unicode White_Space (what \s means in Python's `regex` module, in
// Oniguruma and in Rust's regex), written as the body of an RE2 class.
constexpr absl::string_view kWhitespaceClass =
    "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}"
    "\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

bool IsWhitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// Returns the length (1-4) of the well-formed UTF-8 sequence starting at
// s[pos] and stores its code point in *cp, or returns 0 when the bytes there
// are not a well-formed sequence.
int DecodeUtf8(absl::string_view s, size_t pos, char32_t* cp) {
  const Utf8Sequence seq = ScanUtf8Sequence(s, pos);
  if (seq.kind != Utf8SequenceKind::kValid) return 0;
  *cp = DecodeUtf8Sequence(s, pos, seq.length);
  return static_cast<int>(seq.length);
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// GPT-2's bytes_to_unicode(): printable Latin-1 bytes map to themselves, the
// other 68 bytes to U+0100.. in byte order.
struct ByteLevelTables {
  char32_t byte_to_char[256];
  // Inverse, indexed by code point (all are below 0x100 + 68); -1 = none.
  int16_t char_to_byte[0x100 + 68];

  ByteLevelTables() {
    for (auto& b : char_to_byte) b = -1;
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') ||
                             (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      byte_to_char[b] = printable ? b : 0x100 + n++;
      char_to_byte[byte_to_char[b]] = static_cast<int16_t>(b);
    }
  }
};

const ByteLevelTables& Tables() {
  static const ByteLevelTables* const tables = new ByteLevelTables();
  return *tables;
}

// Maps a vocab token (byte-level alphabet) to its raw bytes. A token holding
// characters outside that alphabet (e.g. an added special token) stands for
// its own UTF-8 text.
std::string TokenToBytes(const std::string& token) {
  const ByteLevelTables& tables = Tables();
  std::string bytes;
  bytes.reserve(token.size());
  for (size_t pos = 0; pos < token.size();) {
    char32_t c = 0;
    const int len = DecodeUtf8(token, pos, &c);
    if (len == 0 || c >= std::size(tables.char_to_byte) ||
        tables.char_to_byte[c] < 0) {
      return token;
    }
    bytes.push_back(static_cast<char>(tables.char_to_byte[c]));
    pos += len;
  }
  return bytes;
}

}  // namespace

Gpt2Tokenizer::Gpt2Tokenizer() = default;
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
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  const nlohmann::json json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a JSON object"));
  }
  const auto model = json.find("model");
  if (model == json.end() || !model->is_object() || model->value("type", "") != "BPE") {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": model.type is not \"BPE\" (only GPT-2's byte-level BPE is supported)"));
  }
  const auto vocab = model->find("vocab");
  const auto merges = model->find("merges");
  if (vocab == model->end() || !vocab->is_object() || merges == model->end() ||
      !merges->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": expected model.vocab (object) and model.merges (array)"));
  }
  // Re-serialize into the vocab.json / merges.txt forms and reuse their parser.
  std::string merges_txt;
  for (const nlohmann::json& merge : *merges) {
    if (merge.is_string()) {
      merges_txt += merge.get<std::string>();
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      merges_txt += merge[0].get<std::string>() + " " + merge[1].get<std::string>();
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": model.merges holds ", merge.dump(), ", not a merge"));
    }
    merges_txt += "\n";
  }
  return Create(vocab->dump(), merges_txt, path + " (model.vocab)", path + " (model.merges)");
}

absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> Gpt2Tokenizer::Create(
    absl::string_view vocab_json, absl::string_view merges_txt,
    absl::string_view vocab_name, absl::string_view merges_name) {
  std::unique_ptr<Gpt2Tokenizer> tok(new Gpt2Tokenizer());
  absl::StatusOr<std::unordered_map<std::string, int32_t>> parsed =
      ParseVocabJson(vocab_json);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(vocab_name, ": ", parsed.status().message()));
  }
  const std::unordered_map<std::string, int32_t>& vocab = *parsed;
  absl::Status status = tok->SetVocab(vocab, vocab_name);
  if (status.ok()) status = tok->SetMerges(merges_txt, vocab, merges_name);
  if (status.ok()) status = tok->CompilePattern();
  if (!status.ok()) return status;
  return tok;
}

absl::Status Gpt2Tokenizer::SetVocab(const std::unordered_map<std::string, int32_t>& vocab,
                                     absl::string_view vocab_name) {
  if (vocab.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(vocab_name, ": the vocab is empty"));
  }
  int32_t max_id = 0;
  for (const auto& [token, id] : vocab) max_id = std::max(max_id, id);
  token_bytes_.resize(static_cast<size_t>(max_id) + 1);
  valid_.assign(static_cast<size_t>(max_id) + 1, false);
  for (const auto& [token, id] : vocab) {
    if (valid_[id]) {
      return absl::InvalidArgumentError(absl::StrCat(
          vocab_name, ": id ", id, " is used by more than one token"));
    }
    valid_[id] = true;
    token_bytes_[id] = TokenToBytes(token);
  }
  const ByteLevelTables& tables = Tables();
  for (int b = 0; b < 256; ++b) {
    std::string symbol;
    AppendUtf8(tables.byte_to_char[b], &symbol);
    auto it = vocab.find(symbol);
    if (it == vocab.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          vocab_name, ": the vocab lacks the byte-level symbol \"", symbol,
          "\" for byte ", b));
    }
    byte_ids_[b] = it->second;
  }
  auto eos = vocab.find(std::string(kEndOfText));
  end_of_text_id_ = eos == vocab.end() ? -1 : eos->second;

  return absl::OkStatus();
}

absl::Status Gpt2Tokenizer::SetMerges(absl::string_view merges_txt,
                                      const std::unordered_map<std::string, int32_t>& vocab,
                                      absl::string_view merges_name) {
  const std::vector<absl::string_view> lines = absl::StrSplit(merges_txt, '\n');
  size_t capacity = 16;
  while (capacity < 2 * lines.size()) capacity *= 2;
  merge_slots_.assign(capacity, MergeSlot{kEmptyKey, 0, 0});
  merge_mask_ = capacity - 1;
  int32_t rank = 0;
  int line_number = 0;
  for (absl::string_view line : lines) {
    ++line_number;
    absl::ConsumeSuffix(&line, "\r");
    if (line_number == 1 && absl::StartsWith(line, "#version")) continue;
    std::vector<absl::string_view> parts =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (parts.empty()) continue;  // Blank line (e.g. the final newline).
    const auto error = [&](absl::string_view what) {
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
    if (parts.size() != 2) {
      return error(absl::StrCat("expected two symbols, got ", parts.size()));
    }
    const auto left = vocab.find(std::string(parts[0]));
    if (left == vocab.end()) return error("left symbol is not in the vocab");
    const auto right = vocab.find(std::string(parts[1]));
    if (right == vocab.end()) return error("right symbol is not in the vocab");
    const auto result = vocab.find(absl::StrCat(parts[0], parts[1]));
    if (result == vocab.end()) {
      return error("merged symbol is not in the vocab");
    }
    // As in the reference implementations, a repeated pair keeps its last
    // rank.
    InsertMerge(left->second, right->second, rank++, result->second);
  }

  return absl::OkStatus();
}

absl::Status Gpt2Tokenizer::CompilePattern() {
  // GPT-2's pattern minus the `\s+(?!\S)` branch, which Encode emulates.
  const std::string pattern = absl::StrCat(
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^)", kWhitespaceClass,
      R"(\p{L}\p{N}]+|[)", kWhitespaceClass, "]+");
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(int64_t{64} << 20);
  pattern_ = std::make_unique<re2::RE2>(pattern, options);
  if (!pattern_->ok()) {
    return absl::InternalError(absl::StrCat(
        "cannot compile the pre-tokenization regex: ", pattern_->error()));
  }
  return absl::OkStatus();
}

std::vector<int32_t> Gpt2Tokenizer::Encode(absl::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  if (end_of_text_id_ < 0) {
    EncodeOrdinary(text, &ids);
    return ids;
  }
  while (!text.empty()) {
    const size_t special = text.find(kEndOfText);
    if (special == absl::string_view::npos) {
      EncodeOrdinary(text, &ids);
      break;
    }
    EncodeOrdinary(text.substr(0, special), &ids);
    ids.push_back(end_of_text_id_);
    text.remove_prefix(special + kEndOfText.size());
  }
  return ids;
}

void Gpt2Tokenizer::EncodeOrdinary(absl::string_view text,
                                   std::vector<int32_t>* out) const {
  const re2::StringPiece input(text.data(), text.size());
  const size_t n = text.size();
  size_t pos = 0;
  while (pos < n) {
    re2::StringPiece match;
    size_t end;
    if (pattern_->Match(input, pos, n, re2::RE2::ANCHOR_START, &match, 1)) {
      end = pos + match.size();
      // Emulate `\s+(?!\S)`: a whitespace run (the only kind of match that
      // ends in whitespace) of two or more characters that is followed by
      // something gives up its last character, which is matched again.
      size_t last = end - 1;
      while (last > pos && (static_cast<unsigned char>(text[last]) & 0xC0) ==
                               0x80) {
        --last;
      }
      char32_t c = 0;
      if (last > pos && end < n && DecodeUtf8(text, last, &c) > 0 &&
          IsWhitespace(c)) {
        end = last;
      }
    } else {
      // Only bytes that are not valid UTF-8 fail to match; each maximal run
      // of them becomes one pre-token.
      end = pos + 1;
      char32_t c;
      while (end < n && DecodeUtf8(text, end, &c) == 0) ++end;
    }
    BytePairMerge(text.substr(pos, end - pos), out);
    pos = end;
  }
}

void Gpt2Tokenizer::BytePairMerge(absl::string_view piece,
                                  std::vector<int32_t>* out) const {
  // Symbols form a doubly linked list over the piece's bytes; candidate pairs
  // sit in a min-heap keyed by (rank, position), so the lowest-ranked pair is
  // merged first and equal pairs left to right, as in GPT-2's encoder.
  struct Symbol {
    int32_t id;    // -1 once merged into its left neighbour.
    int32_t prev;  // -1 at the start.
    int32_t next;  // -1 at the end.
  };
  struct Candidate {
    int32_t rank;
    int32_t left;
    int32_t right;
    int32_t left_id;
    int32_t right_id;
    int32_t result;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : left > other.left;
    }
  };
  if (piece.size() == 1) {
    out->push_back(byte_ids_[static_cast<unsigned char>(piece[0])]);
    return;
  }
  const int32_t n = static_cast<int32_t>(piece.size());
  std::vector<Symbol> symbols(n);
  for (int32_t i = 0; i < n; ++i) {
    symbols[i] = {byte_ids_[static_cast<unsigned char>(piece[i])], i - 1,
                  i + 1 < n ? i + 1 : -1};
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  const auto push = [&](int32_t left) {
    if (left < 0) return;
    const int32_t right = symbols[left].next;
    if (right < 0) return;
    const MergeSlot* merge = FindMerge(symbols[left].id, symbols[right].id);
    if (merge == nullptr) return;
    heap.push({merge->rank, left, right, symbols[left].id, symbols[right].id,
               merge->result});
  };
  for (int32_t i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    Symbol& left = symbols[c.left];
    if (left.id != c.left_id || left.next != c.right ||
        symbols[c.right].id != c.right_id) {
      continue;  // Stale: one side has been merged since.
    }
    left.id = c.result;
    left.next = symbols[c.right].next;
    if (left.next >= 0) symbols[left.next].prev = c.left;
    symbols[c.right].id = -1;
    push(left.prev);
    push(c.left);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) {
    out->push_back(symbols[i].id);
  }
}

const Gpt2Tokenizer::MergeSlot* Gpt2Tokenizer::FindMerge(int32_t left,
                                                         int32_t right) const {
  const uint64_t key = PairKey(left, right);
  for (size_t i = MergeSlotIndex(key);; i = (i + 1) & merge_mask_) {
    const MergeSlot& slot = merge_slots_[i];
    if (slot.key == key) return &slot;
    if (slot.key == kEmptyKey) return nullptr;
  }
}

void Gpt2Tokenizer::InsertMerge(int32_t left, int32_t right, int32_t rank,
                                int32_t result) {
  const uint64_t key = PairKey(left, right);
  for (size_t i = MergeSlotIndex(key);; i = (i + 1) & merge_mask_) {
    MergeSlot& slot = merge_slots_[i];
    if (slot.key == key || slot.key == kEmptyKey) {
      slot = MergeSlot{key, rank, result};
      return;
    }
  }
}

std::string Gpt2Tokenizer::Decode(absl::Span<const int32_t> ids) const {
  size_t size = 0;
  for (int32_t id : ids) size += TokenBytes(id).size();
  std::string text;
  text.reserve(size);
  for (int32_t id : ids) text += TokenBytes(id);
  return text;
}

const std::string& Gpt2Tokenizer::TokenBytes(int32_t id) const {
  static const std::string* const kEmpty = new std::string();
  return IsValidId(id) ? token_bytes_[id] : *kEmpty;
}

bool Gpt2Tokenizer::IsValidId(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < valid_.size() && valid_[id];
}

int32_t Gpt2Tokenizer::vocab_size() const {
  return static_cast<int32_t>(token_bytes_.size());
}

int32_t Gpt2Tokenizer::end_of_text_id() const { return end_of_text_id_; }

}  // namespace tandem
