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
// Its script, which the page loads from "chat.js" beside it.
absl::string_view ChatPageScript();

// The headers both are served with: a Content-Security-Policy allowing
// scripts, fetches and styles from the server itself only and no framing
// (the page holds an API key field), and nosniff.
constexpr const char* kChatPageSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

}  // namespace tandem

#endif  // TANDEM_SERVER_OPENAI_CHAT_PAGE_H_
