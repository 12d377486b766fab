// Continuous-batching scheduler: plain C++, owns no tensors.
#ifndef TANDEM_CORE_ENGINE_SCHEDULER_H_
#define TANDEM_CORE_ENGINE_SCHEDULER_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "core/engine/engine_observer.h"
#include "core/engine/prefill_budget.h"
#include "core/engine/sequence.h"
#include "core/engine/sink_dispatcher.h"
#include "core/engine/step_plan.h"
#include "core/text/tokenizer.h"

namespace tandem {

// The smallest prompt chunk planned while sequences decode (when the budget
// allows less, prompts still move at this pace).
inline constexpr int32_t kMinPrefillChunk = 32;

struct SchedulerOptions {
  int32_t num_slots = 8;
  // Prompt tokens prefilled in one step (one packed forward) when no
  // sequence is decoding: a burst of prompts arriving at an idle engine is
  // prefilled together.
  int32_t max_prefill_tokens_per_step = 8192;
  // While sequences decode, a step's prompt tokens are chosen by a
  // PrefillBudget (between kMinPrefillChunk and this cap) so that the step
  // takes about (1 + prefill_stall_ratio) times a decode-only one: a long
  // prompt or a burst is split into chunks that share the following steps
  // with the decode rows, and running streams slow down by a bounded factor.
  int32_t prefill_tokens_while_decoding = 2048;
  double prefill_stall_ratio = 0.25;
  double prefill_fixed_seconds = 0;  // ModelDescription::prefill_fixed_seconds
  // Sampled ids that end a sequence (ModelDescription::eos_token_ids).
  std::vector<int32_t> eos_token_ids;
  // The runner keeps each slot's next token, position and sampling offset on
  // the device and the engine plans step i+1 before step i completes (the
  // double-buffered pipeline): a sequence then decodes in the step right
  // after the one that runs its prompt's last chunk, which writes its first
  // token into the slot's state, instead of one step later. Otherwise a
  // sequence decodes once that step has completed.
  bool decode_behind_prefill = false;
};

// Admits waiting requests into free KV slots in arrival order, plans each step
// (decode rows for every prefilled sequence, then prompt chunks up to the
// step's prefill budget, a partly prefilled prompt first) and retires
// sequences from step results:
// each sequence's SequenceOutput applies the stop rule (EOS, stop token, stop
// string, max_tokens); cancellations and deadlines are applied here.
// Threading: engine thread only. Sinks are called from its methods, or,
// with a `sinks` dispatcher, staged there for its threads (its owner
// flushes it).
class Scheduler {
 public:
  // `tokenizer`, `observer` and `sinks` must outlive the scheduler; observer
  // may be null; sinks null: the sinks are called here.
  Scheduler(SchedulerOptions options, const Tokenizer* tokenizer,
            EngineObserver* observer, SinkDispatcher* sinks = nullptr);
  ~Scheduler();

  // Queues a validated request.
  void Add(uint64_t sequence_id, GenerationRequest request);
  // Marks a sequence cancelled (`reason` kCancelled, or kDeadline when the
  // call's deadline passed); it is retired (its slot freed) by the next
  // Schedule(). Unknown ids are ignored (the sequence may have finished).
  void Cancel(uint64_t sequence_id, FinishReason reason = FinishReason::kCancelled);
  // Retires every sequence, waiting or running, with `reason` and `error`
  // (`error_before_first_token` for those that generated nothing: a prompt
  // still being prefilled); those cancelled or past their deadline first,
  // with their reasons. Returns how many of those it retired had generated
  // tokens (were cut off mid-stream).
  int FinishAll(FinishReason reason, const absl::Status& error,
                const absl::Status& error_before_first_token);
  // Retires the sequences still waiting for a slot with `reason`; those
  // cancelled or past their deadline (waiting or running) first, with theirs.
  void FinishWaiting(FinishReason reason, const absl::Status& error);

  // Retires cancelled and expired sequences, admits waiting ones into free
  // slots and returns the step to run. Empty when there is nothing to do.
  StepPlan Schedule(absl::Time now);
  // Applies a step's sampled tokens: streams text, retires finished sequences.
  // Returns how many tokens were accepted (rows of sequences that already
  // finished, run one step late by the pipelined engine, are dropped).
  int Complete(const StepPlan& plan, const StepOutput& output, absl::Time now);
  // The step failed: every sequence in it finishes with kError.
  void Fail(const StepPlan& plan, const absl::Status& error, absl::Time now);

  bool idle() const { return waiting_.empty() && running_.empty(); }
  int num_waiting() const { return static_cast<int>(waiting_.size()); }
  int num_running() const { return static_cast<int>(running_.size()); }
  int num_free_slots() const { return static_cast<int>(free_slots_.size()); }
  // Prompt tokens the next step may prefill if sequences are decoding.
  int32_t prefill_budget_while_decoding() const { return budget_.tokens(); }

 private:
  // Appends `sampled` to the sequence and streams what is final; retires the
  // sequence when it is done.
  void Accept(Sequence* seq, const SampledToken& sampled, absl::Time now);
  void Retire(uint64_t sequence_id, FinishReason reason, absl::Time now,
              std::string stop_sequence = "", absl::Status error = absl::OkStatus());
  // Retires the cancelled sequences (kDeadline past their deadline) and the
  // expired ones (kDeadline).
  void RetireCancelledAndExpired(absl::Time now);
  RowSampling SamplingFor(const Sequence& seq) const;
  // Whether `seq`, whose prompt's last chunk has not completed, decodes in
  // the step being planned (SchedulerOptions::decode_behind_prefill).
  bool DecodesBehindPrefill(const Sequence& seq) const;
  // Plans the next chunk of `seq`'s prompt, at most `budget` tokens.
  PrefillItem NextChunk(Sequence* seq, int32_t budget) const;

  const SchedulerOptions options_;
  PrefillBudget budget_;  // prompt tokens per step while sequences decode
  absl::Time last_complete_ = absl::InfinitePast();
  const Tokenizer* tokenizer_;
  EngineObserver* observer_;
  SinkDispatcher inline_sinks_{0};  // calls the sinks at once; used when none was given
  SinkDispatcher* sinks_;
  absl::flat_hash_map<uint64_t, std::unique_ptr<Sequence>> sequences_;
  std::deque<uint64_t> waiting_;           // arrival order
  std::vector<uint64_t> running_;          // hold a slot, in admission order
  std::vector<int32_t> free_slots_;        // used as a stack
  // To retire at the next Schedule(), with their reasons.
  std::vector<std::pair<uint64_t, FinishReason>> cancelled_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_ENGINE_SCHEDULER_H_
