#include "core/text/plain_chat_template.h"

#include "absl/strings/str_cat.h"

namespace tandem {

absl::StatusOr<std::string> PlainChatTemplate::Render(
    const std::vector<ChatMessage>& messages) const {
  std::string prompt;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    const char* role = m.role == "system"      ? "System"
                       : m.role == "user"      ? "User"
                       : m.role == "assistant" ? "Assistant"
                                               : nullptr;
    if (role == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("messages[", i, "].role must be system, user or assistant, not \"",
                       m.role, "\""));
    }
    absl::StrAppend(&prompt, role, ": ", m.content, "\n\n");
  }
  absl::StrAppend(&prompt, "Assistant:");
  return prompt;
}

std::vector<std::string> PlainChatTemplate::stop_strings() const {
  return {"\nUser:", "\nSystem:"};
}

}  // namespace tandem
