// How a conversation becomes a prompt: the model's chat template.
#ifndef TANDEM_CORE_TEXT_CHAT_TEMPLATE_H_
#define TANDEM_CORE_TEXT_CHAT_TEMPLATE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tandem {

class Tokenizer;

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// Implementations are immutable: Render may be called from many threads.
// A model family supplies its checkpoints' template (FamilyModel); the
// OpenAI chat endpoint renders with it.
class ChatTemplate {
 public:
  virtual ~ChatTemplate() = default;
  // The prompt for `messages`, ending where the assistant's reply starts.
  virtual absl::StatusOr<std::string> Render(const std::vector<ChatMessage>& messages) const = 0;
  // Stop strings the template implies (where the reply's turn would end).
  virtual std::vector<std::string> stop_strings() const = 0;
  // Whether Render's text holds every special token the prompt gets (a
  // checkpoint's own template writes Llama 3's <|begin_of_text|>, and
  // transformers adds none to it), so that it is encoded as is.
  virtual bool renders_special_tokens() const = 0;

  // The prompt's token ids: Render's text, encoded as is where the template
  // wrote the special tokens (transformers' apply_chat_template tokenizes
  // with add_special_tokens=False), else as a completion prompt is
  // (Tokenizer::EncodePrompt: the BOS where the tokenizer adds one).
  absl::StatusOr<std::vector<int32_t>> RenderTokenIds(const std::vector<ChatMessage>& messages,
                                                      const Tokenizer& tokenizer) const;
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_CHAT_TEMPLATE_H_
