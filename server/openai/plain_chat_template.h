// The chat template for models without one (GPT-2): plain text turns.
#ifndef TANDEM_SERVER_OPENAI_PLAIN_CHAT_TEMPLATE_H_
#define TANDEM_SERVER_OPENAI_PLAIN_CHAT_TEMPLATE_H_

#include "server/openai/chat_template.h"

namespace tandem {

// Renders each message as "<Role>: <content>\n\n" (System, User,
// Assistant), then "Assistant:" for the reply. The reply ends where the
// model starts another turn: the stop strings are "\nUser:" and
// "\nSystem:". Content is used as given.
class PlainChatTemplate : public ChatTemplate {
 public:
  absl::StatusOr<std::string> Render(const std::vector<ChatMessage>& messages) const override;
  std::vector<std::string> stop_strings() const override;
};

}  // namespace tandem

#endif  // TANDEM_SERVER_OPENAI_PLAIN_CHAT_TEMPLATE_H_
