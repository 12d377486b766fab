// The one channel from RPC threads into the engine thread. (The engine's
// other locks are the SinkDispatcher's, on the way out.)
#ifndef TANDEM_CORE_ENGINE_REQUEST_QUEUE_H_
#define TANDEM_CORE_ENGINE_REQUEST_QUEUE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/engine/finish_reason.h"
#include "core/engine/generation_request.h"

namespace tandem {

// Threading: Push/PushCancel/Close/RequestStop/WaitUntilIdle from any thread;
// Take and ReportEngineState from the engine thread only.
class RequestQueue {
 public:
  struct Cancellation {
    uint64_t id = 0;
    FinishReason reason = FinishReason::kCancelled;  // or kDeadline
  };
  struct Inbox {
    std::vector<std::pair<uint64_t, GenerationRequest>> requests;
    std::vector<Cancellation> cancellations;
    bool drain = false;  // closed: requests not yet started end now
    bool stop = false;   // the engine should finish everything and exit
  };

  // Admission: at most `free slots + max_waiting` requests may be accepted
  // and not yet running, the free slots as the engine last reported them.
  RequestQueue(int num_slots, int max_waiting)
      : max_waiting_(max_waiting), engine_free_slots_(num_slots) {}

  // RESOURCE_EXHAUSTED when the free slots and the waiting places are all
  // taken, UNAVAILABLE after Close().
  absl::Status Push(uint64_t id, GenerationRequest request);
  // All of `requests` at once (the engine takes them in one step), or none.
  absl::Status PushAll(std::vector<std::pair<uint64_t, GenerationRequest>> requests);
  void PushCancel(uint64_t id, FinishReason reason);
  // Stops accepting new requests; running ones go on, and the engine ends
  // the ones that have not started (they can go to another server).
  void Close();
  // Asks the engine thread to finish every request and exit.
  void RequestStop();

  // Takes everything queued. When `block`, waits (up to `timeout`) until
  // there is something to take.
  Inbox Take(bool block, absl::Duration timeout);
  // The engine's view after a step: requests it holds that are still waiting
  // for a slot, its free slots, and whether it holds any request at all.
  void ReportEngineState(int waiting, int free_slots, bool idle);
  // Blocks until the engine holds no request and nothing is queued, or until
  // `deadline`. Returns true when idle.
  bool WaitUntilIdle(absl::Time deadline);

 private:
  const int max_waiting_;
  absl::Mutex mu_;
  Inbox inbox_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int engine_waiting_ ABSL_GUARDED_BY(mu_) = 0;
  int engine_free_slots_ ABSL_GUARDED_BY(mu_);
  bool engine_idle_ ABSL_GUARDED_BY(mu_) = true;
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_REQUEST_QUEUE_H_
