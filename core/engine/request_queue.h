// The one channel from RPC threads into the engine thread. Every mutex of
// the engine lives in this file.
#ifndef TANDEM_CORE_ENGINE_REQUEST_QUEUE_H_
#define TANDEM_CORE_ENGINE_REQUEST_QUEUE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/engine/generation_request.h"

namespace tandem {

// Threading: Push/PushCancel/Close/RequestStop/WaitUntilIdle from any thread;
// Take and ReportEngineState from the engine thread only.
class RequestQueue {
 public:
  struct Inbox {
    std::vector<std::pair<uint64_t, GenerationRequest>> requests;
    std::vector<uint64_t> cancellations;
    bool stop = false;  // the engine should finish everything and exit
  };

  // `max_waiting` bounds requests accepted but not yet given a KV slot.
  explicit RequestQueue(int max_waiting) : max_waiting_(max_waiting) {}

  // RESOURCE_EXHAUSTED when max_waiting requests are already waiting,
  // UNAVAILABLE after Close().
  absl::Status Push(uint64_t id, GenerationRequest request);
  void PushCancel(uint64_t id);
  // Stops accepting new requests; queued and running ones go on.
  void Close();
  // Asks the engine thread to finish every request and exit.
  void RequestStop();

  // Takes everything queued. When `block`, waits (up to `timeout`) until
  // there is something to take.
  Inbox Take(bool block, absl::Duration timeout);
  // The engine's view after a step: requests it holds that are still waiting
  // for a slot, and whether it holds any request at all.
  void ReportEngineState(int waiting, bool idle);
  // Blocks until the engine holds no request and nothing is queued, or until
  // `deadline`. Returns true when idle.
  bool WaitUntilIdle(absl::Time deadline);

 private:
  const int max_waiting_;
  absl::Mutex mu_;
  Inbox inbox_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int engine_waiting_ ABSL_GUARDED_BY(mu_) = 0;
  bool engine_idle_ ABSL_GUARDED_BY(mu_) = true;
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_REQUEST_QUEUE_H_
