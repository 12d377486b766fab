// GPT-2 byte-level BPE tokenizer (vocab.json + merges.txt).
//
// Encoding follows OpenAI's reference encoder.py (and Hugging Face's GPT-2
// tokenizer): the text is split with GPT-2's pre-tokenization regex
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// (\s being the Unicode White_Space property, as in Python's `regex` module),
// each piece is mapped byte by byte through the bytes_to_unicode() table, and
// BPE merges are applied by rank. "<|endoftext|>" occurring in the text is
// emitted as the special id, as Hugging Face does.

#ifndef TANDEM_CORE_TEXT_GPT2_TOKENIZER_H_
#define TANDEM_CORE_TEXT_GPT2_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/text/tokenizer.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace tandem {

// Immutable after construction and holds no mutable state (no word cache:
// BPE on a word costs about as much as a cache lookup would), so every const
// method is safe to call from many threads at once without locking.
// Instances are owned by the caller through the returned unique_ptr.
class Gpt2Tokenizer : public Tokenizer {
 public:
  // The special end-of-text token.
  static constexpr absl::string_view kEndOfText = "<|endoftext|>";

  // Loads vocab.json (token string -> id, tokens written in GPT-2's
  // byte-level unicode alphabet) and merges.txt (one "left right" pair per
  // line, lowest rank first; a leading "#version" line is optional).
  // Errors name the file and, where it applies, the line:
  //   NotFoundError         - a file is missing;
  //   InvalidArgumentError  - unreadable file, malformed JSON, a vocab value
  //                           that is not a non-negative integer, a duplicate
  //                           id, a vocab lacking one of the 256 byte
  //                           symbols, a merges line that is not two symbols,
  //                           or a merge whose symbols or result are not in
  //                           the vocab.
  static absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> FromFiles(
      const std::string& vocab_json_path, const std::string& merges_txt_path);
  // Same as FromFiles but from the file contents; errors name the inputs
  // "vocab.json" and "merges.txt".
  static absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> FromStrings(
      absl::string_view vocab_json, absl::string_view merges_txt);
  // A Hugging Face fast-tokenizer file (tokenizer.json) of a byte-level BPE
  // model: model.vocab and model.merges (as "a b" strings or ["a", "b"]
  // pairs). Errors name the file; other model types are rejected.
  static absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> FromTokenizerJson(
      const std::string& path);

  Gpt2Tokenizer(const Gpt2Tokenizer&) = delete;
  Gpt2Tokenizer& operator=(const Gpt2Tokenizer&) = delete;
  ~Gpt2Tokenizer() override;

  // Encodes arbitrary bytes. Text is expected to be UTF-8; bytes that are not
  // valid UTF-8 are still encoded (each maximal run of them forms its own
  // pre-token), so Decode(Encode(x)) == x holds for any x.
  std::vector<int32_t> Encode(absl::string_view text) const override;

  // Concatenates the raw bytes of the tokens (the result may be invalid
  // UTF-8, e.g. when a multi-byte character is split across calls). Invalid
  // ids contribute nothing.
  std::string Decode(absl::Span<const int32_t> ids) const override;

  // Raw bytes of one token. `id` must be valid; for an invalid id an empty
  // string is returned. The reference stays valid for the tokenizer's life.
  const std::string& TokenBytes(int32_t id) const override;

  // True when `id` names a token of the vocab.
  bool IsValidId(int32_t id) const override;

  // One more than the largest id in the vocab.
  int32_t vocab_size() const override;

  // Id of the special token "<|endoftext|>" (matched in text before BPE),
  // or -1 when the vocab lacks it. Whether it ends a generation is the
  // model's config's business, not the tokenizer's.
  int32_t end_of_text_id() const;

 private:
  // One slot of the merge table. Empty slots have key kEmptyKey.
  struct MergeSlot {
    uint64_t key;    // PairKey(left id, right id).
    int32_t rank;    // Line order in merges.txt, lowest first.
    int32_t result;  // Id of the merged symbol.
  };
  static constexpr uint64_t kEmptyKey = ~uint64_t{0};

  Gpt2Tokenizer();

  static absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> Create(
      absl::string_view vocab_json, absl::string_view merges_txt,
      absl::string_view vocab_name, absl::string_view merges_name);

  // The steps of Create: the vocab (token bytes, byte symbols, the
  // end-of-text id), the merge table, and the pre-tokenization regex.
  absl::Status SetVocab(const std::unordered_map<std::string, int32_t>& vocab,
                        absl::string_view vocab_name);
  absl::Status SetMerges(absl::string_view merges_txt,
                         const std::unordered_map<std::string, int32_t>& vocab,
                         absl::string_view merges_name);
  absl::Status CompilePattern();

  // Encodes text that contains no special token, appending to `out`.
  void EncodeOrdinary(absl::string_view text, std::vector<int32_t>* out) const;
  // Byte-level BPE of one pre-token, appending ids to `out`.
  void BytePairMerge(absl::string_view piece, std::vector<int32_t>* out) const;
  // Returns the slot for the pair, or nullptr when the pair never merges.
  const MergeSlot* FindMerge(int32_t left, int32_t right) const;
  // Adds or overwrites a merge; the table must have a free slot.
  void InsertMerge(int32_t left, int32_t right, int32_t rank, int32_t result);
  size_t MergeSlotIndex(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) &
           merge_mask_;
  }

  static uint64_t PairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }

  // Raw bytes of each id; index = id. Holes (ids absent from the vocab) are
  // empty and marked false in `valid_`.
  std::vector<std::string> token_bytes_;
  std::vector<bool> valid_;
  // Vocab id of the single-byte token for each byte value.
  int32_t byte_ids_[256];
  // (left id, right id) -> merge rank and resulting id: an open-addressing
  // table with linear probing, its size a power of two at most half full.
  std::vector<MergeSlot> merge_slots_;
  size_t merge_mask_ = 0;
  int32_t end_of_text_id_ = -1;
  // Pre-tokenization regex (GPT-2's pattern without the lookahead branch).
  std::unique_ptr<re2::RE2> pattern_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_GPT2_TOKENIZER_H_
