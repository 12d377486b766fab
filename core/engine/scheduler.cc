#include "core/engine/scheduler.h"

#include <algorithm>
#include <utility>

namespace tandem {
Scheduler::Scheduler(SchedulerOptions options, const Tokenizer* tokenizer,
                     EngineObserver* observer, SinkDispatcher* sinks)
    : options_(options),
      budget_(kMinPrefillChunk, options.prefill_tokens_while_decoding,
              options.prefill_stall_ratio, options.prefill_fixed_seconds),
      tokenizer_(tokenizer),
      observer_(observer),
      sinks_(sinks != nullptr ? sinks : &inline_sinks_) {
  // Hand out slot 0 first: the stack is filled in reverse.
  for (int32_t slot = options_.num_slots - 1; slot >= 0; --slot) {
    free_slots_.push_back(slot);
  }
}

Scheduler::~Scheduler() = default;

void Scheduler::Add(uint64_t sequence_id, GenerationRequest request) {
  sequences_[sequence_id] = std::make_unique<Sequence>(
      sequence_id, std::move(request), tokenizer_, &options_.eos_token_ids);
  waiting_.push_back(sequence_id);
}

void Scheduler::Cancel(uint64_t sequence_id, FinishReason reason) {
  if (sequences_.contains(sequence_id)) cancelled_.emplace_back(sequence_id, reason);
}

void Scheduler::FinishWaiting(FinishReason reason, const absl::Status& error) {
  const absl::Time now = absl::Now();
  RetireCancelledAndExpired(now);  // they keep their own reasons
  const std::vector<uint64_t> ids(waiting_.begin(), waiting_.end());
  for (uint64_t id : ids) Retire(id, reason, now, "", error);
}

int Scheduler::FinishAll(FinishReason reason, const absl::Status& error,
                         const absl::Status& error_before_first_token) {
  const absl::Time now = absl::Now();
  RetireCancelledAndExpired(now);  // they keep their own reasons
  std::vector<uint64_t> ids(waiting_.begin(), waiting_.end());
  ids.insert(ids.end(), running_.begin(), running_.end());
  int with_tokens = 0;
  for (uint64_t id : ids) {
    const bool none = sequences_.at(id)->output.generated().empty();
    with_tokens += !none;
    Retire(id, reason, now, "", none ? error_before_first_token : error);
  }
  return with_tokens;
}

RowSampling Scheduler::SamplingFor(const Sequence& seq) const {
  RowSampling sampling;
  sampling.params = seq.request.sampling;
  sampling.rng_offset = static_cast<int32_t>(seq.output.generated().size());
  return sampling;
}

PrefillItem Scheduler::NextChunk(Sequence* seq, int32_t budget) const {
  const absl::Span<const int32_t> prompt = seq->request.prompt_token_ids;
  const int32_t start = seq->prefill_cursor;
  const int32_t length = std::min(budget, static_cast<int32_t>(prompt.size()) - start);
  PrefillItem item;
  item.sequence_id = seq->id;
  item.slot = seq->slot;
  item.tokens = prompt.subspan(start, length);
  item.start = start;
  item.last_chunk = start + length == static_cast<int32_t>(prompt.size());
  item.sampling = SamplingFor(*seq);
  seq->prefill_cursor = start + length;
  return item;
}

bool Scheduler::DecodesBehindPrefill(const Sequence& seq) const {
  // Every chunk was planned in an earlier step (this step's come later), so
  // the last one is in flight; a sequence that ends at its first token gets
  // no row (one that ends there otherwise has its row's output dropped).
  return options_.decode_behind_prefill &&
         seq.prefill_cursor == static_cast<int32_t>(seq.request.prompt_token_ids.size()) &&
         seq.request.stopping.max_tokens > 1;
}

void Scheduler::RetireCancelledAndExpired(absl::Time now) {
  for (const auto& [id, reason] : cancelled_) {
    auto it = sequences_.find(id);
    if (it == sequences_.end()) continue;
    // Whichever callback reported it first, a call past its deadline ended
    // because of the deadline.
    Retire(id, now >= it->second->request.deadline ? FinishReason::kDeadline : reason, now);
  }
  cancelled_.clear();
  std::vector<uint64_t> expired;
  for (const auto& [id, seq] : sequences_) {
    if (now >= seq->request.deadline) expired.push_back(id);
  }
  for (uint64_t id : expired) Retire(id, FinishReason::kDeadline, now);
}

StepPlan Scheduler::Schedule(absl::Time now) {
  RetireCancelledAndExpired(now);

  StepPlan plan;
  // Running sequences decode first, so admission never delays them.
  for (uint64_t id : running_) {
    const Sequence& seq = *sequences_.at(id);
    if (!seq.prefilled && !DecodesBehindPrefill(seq)) continue;
    const std::vector<int32_t>& generated = seq.output.generated();
    DecodeItem item;
    item.sequence_id = id;
    item.slot = seq.slot;
    item.token = generated.empty() ? -1 : generated.back();
    item.position = static_cast<int32_t>(seq.request.prompt_token_ids.size() +
                                         std::max<size_t>(generated.size(), 1) - 1);
    item.sampling = SamplingFor(seq);
    plan.decodes.push_back(item);
  }
  int32_t budget = plan.decodes.empty() ? options_.max_prefill_tokens_per_step
                                        : budget_.tokens();
  // A prompt already being chunked continues before anyone new is admitted.
  for (uint64_t id : running_) {
    Sequence& seq = *sequences_.at(id);
    if (budget <= 0) break;
    if (seq.prefill_cursor == static_cast<int32_t>(seq.request.prompt_token_ids.size())) {
      continue;
    }
    plan.prefills.push_back(NextChunk(&seq, budget));
    budget -= static_cast<int32_t>(plan.prefills.back().tokens.size());
  }
  while (budget > 0 && !waiting_.empty() && !free_slots_.empty()) {
    Sequence& seq = *sequences_.at(waiting_.front());
    waiting_.pop_front();
    seq.slot = free_slots_.back();
    free_slots_.pop_back();
    seq.output.MarkStarted(now);
    running_.push_back(seq.id);
    plan.prefills.push_back(NextChunk(&seq, budget));
    budget -= static_cast<int32_t>(plan.prefills.back().tokens.size());
  }
  return plan;
}

int Scheduler::Complete(const StepPlan& plan, const StepOutput& output,
                        absl::Time now) {
  // The period between completions is the gap between tokens streams see
  // (after an idle engine it is not, and what was learned before is stale).
  if (plan.follows_idle) budget_.Restart();
  if (!plan.decodes.empty() && !plan.follows_idle && last_complete_ != absl::InfinitePast()) {
    budget_.Observe(plan.prefill_tokens(), output.timings.prefill_seconds,
                    output.timings.decode_seconds,
                    absl::ToDoubleSeconds(now - last_complete_));
  }
  last_complete_ = now;
  int accepted = 0;
  for (size_t i = 0; i < plan.prefills.size(); ++i) {
    auto it = sequences_.find(plan.prefills[i].sequence_id);
    // An earlier chunk's row samples nothing.
    if (it == sequences_.end() || !plan.prefills[i].last_chunk) continue;
    it->second->prefilled = true;
    Accept(it->second.get(), output.prefill_tokens[i], now);
    ++accepted;
  }
  for (size_t i = 0; i < plan.decodes.size(); ++i) {
    auto it = sequences_.find(plan.decodes[i].sequence_id);
    if (it == sequences_.end()) continue;
    Accept(it->second.get(), output.decode_tokens[i], now);
    ++accepted;
  }
  return accepted;
}

void Scheduler::Fail(const StepPlan& plan, const absl::Status& error,
                     absl::Time now) {
  std::vector<uint64_t> ids;
  for (const PrefillItem& item : plan.prefills) ids.push_back(item.sequence_id);
  for (const DecodeItem& item : plan.decodes) ids.push_back(item.sequence_id);
  for (uint64_t id : ids) {
    if (sequences_.contains(id)) Retire(id, FinishReason::kError, now, "", error);
  }
}

void Scheduler::Accept(Sequence* seq, const SampledToken& sampled, absl::Time now) {
  SequenceOutput::Update update = seq->output.Accept(sampled, now);
  if (update.inter_token_seconds.has_value() && observer_ != nullptr) {
    observer_->OnInterTokenLatency(*update.inter_token_seconds);
  }
  sinks_->StageChunk(seq->id, seq->request.sink, std::move(update.chunk));
  if (update.finish.has_value()) {
    Retire(seq->id, *update.finish, now, std::move(update.stop_sequence));
  }
}

void Scheduler::Retire(uint64_t sequence_id, FinishReason reason,
                       absl::Time now, std::string stop_sequence,
                       absl::Status error) {
  auto it = sequences_.find(sequence_id);
  if (it == sequences_.end()) return;
  std::unique_ptr<Sequence> seq = std::move(it->second);
  sequences_.erase(it);
  if (seq->slot >= 0) {
    running_.erase(std::find(running_.begin(), running_.end(), sequence_id));
    free_slots_.push_back(seq->slot);
  } else {
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), sequence_id));
  }
  if (reason != FinishReason::kStop && reason != FinishReason::kLength) {
    // Interrupted: release text held back for stop strings or UTF-8.
    std::string tail = seq->output.ReleaseHeldBack();
    if (!tail.empty()) {
      GenerationChunk chunk;
      chunk.text = std::move(tail);
      sinks_->StageChunk(seq->id, seq->request.sink, std::move(chunk));
    }
  }
  const GenerationSummary summary =
      seq->output.Summary(reason, std::move(stop_sequence), std::move(error), now);
  sinks_->StageFinish(seq->id, seq->request.sink, summary);
  if (observer_ != nullptr) observer_->OnRequestFinished(summary);
}

}  // namespace tandem
