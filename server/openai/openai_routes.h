// The OpenAI-compatible API on the HTTP front door: GET /v1/models,
// POST /v1/completions, POST /v1/chat/completions, and the chat page at /.
#ifndef TANDEM_SERVER_OPENAI_OPENAI_ROUTES_H_
#define TANDEM_SERVER_OPENAI_OPENAI_ROUTES_H_

#include <memory>

#include "server/http/http_server.h"
#include "server/openai/openai_backend.h"

namespace tandem {

// Registers the routes (before http->Start()). Until `backend` is attached
// they answer 503. Streams are server-sent events; a client that goes away
// mid-stream has its generations cancelled at the next token written.
void AddOpenAiRoutes(std::shared_ptr<OpenAiBackend> backend, HttpServer* http);

}  // namespace tandem

#endif  // TANDEM_SERVER_OPENAI_OPENAI_ROUTES_H_
