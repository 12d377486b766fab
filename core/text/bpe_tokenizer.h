// A Hugging Face byte-level BPE tokenizer loaded from tokenizer.json (and,
// optionally, tokenizer_config.json): Llama 3, Qwen2/Qwen3, GPT-2 and the
// like.
//
// Encoding follows Hugging Face's `tokenizers` pipeline:
//   1. added tokens (tokenizer.json "added_tokens", special or not, with
//      "normalized": false) are cut out of the raw text, leftmost-longest;
//   2. each remaining segment is normalized ("normalizer": NFC, NFD, NFKC,
//      NFKD or a Sequence of them), and added tokens with "normalized": true
//      are cut out of the result;
//   3. the pre-tokenizer ("pre_tokenizer": a Split with behavior Isolated, a
//      ByteLevel, or a Sequence of them) cuts it into pre-tokens;
//   4. the BPE model ("model": type BPE, vocab, merges, ignore_merges)
//      turns each pre-token's bytes into ids.
// Decoding concatenates each token's raw bytes (the ByteLevel decoder);
// added tokens decode to their content.
//
// What is not supported fails at load with an error naming the field: other
// model types, BPE dropout, subword prefixes/suffixes, byte_fallback, other
// normalizers, pre-tokenizers, post-processors and decoders, Split
// behaviours other than Isolated, and invert: true. "truncation" and
// "padding" are ignored.

#ifndef TANDEM_CORE_TEXT_BPE_TOKENIZER_H_
#define TANDEM_CORE_TEXT_BPE_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/text/added_token_matcher.h"
#include "core/text/tokenizer.h"
#include "core/text/unicode_normalizer.h"

namespace tandem {

class BpeModel;
class RegexSplitter;

// Immutable after construction and without caches, so every const method is
// safe to call from many threads at once without locking. Instances are
// owned by the caller through the returned unique_ptr; the tokenizer owns
// its model, regexes and tables.
class BpeTokenizer : public Tokenizer {
 public:
  // One step of the pre-tokenizer: first, with add_prefix_space, a space is
  // prepended to each piece that does not start with one (ByteLevel's
  // option); then each piece is split (Isolated) on `split`, when set.
  struct PreTokenizerStep {
    std::shared_ptr<const RegexSplitter> split;
    bool add_prefix_space = false;
  };

  // Everything around the model, for FromParts.
  struct Parts {
    std::vector<AddedToken> added_tokens;
    std::vector<NormalizationForm> normalizer;
    std::vector<PreTokenizerStep> pre_tokenizer;
    // What EncodeWithSpecialTokens puts before and after the text.
    std::vector<int32_t> prefix_ids;
    std::vector<int32_t> suffix_ids;
    std::optional<int32_t> bos_token_id;
    std::optional<int32_t> eos_token_id;
    bool add_bos_token = false;
    std::optional<std::string> chat_template;
  };

  // Loads tokenizer.json and, unless `tokenizer_config_json_path` is empty,
  // tokenizer_config.json. Errors:
  //   NotFoundError         - a file is missing;
  //   InvalidArgumentError  - unreadable file, malformed JSON, a missing or
  //                           mistyped field, an unsupported construct, a
  //                           regex that does not compile, a merge whose
  //                           symbols or result are not in the vocab, a
  //                           vocab lacking one of the 256 byte symbols, an
  //                           id used twice, a bos/eos token that is not a
  //                           token; each names the file and the field
  //                           (e.g. "tokenizer.json: model.merges[12]: ...").
  // From tokenizer_config.json: bos_token / eos_token (a string or an object
  // with "content"), add_bos_token / add_eos_token, chat_template (a string,
  // or a list of {name, template} of which "default" is taken).
  static absl::StatusOr<std::unique_ptr<BpeTokenizer>> FromFiles(
      const std::string& tokenizer_json_path,
      const std::string& tokenizer_config_json_path);
  // The same from the files' contents (`tokenizer_config_json` may be
  // empty); errors name "tokenizer.json" and "tokenizer_config.json".
  static absl::StatusOr<std::unique_ptr<BpeTokenizer>> FromStrings(
      absl::string_view tokenizer_json, absl::string_view tokenizer_config_json);
  // A tokenizer from a model built elsewhere (e.g. GPT-2's vocab.json and
  // merges.txt) and the rest of the pipeline. InvalidArgumentError when
  // `model` is null, when the pre-tokenizer is empty, or when an id in
  // `parts` is negative or (prefix/suffix/bos/eos) names no token.
  static absl::StatusOr<std::unique_ptr<BpeTokenizer>> FromParts(
      std::unique_ptr<BpeModel> model, Parts parts);

