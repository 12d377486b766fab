#include "core/text/chat_template.h"

namespace tandem {

absl::StatusOr<std::vector<int32_t>> ChatTemplate::RenderTokenIds(
    const std::vector<ChatMessage>& messages, const Tokenizer& tokenizer) const {
  absl::StatusOr<std::string> prompt = Render(messages);
  if (!prompt.ok()) return prompt.status();
  return renders_special_tokens() ? tokenizer.Encode(*prompt) : tokenizer.EncodePrompt(*prompt);
}

}  // namespace tandem
