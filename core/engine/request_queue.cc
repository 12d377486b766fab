#include "core/engine/request_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace tandem {

absl::Status RequestQueue::Push(uint64_t id, GenerationRequest request) {
  std::vector<std::pair<uint64_t, GenerationRequest>> one;
  one.emplace_back(id, std::move(request));
  return PushAll(std::move(one));
}

absl::Status RequestQueue::PushAll(std::vector<std::pair<uint64_t, GenerationRequest>> requests) {
  absl::MutexLock lock(&mu_);
  if (closed_) {
    return absl::UnavailableError("the server is shutting down");
  }
  // Accepted and not running: what the engine holds waiting, plus what it
  // has not taken yet. They fill the free slots first, then the queue.
  const int pending = engine_waiting_ + static_cast<int>(inbox_.requests.size());
  if (pending + static_cast<int>(requests.size()) > engine_free_slots_ + max_waiting_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the request queue is full (", pending - engine_free_slots_,
        " requests waiting for a KV slot, the limit is ", max_waiting_, ")"));
  }
  for (auto& entry : requests) inbox_.requests.push_back(std::move(entry));
  return absl::OkStatus();
}

void RequestQueue::PushCancel(uint64_t id, FinishReason reason) {
  absl::MutexLock lock(&mu_);
  inbox_.cancellations.push_back({id, reason});
}

void RequestQueue::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  inbox_.drain = true;
}

void RequestQueue::RequestStop() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  inbox_.stop = true;
}

RequestQueue::Inbox RequestQueue::Take(bool block, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  if (block) {
    auto has_work = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return inbox_.stop || inbox_.drain || !inbox_.requests.empty() ||
             !inbox_.cancellations.empty();
    };
    mu_.AwaitWithTimeout(absl::Condition(&has_work), timeout);
  }
  Inbox taken;
  taken.requests.swap(inbox_.requests);
  taken.cancellations.swap(inbox_.cancellations);
  taken.stop = inbox_.stop;
  taken.drain = std::exchange(inbox_.drain, false);
  // The taken requests are now the engine's; count them as waiting until it
  // reports back, so the queue bound holds across the hand-over.
  engine_waiting_ += static_cast<int>(taken.requests.size());
  if (!taken.requests.empty()) engine_idle_ = false;
  return taken;
}

void RequestQueue::ReportEngineState(int waiting, int free_slots, bool idle) {
  absl::MutexLock lock(&mu_);
  engine_waiting_ = waiting;
  engine_free_slots_ = free_slots;
  engine_idle_ = idle;
}

bool RequestQueue::WaitUntilIdle(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return engine_idle_ && inbox_.requests.empty();
  };
  return mu_.AwaitWithDeadline(absl::Condition(&idle), deadline);
}

}  // namespace tandem
