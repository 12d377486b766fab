// Hands the engine's outputs to the requests' sinks on threads of its own.
#ifndef TANDEM_CORE_ENGINE_SINK_DISPATCHER_H_
#define TANDEM_CORE_ENGINE_SINK_DISPATCHER_H_

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "core/engine/token_sink.h"

namespace tandem {

// What a transport does with a token (build its message, take its locks,
// wake the thread that writes to the client) costs the engine thread several
// microseconds a stream, and a woken thread may take its CPU: at 64 streams
// that is a whole decode step, and the GPU waits. With a SinkDispatcher the
// engine thread only stages each call; Flush() hands a turn's calls over
// with one lock and at most one wake-up per delivery thread, which make the
// calls.
//
// Threading: StageChunk, StageFinish and Flush on one thread (the engine
// thread); Stop on that thread or, once it has been joined, on another. The
// calls for one sequence id run on one delivery thread (id modulo the
// threads), in the order staged. With 0 threads, or after Stop, every call
// is made inside Stage*, on the calling thread. Flush waits while a delivery
// thread has not yet taken the previous turn's calls (it is a whole turn
// behind): the engine then slows to the sinks' pace, as it did when it made
// the calls itself, and the queues stay within two turns. Stop (also the
// destructor) flushes, delivers everything, then joins.
// Ownership: a staged call holds its sink (a shared_ptr), so a sink may be
// destroyed on a delivery thread, after its last call.
class SinkDispatcher {
 public:
  explicit SinkDispatcher(int threads);  // threads <= 0: none
  ~SinkDispatcher();
  SinkDispatcher(const SinkDispatcher&) = delete;
  SinkDispatcher& operator=(const SinkDispatcher&) = delete;

  void StageChunk(uint64_t sequence_id, const std::shared_ptr<TokenSink>& sink,
                  GenerationChunk chunk);
  void StageFinish(uint64_t sequence_id, const std::shared_ptr<TokenSink>& sink,
                   const GenerationSummary& summary);
  void Flush();
  void Stop();

 private:
  struct Call {
    std::shared_ptr<TokenSink> sink;
    bool finish = false;
    GenerationChunk chunk;      // when !finish
    GenerationSummary summary;  // when finish
  };
  // One delivery thread and its queue.
  struct Lane {
    absl::Mutex mu;
    absl::CondVar ready;
    std::vector<Call> calls ABSL_GUARDED_BY(mu);  // flushed, not yet taken
    bool stop ABSL_GUARDED_BY(mu) = false;
    std::vector<Call> staged;  // the staging thread's, until Flush
    std::thread thread;
  };
  // The lane of `sequence_id`, or null when calls are made at once.
  Lane* LaneOf(uint64_t sequence_id);
  static void Deliver(Call& call);
  static void Run(Lane* lane);

  std::vector<std::unique_ptr<Lane>> lanes_;
  bool stopped_ = false;
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_SINK_DISPATCHER_H_
