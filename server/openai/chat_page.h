// The built-in chat page served at "/": one static HTML file compiled into
// the binary (no build step, no CDN), streaming from /v1/chat/completions.
#ifndef TANDEM_SERVER_OPENAI_CHAT_PAGE_H_
#define TANDEM_SERVER_OPENAI_CHAT_PAGE_H_

#include "absl/strings/string_view.h"

namespace tandem {

// The page: a conversation, a stop button that aborts the request, the
// sampling settings (temperature, top_p, max tokens, system prompt, API
// key) and, under each answer, its time to first token and tokens/s.
absl::string_view ChatPageHtml();

}  // namespace tandem

#endif  // TANDEM_SERVER_OPENAI_CHAT_PAGE_H_
