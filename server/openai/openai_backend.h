// What the OpenAI routes serve from: the engine and what parsing needs,
// attached once the model is loaded and detached before the engine goes.
#ifndef TANDEM_SERVER_OPENAI_OPENAI_BACKEND_H_
#define TANDEM_SERVER_OPENAI_OPENAI_BACKEND_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/engine/engine.h"
#include "server/openai/openai_request.h"

namespace tandem {

// Threading: every method from any thread. The HTTP routes share ownership
// of it (a connection may outlive the server's shutdown wait), so they
// never touch the engine once it is detached.
class OpenAiBackend {
 public:
  // `engine` and what `on_rejected` uses must stay valid until Detach();
  // `on_rejected` counts a request refused before it reached the engine
  // (may be empty).
  void Attach(Engine* engine, OpenAiContext context, std::function<void()> on_rejected);
  void Detach();

  // The context, or nullopt while no engine is attached.
  std::optional<OpenAiContext> context() const;
  int32_t max_context() const;
  // Engine::SubmitAll (all are queued, or none); UNAVAILABLE when detached.
  absl::StatusOr<std::vector<uint64_t>> SubmitAll(std::vector<GenerationRequest> requests);
  void Cancel(uint64_t id);
  void Rejected() const;

 private:
  mutable absl::Mutex mu_;
  Engine* engine_ ABSL_GUARDED_BY(mu_) = nullptr;
  OpenAiContext context_ ABSL_GUARDED_BY(mu_);
  std::function<void()> on_rejected_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tandem

#endif  // TANDEM_SERVER_OPENAI_OPENAI_BACKEND_H_
