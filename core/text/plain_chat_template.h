// The chat template for models that have none of their own: plain text turns.
#ifndef TANDEM_CORE_TEXT_PLAIN_CHAT_TEMPLATE_H_
#define TANDEM_CORE_TEXT_PLAIN_CHAT_TEMPLATE_H_

#include "core/text/chat_template.h"

namespace tandem {

// Renders each message as "<Role>: <content>\n\n" (System, User,
// Assistant), then "Assistant:" for the reply. The reply ends where the
// model starts another turn: the stop strings are "\nUser:" and
// "\nSystem:". Content is used as given. It writes no special tokens: the
// prompt gets the tokenizer's own (the BOS of a base Llama 3 checkpoint) as a
// completion prompt does.
class PlainChatTemplate : public ChatTemplate {
 public:
  absl::StatusOr<std::string> Render(const std::vector<ChatMessage>& messages) const override;
  std::vector<std::string> stop_strings() const override;
  bool renders_special_tokens() const override { return false; }
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_PLAIN_CHAT_TEMPLATE_H_
