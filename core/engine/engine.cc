#include "core/engine/engine.h"

#include <utility>

#include "core/engine/request_validator.h"

namespace tandem {
namespace {

RequestLimits LimitsFor(const ModelDescription& model) {
  RequestLimits limits;
  limits.vocab_size = model.vocab_size;
  limits.max_context = model.max_context;
  return limits;
}

SchedulerOptions SchedulerOptionsFor(const EngineOptions& options,
                                     const ModelDescription& model, bool pipelined) {
  SchedulerOptions scheduler;
  scheduler.decode_behind_prefill = pipelined;
  scheduler.num_slots = model.num_slots;
  scheduler.max_prefill_tokens_per_step = options.max_prefill_tokens_per_step;
  scheduler.prefill_tokens_while_decoding = options.prefill_tokens_while_decoding;
  scheduler.prefill_stall_ratio = options.prefill_stall_ratio;
  scheduler.prefill_fixed_seconds = model.prefill_fixed_seconds;
  scheduler.eos_token_ids = model.eos_token_ids;
  return scheduler;
}

// How requests that had not started end when the server shuts down.
absl::Status NotStartedError() {
  return absl::UnavailableError(
      "the server is shutting down and did not start this request; retry elsewhere");
}

}  // namespace

Engine::Engine(EngineOptions options, std::unique_ptr<ModelRunner> runner,
               const Tokenizer* tokenizer, EngineObserver* observer)
    : model_(runner->description()),
      limits_(LimitsFor(model_)),
      runner_(std::move(runner)),
      pipelined_(options.pipeline == Pipeline::kDoubleBuffered &&
                 runner_->reads_tokens_on_device()),
      observer_(observer),
      queue_(model_.num_slots, options.max_queue),
      sinks_(options.delivery_threads),
      scheduler_(SchedulerOptionsFor(options, model_, pipelined_), tokenizer, observer, &sinks_) {
  thread_ = std::thread([this] { Loop(); });
}

Engine::~Engine() { Shutdown(absl::ZeroDuration()); }

absl::StatusOr<uint64_t> Engine::Submit(GenerationRequest request) {
  absl::Status valid = ValidateRequest(limits_, &request);
  if (!valid.ok()) return valid;
  const uint64_t id = next_id_.fetch_add(1);
  absl::Status queued = queue_.Push(id, std::move(request));
  if (!queued.ok()) return queued;
  return id;
}

absl::StatusOr<std::vector<uint64_t>> Engine::SubmitAll(
    std::vector<GenerationRequest> requests) {
  std::vector<std::pair<uint64_t, GenerationRequest>> entries;
  std::vector<uint64_t> ids;
  for (GenerationRequest& request : requests) {
    absl::Status valid = ValidateRequest(limits_, &request);
    if (!valid.ok()) return valid;
    ids.push_back(next_id_.fetch_add(1));
    entries.emplace_back(ids.back(), std::move(request));
  }
  absl::Status queued = queue_.PushAll(std::move(entries));
  if (!queued.ok()) return queued;
  return ids;
}

void Engine::Cancel(uint64_t id, FinishReason reason) { queue_.PushCancel(id, reason); }

void Engine::CutShort() { queue_.RequestStop(); }

int Engine::Shutdown(absl::Duration grace) {
  if (shut_down_.exchange(true)) return cut_off_.load();
  queue_.Close();
  queue_.WaitUntilIdle(absl::Now() + grace);
  queue_.RequestStop();
  thread_.join();
  sinks_.Stop();
  return cut_off_.load();
}

void Engine::Loop() {
  while (true) {
    const bool idle = scheduler_.idle() && !in_flight_.has_value();
    RequestQueue::Inbox inbox = queue_.Take(/*block=*/idle, absl::Milliseconds(100));
    for (auto& [id, request] : inbox.requests) {
      scheduler_.Add(id, std::move(request));
    }
    for (const RequestQueue::Cancellation& c : inbox.cancellations) {
      scheduler_.Cancel(c.id, c.reason);
    }
    if (inbox.drain) drain_pending_ = true;
    if (inbox.stop) {
      if (in_flight_.has_value()) FinishStep(*std::exchange(in_flight_, std::nullopt));
      // Not started, or no token yet (a long prompt still prefilling):
      // UNAVAILABLE, so clients retry elsewhere; running: cut off.
      cut_off_ = scheduler_.FinishAll(FinishReason::kShutdown, absl::OkStatus(), NotStartedError());
      // What this turn staged is flushed by Shutdown's sinks_.Stop().
      queue_.ReportEngineState(0, 0, true);
      return;
    }
    RunStep();
    sinks_.Flush();  // this turn's outputs, to the delivery threads
  }
}

void Engine::ReportLoad() {
  queue_.ReportEngineState(scheduler_.num_waiting(), scheduler_.num_free_slots(),
                           scheduler_.idle() && !in_flight_.has_value());
  if (observer_ != nullptr) {
    observer_->OnLoad({scheduler_.num_running(), scheduler_.num_waiting(),
                       model_.num_slots});
  }
}

// One step. Synchronous: launch step i, wait for it, apply it. Pipelined:
// launch step i+1 first, then wait for and apply step i while i+1 runs; a
// sequence that finished at step i has one extra row in step i+1, whose
// output the scheduler drops.
void Engine::RunStep() {
  StepPlan plan = scheduler_.Schedule(absl::Now());
  if (drain_pending_) {
    // Shutting down: what got a free slot above runs on; the rest ends now.
    drain_pending_ = false;
    scheduler_.FinishWaiting(FinishReason::kShutdown, NotStartedError());
  }
  ReportLoad();
  plan.follows_idle = device_idle_;
  bool launched = false;
  if (!plan.empty()) {
    const absl::Status status = runner_->Launch(plan);
    launched = status.ok();
    if (!launched) scheduler_.Fail(plan, status, absl::Now());
  }
  if (in_flight_.has_value()) FinishStep(*std::exchange(in_flight_, std::nullopt));
  if (launched) {
    if (pipelined_) {
      in_flight_ = std::move(plan);
    } else {
      FinishStep(plan);
    }
  }
  device_idle_ = !launched && !in_flight_.has_value();
  ReportLoad();
}

void Engine::FinishStep(const StepPlan& plan) {
  absl::StatusOr<StepOutput> output = runner_->Collect();
  if (!output.ok()) {
    scheduler_.Fail(plan, output.status(), absl::Now());
    return;
  }
  const int accepted = scheduler_.Complete(plan, *output, absl::Now());
  if (observer_ != nullptr) {
    StepStats stats;
    stats.generated_tokens = accepted;
    stats.prefill_sequences = static_cast<int>(plan.prefills.size());
    stats.prefill_tokens = plan.prefill_tokens();
    for (const PrefillItem& item : plan.prefills) stats.prefill_partial_chunks += !item.last_chunk;
    stats.prefill_budget = scheduler_.prefill_budget_while_decoding();
    stats.decode_sequences = static_cast<int>(plan.decodes.size());
    stats.timings = output->timings;
    observer_->OnStep(stats);
  }
}

}  // namespace tandem
