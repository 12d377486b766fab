#include "server/openai/choice_events.h"

#include <utility>

namespace tandem {

void ChoiceEvents::Push(Event event) {
  absl::MutexLock lock(&mu_);
  events_.push_back(std::move(event));
}

std::vector<ChoiceEvents::Event> ChoiceEvents::Take(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !events_.empty(); };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  std::vector<Event> taken(std::make_move_iterator(events_.begin()),
                           std::make_move_iterator(events_.end()));
  events_.clear();
  return taken;
}

}  // namespace tandem
