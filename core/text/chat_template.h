// How a conversation becomes a prompt: the model's chat template.
#ifndef TANDEM_CORE_TEXT_CHAT_TEMPLATE_H_
#define TANDEM_CORE_TEXT_CHAT_TEMPLATE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tandem {

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
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_CHAT_TEMPLATE_H_
