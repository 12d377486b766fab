// GPT-2 byte-level BPE tokenizer (vocab.json + merges.txt), a BpeTokenizer
// with GPT-2's pipeline.
//
// Encoding follows OpenAI's reference encoder.py (and Hugging Face's GPT-2
// tokenizer): the text is split with GPT-2's pre-tokenization regex
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// (\s being the Unicode White_Space property, as in Python's `regex` module
// and Oniguruma), each piece is mapped byte by byte through the
// bytes_to_unicode() table, and BPE merges are applied by rank.
// "<|endoftext|>" occurring in the text is emitted as the special id, as
// Hugging Face does.

#ifndef TANDEM_CORE_TEXT_GPT2_TOKENIZER_H_
#define TANDEM_CORE_TEXT_GPT2_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/text/tokenizer.h"

namespace tandem {

class BpeTokenizer;

// Immutable after construction and holds no mutable state (no word cache:
// BPE on a word costs about as much as a cache lookup would), so every const
// method is safe to call from many threads at once without locking.
// Instances are owned by the caller through the returned unique_ptr; each
// owns its BpeTokenizer.
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
  // model, loaded by BpeTokenizer::FromFiles (so its added tokens,
  // pre-tokenizer and normalizer are the file's; for GPT-2's file that is
  // the pipeline above). Errors name the file and the field; other model
  // types are rejected.
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

  // The tokenizer doing the work.
  const BpeTokenizer& bpe() const { return *bpe_; }

 private:
  Gpt2Tokenizer(std::unique_ptr<BpeTokenizer> bpe, int32_t end_of_text_id);

  static absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> Create(
      absl::string_view vocab_json, absl::string_view merges_txt,
      absl::string_view vocab_name, absl::string_view merges_name);

  std::unique_ptr<const BpeTokenizer> bpe_;
  int32_t end_of_text_id_ = -1;
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_GPT2_TOKENIZER_H_
