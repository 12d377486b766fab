// What the engine and the server need of a tokenizer, whatever the model
// family: text <-> token ids, and each token's raw bytes for streaming.
#ifndef TANDEM_CORE_TEXT_TOKENIZER_H_
#define TANDEM_CORE_TEXT_TOKENIZER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tandem {

// Implementations are immutable after construction: every method is safe to
// call from many threads at once. Which ids end a generation is the model's
// business (ModelDescription::eos_token_ids), not the tokenizer's.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Encodes arbitrary bytes; Decode(Encode(x)) == x.
  virtual std::vector<int32_t> Encode(absl::string_view text) const = 0;
  // A prompt as the model expects it: Encode(text) after the leading special
  // tokens the tokenizer adds to every input (Llama 3's <|begin_of_text|>),
  // as transformers' encode(text) with add_special_tokens. Prompts of the
  // completions and gRPC APIs go through this; chat prompts only where the
  // chat template writes no special tokens (ChatTemplate::RenderTokenIds).
  virtual std::vector<int32_t> EncodePrompt(absl::string_view text) const { return Encode(text); }
  // Concatenates the raw bytes of the tokens (may be invalid UTF-8 when a
  // character is split across calls). Invalid ids contribute nothing.
  virtual std::string Decode(absl::Span<const int32_t> ids) const = 0;
  // Raw bytes of one token; empty for an invalid id. The reference stays
  // valid for the tokenizer's life.
  virtual const std::string& TokenBytes(int32_t id) const = 0;
  // True when `id` names a token of the vocabulary.
  virtual bool IsValidId(int32_t id) const = 0;
  // One more than the largest id.
  virtual int32_t vocab_size() const = 0;
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_TOKENIZER_H_
