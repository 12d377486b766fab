// Hands the engine's outputs to the requests' sinks on threads of its own.
#ifndef TANDEM_CORE_ENGINE_SINK_DISPATCHER_H_
#define TANDEM_CORE_ENGINE_SINK_DISPATCHER_H_

#include <cstddef>
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
// Threading: StageChunk, StageFinish, Flush and Stop on one thread (the
// engine thread). Each sink's calls run on one delivery thread (chosen by
// the sink's address), in the order staged. With 0 threads every call is
// made inside Stage*, on the calling thread. Stop (also the destructor)
// delivers everything flushed, then joins; staged calls not flushed are
// flushed by it first.
class SinkDispatcher {
 public:
  explicit SinkDispatcher(int threads);
  ~SinkDispatcher();
  SinkDispatcher(const SinkDispatcher&) = delete;
  SinkDispatcher& operator=(const SinkDispatcher&) = delete;

  void StageChunk(const std::shared_ptr<TokenSink>& sink, GenerationChunk chunk);
  void StageFinish(const std::shared_ptr<TokenSink>& sink, const GenerationSummary& summary);
  void Flush();
  void Stop();
  int threads() const { return static_cast<int>(lanes_.size()); }

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
    std::vector<Call> calls ABSL_GUARDED_BY(mu);
    bool stop ABSL_GUARDED_BY(mu) = false;
    std::vector<Call> staged;  // the staging thread's, until Flush
    std::thread thread;
  };
  Lane& LaneOf(const TokenSink* sink);
  static void Deliver(Call& call);
  static void Run(Lane* lane);

  std::vector<std::unique_ptr<Lane>> lanes_;
  bool stopped_ = false;
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_SINK_DISPATCHER_H_
