#include "server/openai/openai_backend.h"

#include <utility>

namespace tandem {

void OpenAiBackend::Attach(Engine* engine, OpenAiContext context,
                           std::function<void()> on_rejected) {
  absl::MutexLock lock(&mu_);
  engine_ = engine;
  context_ = std::move(context);
  on_rejected_ = std::move(on_rejected);
}

void OpenAiBackend::Detach() {
  absl::MutexLock lock(&mu_);
  engine_ = nullptr;
  context_ = OpenAiContext();  // handlers that copied it keep their share
  on_rejected_ = nullptr;
}

std::optional<OpenAiContext> OpenAiBackend::context() const {
  absl::MutexLock lock(&mu_);
  if (engine_ == nullptr) return std::nullopt;
  return context_;
}

int32_t OpenAiBackend::max_context() const {
  absl::MutexLock lock(&mu_);
  return engine_ == nullptr ? 0 : engine_->model().max_context;
}

absl::StatusOr<std::vector<uint64_t>> OpenAiBackend::SubmitAll(
    std::vector<GenerationRequest> requests) {
  absl::MutexLock lock(&mu_);
  if (engine_ == nullptr) return absl::UnavailableError("the server is not ready");
  return engine_->SubmitAll(std::move(requests));
}

void OpenAiBackend::Cancel(uint64_t id) {
  absl::MutexLock lock(&mu_);
  if (engine_ != nullptr) engine_->Cancel(id);
}

void OpenAiBackend::Rejected() const {
  absl::MutexLock lock(&mu_);
  if (on_rejected_) on_rejected_();
}

}  // namespace tandem
