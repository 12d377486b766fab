#include "core/text/jinja/jinja_chat_template.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace tandem {

absl::StatusOr<std::unique_ptr<JinjaChatTemplate>> JinjaChatTemplate::Create(
    std::string source, std::string bos_token, std::string eos_token,
    std::vector<std::string> stop_strings) {
  absl::StatusOr<std::unique_ptr<jinja::JinjaTemplate>> compiled =
      jinja::JinjaTemplate::Parse(source);
  if (!compiled.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("chat template: ", compiled.status().message()));
  }
  std::unique_ptr<JinjaChatTemplate> chat(
      new JinjaChatTemplate(std::move(source), *std::move(compiled), std::move(bos_token),
                            std::move(eos_token), std::move(stop_strings)));
  const absl::StatusOr<std::string> with_system = chat->RenderMessages(
      {{"system", "You are a helpful assistant."},
       {"user", "Hello!"},
       {"assistant", "Hi! How can I help?"},
       {"user", "Tell me a joke."}},
      /*add_generation_prompt=*/true);
  if (!with_system.ok() &&
      !chat->RenderMessages({{"user", "Hello!"}, {"assistant", "Hi! How can I help?"},
                             {"user", "Tell me a joke."}},
                            /*add_generation_prompt=*/true)
           .ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("chat template fails to render a conversation: ",
                     with_system.status().message()));
  }
  return chat;
}

absl::StatusOr<std::string> JinjaChatTemplate::Render(
    const std::vector<ChatMessage>& messages) const {
  return RenderMessages(messages, /*add_generation_prompt=*/true);
}

absl::StatusOr<std::string> JinjaChatTemplate::RenderMessages(
    const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  nlohmann::ordered_json context = nlohmann::ordered_json::object();
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ChatMessage& m : messages) {
    nlohmann::ordered_json message = nlohmann::ordered_json::object();
    message["role"] = m.role;
    message["content"] = m.content;
    list.push_back(std::move(message));
  }
  context["messages"] = std::move(list);
  context["add_generation_prompt"] = add_generation_prompt;
  context["tools"] = nullptr;
  context["documents"] = nullptr;
  if (!bos_token_.empty()) context["bos_token"] = bos_token_;
  if (!eos_token_.empty()) context["eos_token"] = eos_token_;
  return RenderContext(context);
}

absl::StatusOr<std::string> JinjaChatTemplate::RenderContext(
    const nlohmann::ordered_json& context) const {
  return compiled_->Render(context);
}

}  // namespace tandem
