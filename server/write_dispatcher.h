// A few threads that start gRPC writes, so the engine's delivery threads
// hand each step's tokens over instead of writing to every client's socket.
#ifndef TANDEM_SERVER_WRITE_DISPATCHER_H_
#define TANDEM_SERVER_WRITE_DISPATCHER_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace tandem {

// Runs short tasks on `threads` threads of its own. Tasks posted with the
// same shard run one after another, in order, on one thread (shard modulo
// the number of threads); a thread runs whatever queued up since it last
// woke, so a step's writes for many streams cost it one wake-up.
// Threading: Post from any thread, also from a task. The destructor runs
// the tasks already posted, then joins; a task that posts to a thread that
// has already finished runs the new task itself. Nothing else may post once
// the destructor has started.
class WriteDispatcher {
 public:
  explicit WriteDispatcher(int threads);
  ~WriteDispatcher();
  WriteDispatcher(const WriteDispatcher&) = delete;
  WriteDispatcher& operator=(const WriteDispatcher&) = delete;

  void Post(size_t shard, std::function<void()> task);
  int threads() const { return static_cast<int>(workers_.size()); }

 private:
  struct Worker {
    absl::Mutex mu;
    std::deque<std::function<void()>> tasks ABSL_GUARDED_BY(mu);
    bool stop ABSL_GUARDED_BY(mu) = false;
    bool exited ABSL_GUARDED_BY(mu) = false;  // Run returned: Post runs tasks inline
    std::thread thread;
  };
  static bool HasWork(Worker* worker) ABSL_NO_THREAD_SAFETY_ANALYSIS;
  static void Run(Worker* worker);

  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace tandem

#endif  // TANDEM_SERVER_WRITE_DISPATCHER_H_
