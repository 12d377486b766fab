// A model's own chat template (the Jinja `chat_template` of its
// tokenizer_config.json), rendered as transformers.js renders it.
#ifndef TANDEM_CORE_TEXT_JINJA_JINJA_CHAT_TEMPLATE_H_
#define TANDEM_CORE_TEXT_JINJA_JINJA_CHAT_TEMPLATE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/text/chat_template.h"
#include "core/text/jinja/jinja_template.h"
#include "nlohmann/json.hpp"

namespace tandem {

// Renders conversations with a Hugging Face chat template through the
// Jinja interpreter in core/text/jinja (byte-identical to @huggingface/jinja,
// which transformers.js uses). The variables are those transformers.js's
// apply_chat_template passes: `messages` (objects with `role` and
// `content`), `add_generation_prompt`, `tools` and `documents` (null), and
// `bos_token` / `eos_token` when they are not empty.
//
// Immutable after Create: Render and the other methods may be called from
// many threads at once.
class JinjaChatTemplate : public ChatTemplate {
 public:
  // Parses `source` and renders it once (system, user, assistant and user
  // messages with add_generation_prompt; or, if the template rejects that,
  // the conversation without its system message), so that a template this
  // interpreter cannot render fails here, at start, and not on a request.
  // `stop_strings` are returned as given.
  static absl::StatusOr<std::unique_ptr<JinjaChatTemplate>> Create(
      std::string source, std::string bos_token, std::string eos_token,
      std::vector<std::string> stop_strings);

  // The prompt for `messages` with add_generation_prompt = true. A
  // template's raise_exception(msg) is InvalidArgumentError(msg).
  absl::StatusOr<std::string> Render(const std::vector<ChatMessage>& messages) const override;
  std::vector<std::string> stop_strings() const override { return stop_strings_; }
  // A checkpoint's template is tokenized as transformers' apply_chat_template
  // does (add_special_tokens=False): what special tokens the prompt has, it
  // writes itself (Llama 3's {{ bos_token }}; Qwen's have none).
  bool renders_special_tokens() const override { return true; }

  absl::StatusOr<std::string> RenderMessages(const std::vector<ChatMessage>& messages,
                                             bool add_generation_prompt) const;
  // Renders with exactly the variables of the JSON object `context` (no
  // defaults added): for tools, extra template arguments, and tests.
  absl::StatusOr<std::string> RenderContext(const nlohmann::ordered_json& context) const;

  const std::string& source() const { return source_; }
  const std::string& bos_token() const { return bos_token_; }
  const std::string& eos_token() const { return eos_token_; }

 private:
  JinjaChatTemplate(std::string source, std::unique_ptr<jinja::JinjaTemplate> compiled,
                    std::string bos_token, std::string eos_token,
                    std::vector<std::string> stop_strings)
      : source_(std::move(source)),
        compiled_(std::move(compiled)),
        bos_token_(std::move(bos_token)),
        eos_token_(std::move(eos_token)),
        stop_strings_(std::move(stop_strings)) {}

  const std::string source_;
  const std::unique_ptr<const jinja::JinjaTemplate> compiled_;
  const std::string bos_token_;
  const std::string eos_token_;
  const std::vector<std::string> stop_strings_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_JINJA_JINJA_CHAT_TEMPLATE_H_
