// The engine: a public API of enqueue / cancel / shutdown in front of one
// thread that owns the scheduler and the model runner.
#ifndef TANDEM_CORE_ENGINE_ENGINE_H_
#define TANDEM_CORE_ENGINE_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/engine/engine_observer.h"
#include "core/engine/generation_request.h"
#include "core/engine/model_runner.h"
#include "core/engine/pipeline.h"
#include "core/engine/request_queue.h"
#include "core/engine/scheduler.h"
#include "core/engine/sink_dispatcher.h"
#include "core/text/tokenizer.h"

namespace tandem {

struct EngineOptions {
  int32_t max_queue = 256;  // requests waiting for a slot before RESOURCE_EXHAUSTED
  // Prompt tokens per step: see SchedulerOptions.
  int32_t max_prefill_tokens_per_step = 8192;
  int32_t prefill_tokens_while_decoding = 2048;
  double prefill_stall_ratio = 0.25;
  // kDoubleBuffered: launch step i+1 before reading step i's results. Takes
  // effect only with a runner that keeps decode inputs on the device.
  Pipeline pipeline = Pipeline::kDoubleBuffered;
  // Threads that call the sinks (SinkDispatcher); 0 (or less): the engine
  // thread does.
  int32_t delivery_threads = 2;
};

// Threading: Submit, Cancel and Shutdown may be called from any thread. The
// engine thread (started by the constructor) is the only one that touches the
// scheduler and the runner. The sinks are called on the delivery threads
// (each request's calls on one, in order), or on the engine thread when
// EngineOptions::delivery_threads is 0; the Shutdown call that shuts the
// engine down returns after every call.
class Engine {
 public:
  // Takes ownership of `runner`. `tokenizer` and `observer` (may be null)
  // must outlive the engine.
  Engine(EngineOptions options, std::unique_ptr<ModelRunner> runner,
         const Tokenizer* tokenizer, EngineObserver* observer);
  ~Engine();  // Shutdown(absl::ZeroDuration()) unless already shut down.

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates and queues `request`; returns its id for Cancel(). Errors:
  // INVALID_ARGUMENT (bad request), RESOURCE_EXHAUSTED (queue full),
  // UNAVAILABLE (shutting down). On error the sink is never called.
  absl::StatusOr<uint64_t> Submit(GenerationRequest request);
  // Submits requests that arrive together, so the engine sees them in the
  // same step (benchmarks of bursts); all are queued, or none.
  absl::StatusOr<std::vector<uint64_t>> SubmitAll(std::vector<GenerationRequest> requests);
  // Cancels a request; its slot is freed before the next step runs. It
  // finishes with `reason`: kCancelled, or kDeadline for an expired call.
  void Cancel(uint64_t id, FinishReason reason = FinishReason::kCancelled);
  // Stops accepting requests; those that have not started finish at once
  // with kShutdown and an UNAVAILABLE error (they may go elsewhere); running
  // ones get up to `grace`, then finish with kShutdown. Joins the thread.
  // Returns the number of requests cut off mid-stream (with tokens generated).
  int Shutdown(absl::Duration grace);
  // From any thread, during Shutdown: ends the grace period now.
  void CutShort();

  const ModelDescription& model() const { return model_; }
  bool pipelined() const { return pipelined_; }
  const RequestLimits& limits() const { return limits_; }

 private:
  void Loop();        // the engine thread's body
  void RunStep();     // schedule, launch, and apply the previous/this step
  void FinishStep(const StepPlan& plan);  // collect a launched step, apply it
  void ReportLoad();  // to the queue (admission bound) and the observer

  const ModelDescription model_;
  const RequestLimits limits_;
  std::unique_ptr<ModelRunner> runner_;
  const bool pipelined_;
  EngineObserver* observer_;
  RequestQueue queue_;
  SinkDispatcher sinks_;  // flushed at the end of each turn of the engine thread
  Scheduler scheduler_;
  std::atomic<uint64_t> next_id_{1};
  std::atomic<int> cut_off_{0};
  std::atomic<bool> shut_down_{false};
  // Engine thread only: the step launched but not yet applied (pipelined),
  // and whether the device had no work before the next launch.
  std::optional<StepPlan> in_flight_;
  bool device_idle_ = true;
  bool drain_pending_ = false;  // Shutdown began: end the waiting after admission
  std::thread thread_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_ENGINE_H_
