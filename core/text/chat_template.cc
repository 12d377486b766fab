#include "core/text/chat_template.h"

#include "core/base/status_macros.h"
#include "core/text/tokenizer.h"

namespace tandem {

absl::StatusOr<std::vector<int32_t>> ChatTemplate::RenderTokenIds(
    const std::vector<ChatMessage>& messages, const Tokenizer& tokenizer) const {
  ASSIGN_OR_RETURN(const std::string prompt, Render(messages));
  return renders_special_tokens() ? tokenizer.Encode(prompt) : tokenizer.EncodePrompt(prompt);
}

}  // namespace tandem