  BpeTokenizer(const BpeTokenizer&) = delete;
  BpeTokenizer& operator=(const BpeTokenizer&) = delete;
  ~BpeTokenizer() override;

  // Encodes the text as it is, adding no BOS/EOS (transformers'
  // add_special_tokens=False); special tokens written in the text are still
  // recognized. Without a normalizer Decode(Encode(x)) == x for any bytes
  // (bytes that are not UTF-8 are encoded as bytes); with one it gives the
  // normalized x. Whitespace swallowed by lstrip/rstrip tokens is lost.
  std::vector<int32_t> Encode(absl::string_view text) const override;
  // Encode plus the post-processor's special tokens: prefix_ids() before,
  // suffix_ids() after (transformers' add_special_tokens=True).
  std::vector<int32_t> EncodeWithSpecialTokens(absl::string_view text) const;
  // A prompt: prefix_ids() (the BOS, where add_bos_token) then Encode(text);
  // no suffix, so a prompt never ends in an EOS.
  std::vector<int32_t> EncodePrompt(absl::string_view text) const override;

  // Concatenates the tokens' bytes; invalid ids contribute nothing.
  std::string Decode(absl::Span<const int32_t> ids) const override;
  // Raw bytes of a token (an added token's content for added tokens); empty
  // for an invalid id. The reference stays valid for the tokenizer's life.
  const std::string& TokenBytes(int32_t id) const override;
  bool IsValidId(int32_t id) const override;
  int32_t vocab_size() const override;

  // The id of the added token whose content is `token` or else of the vocab
  // token whose raw bytes are `token` (so TokenId("<|eot_id|>") and
  // TokenId(" the") both work).
  std::optional<int32_t> TokenId(absl::string_view token) const;
  // Whether `id` is an added token marked special.
  bool IsSpecialToken(int32_t id) const;

  // From tokenizer_config.json's bos_token / eos_token.
  std::optional<int32_t> bos_token_id() const { return bos_token_id_; }
  std::optional<int32_t> eos_token_id() const { return eos_token_id_; }
  // Whether EncodeWithSpecialTokens starts with the BOS: tokenizer_config's
  // add_bos_token when present, else whether the post-processor's
  // TemplateProcessing puts a special token before the text.
  bool add_bos_token() const { return add_bos_token_; }
  const std::vector<int32_t>& prefix_ids() const { return prefix_ids_; }
  const std::vector<int32_t>& suffix_ids() const { return suffix_ids_; }
  // tokenizer_config.json's chat_template, when it has one.
  const std::optional<std::string>& chat_template() const {
    return chat_template_;
  }
  // One more than the largest id of the model's vocab (added tokens
  // aside), and the number of added tokens.
  int32_t model_vocab_size() const;
  size_t num_added_tokens() const { return added_content_.size(); }

 private:
  BpeTokenizer();

  // FromStrings with the names that errors give the two inputs; the second
  // turns exceptions into errors.
  static absl::StatusOr<std::unique_ptr<BpeTokenizer>> LoadNoThrow(
      absl::string_view tokenizer_json, absl::string_view tokenizer_name,
      absl::string_view config_json, absl::string_view config_name);
  static absl::StatusOr<std::unique_ptr<BpeTokenizer>> Load(
      absl::string_view tokenizer_json, absl::string_view tokenizer_name,
      absl::string_view config_json, absl::string_view config_name);

  // Steps 2-4 of the pipeline on a plain segment of raw text.
  void EncodeSegment(absl::string_view text, std::vector<int32_t>* out) const;
  // Steps 3-4.
  void EncodeNormalized(absl::string_view text, std::vector<int32_t>* out) const;

  std::unique_ptr<const BpeModel> model_;
  std::unique_ptr<const AddedTokenMatcher> raw_matcher_;         // normalized: false
  std::unique_ptr<const AddedTokenMatcher> normalized_matcher_;  // normalized: true
  std::unique_ptr<const UnicodeNormalizer> normalizer_;          // null: none
  std::vector<PreTokenizerStep> pre_tokenizer_;
  // Added tokens: id -> content, content -> id, and the special ones.
  absl::flat_hash_map<int32_t, std::string> added_content_;
  absl::flat_hash_map<std::string, int32_t> added_ids_;
  absl::flat_hash_set<int32_t> special_ids_;
  int32_t vocab_size_ = 0;
  std::vector<int32_t> prefix_ids_;
  std::vector<int32_t> suffix_ids_;
  std::optional<int32_t> bos_token_id_;
  std::optional<int32_t> eos_token_id_;
  bool add_bos_token_ = false;
  std::optional<std::string> chat_template_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_BPE_TOKENIZER_H_
