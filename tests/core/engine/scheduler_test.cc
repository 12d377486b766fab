#include "core/engine/scheduler.h"

#include <map>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/core/recording_sink.h"
#include "tests/core/test_tokenizer.h"

namespace tandem {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int32_t kEos = 50256;
constexpr int32_t kHello = 18435;  // " Hello"
constexpr int32_t kWorld = 995;    // " world"
constexpr int32_t kComma = 11;     // ","

class SchedulerTest : public ::testing::Test {
 protected:
  void MakeScheduler(int slots, int prefill_budget = 2048,
                     std::vector<int32_t> eos_token_ids = {kEos},
                     int budget_while_decoding = 2048, bool decode_behind_prefill = false) {
    SchedulerOptions options;
    options.decode_behind_prefill = decode_behind_prefill;
    options.num_slots = slots;
    options.max_prefill_tokens_per_step = prefill_budget;
    options.prefill_tokens_while_decoding = budget_while_decoding;
    options.eos_token_ids = std::move(eos_token_ids);
    scheduler_ = std::make_unique<Scheduler>(options, &TestTokenizer(), nullptr);
  }

  std::shared_ptr<RecordingSink> Add(uint64_t id, int max_tokens,
                                     std::vector<int32_t> prompt = {1, 2, 3},
                                     absl::Time deadline = absl::InfiniteFuture()) {
    GenerationRequest request;
    request.prompt_token_ids = std::move(prompt);
    request.stopping.max_tokens = max_tokens;
    request.deadline = deadline;
    auto sink = std::make_shared<RecordingSink>();
    request.sink = sink;
    scheduler_->Add(id, std::move(request));
    return sink;
  }

  // Runs one step in which every row samples the token `next(sequence_id)`.
  StepPlan Step(const std::function<int32_t(uint64_t)>& next) {
    StepPlan plan = scheduler_->Schedule(absl::Now());
    StepOutput output;
    for (const PrefillItem& item : plan.prefills) {
      output.prefill_tokens.push_back({next(item.sequence_id), -1.0f});
    }
    for (const DecodeItem& item : plan.decodes) {
      output.decode_tokens.push_back({next(item.sequence_id), -1.0f});
    }
    scheduler_->Complete(plan, output, absl::Now());
    return plan;
  }
  // Completes `plan` (planned earlier) with every row sampling `token`.
  void Complete(const StepPlan& plan, int32_t token) {
    StepOutput output;
    output.prefill_tokens.assign(plan.prefills.size(), {token, -1.0f});
    output.decode_tokens.assign(plan.decodes.size(), {token, -1.0f});
    scheduler_->Complete(plan, output, absl::Now());
  }
  StepPlan StepConstant(int32_t token) {
    return Step([token](uint64_t) { return token; });
  }

  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerTest, AdmitsInArrivalOrderAndReusesFreedSlots) {
  MakeScheduler(2);
  auto a = Add(1, /*max_tokens=*/1);
  auto b = Add(2, 3);
  auto c = Add(3, 2);
  StepPlan plan = StepConstant(kHello);
  ASSERT_EQ(plan.prefills.size(), 2u);
  EXPECT_EQ(plan.prefills[0].sequence_id, 1u);
  EXPECT_EQ(plan.prefills[1].sequence_id, 2u);
  EXPECT_TRUE(plan.decodes.empty());
  // a finished after one token (length) and freed its slot for c.
  ASSERT_TRUE(a->finished());
  EXPECT_EQ(a->summary().reason, FinishReason::kLength);
  const int32_t a_slot = plan.prefills[0].slot;
  plan = StepConstant(kWorld);
  ASSERT_EQ(plan.prefills.size(), 1u);
  EXPECT_EQ(plan.prefills[0].sequence_id, 3u);
  EXPECT_EQ(plan.prefills[0].slot, a_slot);
  ASSERT_EQ(plan.decodes.size(), 1u);
  EXPECT_EQ(plan.decodes[0].sequence_id, 2u);
  EXPECT_EQ(plan.decodes[0].token, kHello);
  EXPECT_EQ(plan.decodes[0].position, 3);  // prompt of 3, first generated token
  EXPECT_EQ(plan.decodes[0].sampling.rng_offset, 1);
  StepConstant(kWorld);
  EXPECT_TRUE(b->finished());
  EXPECT_TRUE(c->finished());
  EXPECT_EQ(b->text(), " Hello world world");
  EXPECT_EQ(b->summary().completion_tokens, 3);
  EXPECT_EQ(b->summary().prompt_tokens, 3);
  EXPECT_TRUE(scheduler_->idle());
  EXPECT_EQ(scheduler_->num_free_slots(), 2);
}

TEST_F(SchedulerTest, EosStopsAndItsTextIsNotReturned) {
  MakeScheduler(1);
  auto sink = Add(1, 10);
  StepConstant(kHello);
  StepConstant(kEos);
  ASSERT_TRUE(sink->finished());
  EXPECT_EQ(sink->summary().reason, FinishReason::kStop);
  EXPECT_EQ(sink->text(), " Hello");
  EXPECT_THAT(sink->ids(), ElementsAre(kHello, kEos));
}

// As the double-buffered engine drives it (step i+1 planned before step i
// completes) with decode_behind_prefill: a sequence decodes in the step right
// after the one with its prompt's last chunk, not one later; a sequence that
// ends at its first token gets no such row, and a row planned for a sequence
// that has ended since is dropped. Without the option the first decode waits
// for the completion.
TEST_F(SchedulerTest, PipelinedSequencesDecodeRightBehindTheirLastChunk) {
  for (bool behind : {true, false}) {
    MakeScheduler(4, 2048, {kEos}, 2048, behind);
    auto a = Add(1, /*max_tokens=*/3);
    auto b = Add(2, /*max_tokens=*/1, {4});  // ends at its first token
    const StepPlan p0 = scheduler_->Schedule(absl::Now());
    ASSERT_EQ(p0.prefills.size(), 2u);
    const StepPlan p1 = scheduler_->Schedule(absl::Now());  // p0 in flight
    if (behind) {
      ASSERT_EQ(p1.decodes.size(), 1u) << "a only";
      EXPECT_EQ(p1.decodes[0].sequence_id, 1u);
      EXPECT_EQ(p1.decodes[0].token, -1) << "its first token is still on the device";
      EXPECT_EQ(p1.decodes[0].position, 3);
    } else {
      EXPECT_TRUE(p1.empty());
    }
    Complete(p0, kHello);
    ASSERT_TRUE(b->finished());
    EXPECT_EQ(b->summary().reason, FinishReason::kLength);
    const StepPlan p2 = scheduler_->Schedule(absl::Now());  // p1 in flight
    ASSERT_EQ(p2.decodes.size(), 1u);
    Complete(p1, kWorld);
    const StepPlan p3 = scheduler_->Schedule(absl::Now());  // p2 in flight
    ASSERT_EQ(p3.decodes.size(), 1u);
    Complete(p2, kComma);
    if (behind) {
      ASSERT_TRUE(a->finished()) << "p0, p1 and p2 gave its three tokens";
      EXPECT_EQ(a->summary().reason, FinishReason::kLength);
      Complete(p3, kEos);  // the row planned before a ended: dropped
      EXPECT_THAT(a->ids(), ElementsAre(kHello, kWorld, kComma));
    } else {
      EXPECT_THAT(a->ids(), ElementsAre(kHello, kComma)) << "one step later";
      Complete(p3, kEos);
      ASSERT_TRUE(a->finished());
      EXPECT_EQ(a->summary().reason, FinishReason::kStop);
    }
  }
}

// A chunked prompt decodes behind its last chunk only: while earlier chunks
// are in flight it has no decode row.
TEST_F(SchedulerTest, PipelinedChunkedPromptDecodesBehindItsLastChunkOnly) {
  MakeScheduler(1, /*prefill_budget=*/4, {kEos}, 2048, /*decode_behind_prefill=*/true);
  auto c = Add(1, /*max_tokens=*/5, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  std::vector<StepPlan> plans;
  for (int i = 0; i < 4; ++i) {
    plans.push_back(scheduler_->Schedule(absl::Now()));
    if (i > 0) Complete(plans[i - 1], kHello);  // step i runs while i - 1 completes
  }
  ASSERT_EQ(plans[0].prefills.size(), 1u);
  EXPECT_EQ(plans[0].prefills[0].end(), 4);
  EXPECT_THAT(plans[1].decodes, IsEmpty());
  EXPECT_EQ(plans[1].prefills[0].end(), 8);
  EXPECT_THAT(plans[2].decodes, IsEmpty());
  ASSERT_EQ(plans[2].prefills.size(), 1u);
  EXPECT_TRUE(plans[2].prefills[0].last_chunk);
  ASSERT_EQ(plans[3].decodes.size(), 1u) << "right behind the last chunk";
  EXPECT_THAT(plans[3].prefills, IsEmpty());
  Complete(plans[3], kWorld);
  EXPECT_THAT(c->ids(), ElementsAre(kHello, kWorld));
}

// The model's EOS list is the only source: every id in it stops, and the
// tokenizer's own end-of-text id stops only when the list names it.
TEST_F(SchedulerTest, EosIdsComeFromTheModelDescriptionOnly) {
  MakeScheduler(2, 2048, /*eos_token_ids=*/{kHello, kComma});
  auto a = Add(1, /*max_tokens=*/10);
  auto b = Add(2, /*max_tokens=*/10);
  Step([](uint64_t id) { return id == 1 ? kEos : kComma; });
  EXPECT_FALSE(a->finished());
  ASSERT_TRUE(b->finished());
  EXPECT_EQ(b->summary().reason, FinishReason::kStop);
  StepConstant(kHello);
  ASSERT_TRUE(a->finished());
  EXPECT_EQ(a->summary().reason, FinishReason::kStop);
  EXPECT_THAT(a->ids(), ElementsAre(kEos, kHello));
}

TEST_F(SchedulerTest, IgnoreEosKeepsGoing) {
  MakeScheduler(1);
  GenerationRequest request;
  request.prompt_token_ids = {1};
  request.stopping.max_tokens = 3;
  request.stopping.ignore_eos = true;
  auto sink = std::make_shared<RecordingSink>();
  request.sink = sink;
  scheduler_->Add(1, std::move(request));
  for (int i = 0; i < 3; ++i) StepConstant(kEos);
  ASSERT_TRUE(sink->finished());
  EXPECT_EQ(sink->summary().reason, FinishReason::kLength);
  EXPECT_EQ(sink->ids().size(), 3u);
}

TEST_F(SchedulerTest, StopTokenIdStops) {
  MakeScheduler(1);
  GenerationRequest request;
  request.prompt_token_ids = {1};
  request.stopping.max_tokens = 10;
  request.stopping.stop_token_ids = {kComma};
  auto sink = std::make_shared<RecordingSink>();
  request.sink = sink;
  scheduler_->Add(1, std::move(request));
  StepConstant(kHello);
  StepConstant(kComma);
  ASSERT_TRUE(sink->finished());
  EXPECT_EQ(sink->summary().reason, FinishReason::kStop);
  EXPECT_EQ(sink->text(), " Hello");
}

TEST_F(SchedulerTest, StopStringSplitAcrossTokensIsNeverStreamed) {
  MakeScheduler(1);
  GenerationRequest request;
  request.prompt_token_ids = {1};
  request.stopping.max_tokens = 10;
  request.stopping.stop_strings = {"lo wo"};
  auto sink = std::make_shared<RecordingSink>();
  request.sink = sink;
  scheduler_->Add(1, std::move(request));
  StepConstant(kHello);
  EXPECT_EQ(sink->text(), " Hel");  // "lo" may start the stop string
  StepConstant(kWorld);
  ASSERT_TRUE(sink->finished());
  EXPECT_EQ(sink->summary().reason, FinishReason::kStop);
  EXPECT_EQ(sink->summary().stop_sequence, "lo wo");
  EXPECT_EQ(sink->text(), " Hel");
}

TEST_F(SchedulerTest, MultiByteCharacterSplitAcrossTokensIsStreamedWhole) {
  MakeScheduler(1);
  const std::vector<int32_t> emoji = TestTokenizer().Encode("🙂");
  ASSERT_GT(emoji.size(), 1u) << "expected GPT-2 to split this emoji into byte tokens";
  auto sink = Add(1, static_cast<int>(emoji.size()));
  size_t i = 0;
  while (!sink->finished()) StepConstant(emoji[i++]);
  for (size_t c = 0; c + 1 < sink->chunks().size(); ++c) {
    EXPECT_EQ(sink->chunks()[c], "") << "partial character streamed in chunk " << c;
  }
  EXPECT_EQ(sink->text(), "🙂");
}

TEST_F(SchedulerTest, CancelFreesTheSlotBeforeTheNextStep) {
  MakeScheduler(1);
  auto a = Add(1, 100);
  auto b = Add(2, 100);
  StepConstant(kHello);
  EXPECT_EQ(scheduler_->num_free_slots(), 0);
  scheduler_->Cancel(1);
  StepPlan plan = StepConstant(kHello);
  ASSERT_TRUE(a->finished());
  EXPECT_EQ(a->summary().reason, FinishReason::kCancelled);
  ASSERT_EQ(plan.prefills.size(), 1u);
  EXPECT_EQ(plan.prefills[0].sequence_id, 2u);
  EXPECT_TRUE(plan.decodes.empty());
  scheduler_->Cancel(2);
  scheduler_->Cancel(42);  // unknown: ignored
  EXPECT_TRUE(scheduler_->Schedule(absl::Now()).empty());
  EXPECT_TRUE(b->finished());
  EXPECT_TRUE(scheduler_->idle());
}

TEST_F(SchedulerTest, CancelWhileWaiting) {
  MakeScheduler(1);
  Add(1, 100);
  auto waiting = Add(2, 100);
  StepConstant(kHello);
  scheduler_->Cancel(2);
  StepConstant(kHello);
  ASSERT_TRUE(waiting->finished());
  EXPECT_EQ(waiting->summary().reason, FinishReason::kCancelled);
  EXPECT_EQ(waiting->summary().completion_tokens, 0);
  EXPECT_EQ(scheduler_->num_waiting(), 0);
}

TEST_F(SchedulerTest, ExpiredDeadlineRetires) {
  MakeScheduler(1);
  auto sink = Add(1, 100, {1}, absl::Now() + absl::Milliseconds(30));
  StepConstant(kHello);
  EXPECT_FALSE(sink->finished());
  absl::SleepFor(absl::Milliseconds(40));
  EXPECT_TRUE(StepConstant(kHello).empty());
  ASSERT_TRUE(sink->finished());
  EXPECT_EQ(sink->summary().reason, FinishReason::kDeadline);
  EXPECT_EQ(scheduler_->num_free_slots(), 1);
}

// gRPC may report an expired call as a failed write (a plain cancel) before
// OnCancel says it was the deadline: past the deadline it counts as one.
TEST_F(SchedulerTest, ACancellationPastTheDeadlineCountsAsADeadline) {
  MakeScheduler(1);
  auto sink = Add(1, 100, {1}, absl::Now() + absl::Milliseconds(20));
  StepConstant(kHello);
  absl::SleepFor(absl::Milliseconds(30));
  scheduler_->Cancel(1, FinishReason::kCancelled);
  StepConstant(kHello);
  ASSERT_TRUE(sink->finished());
  EXPECT_EQ(sink->summary().reason, FinishReason::kDeadline);
}

// The chunks planned for `id` so far, as (start, length, last_chunk).
struct Chunk {
  int32_t start, length;
  bool last;
  bool operator==(const Chunk& o) const {
    return start == o.start && length == o.length && last == o.last;
  }
};

TEST_F(SchedulerTest, PromptsBeyondTheBudgetAreChunkedAlongsideDecodes) {
  MakeScheduler(4, /*prefill_budget=*/10, {kEos}, /*budget_while_decoding=*/4);
  auto a = Add(1, 50, std::vector<int32_t>(6, 1));
  auto b = Add(2, 50, std::vector<int32_t>(6, 2));
  auto c = Add(3, 3, std::vector<int32_t>(11, 3));
  std::map<uint64_t, std::vector<Chunk>> chunks;
  std::vector<size_t> decode_rows;
  auto step = [&] {
    const StepPlan plan = StepConstant(kHello);
    int32_t tokens = 0;
    for (const PrefillItem& item : plan.prefills) {
      chunks[item.sequence_id].push_back(
          {item.start, static_cast<int32_t>(item.tokens.size()), item.last_chunk});
      // The chunk is the prompt's own tokens at [start, end).
      for (int32_t t : item.tokens) EXPECT_EQ(t, static_cast<int32_t>(item.sequence_id));
      tokens += static_cast<int32_t>(item.tokens.size());
    }
    // Idle engine: the large budget; decodes running: the small one.
    EXPECT_LE(tokens, plan.decodes.empty() ? 10 : 4);
    decode_rows.push_back(plan.decodes.size());
  };
  step();  // nothing decodes: a whole, b's first 4 tokens
  EXPECT_EQ(chunks[1], (std::vector<Chunk>{{0, 6, true}}));
  EXPECT_EQ(chunks[2], (std::vector<Chunk>{{0, 4, false}}));
  step();  // a decodes; b finishes (2), c starts (2)
  EXPECT_EQ(chunks[2], (std::vector<Chunk>{{0, 4, false}, {4, 2, true}}));
  EXPECT_EQ(chunks[3], (std::vector<Chunk>{{0, 2, false}}));
  step();  // a and b decode; c continues
  step();
  EXPECT_EQ(chunks[3], (std::vector<Chunk>{{0, 2, false}, {2, 4, false}, {6, 4, false}}));
  EXPECT_EQ(c->chunks().size(), 0u);  // no token before the last chunk
  step();
  EXPECT_EQ(chunks[3].back(), (Chunk{10, 1, true}));
  EXPECT_EQ(c->chunks().size(), 1u);  // its first token, from the last chunk
  EXPECT_EQ(decode_rows, (std::vector<size_t>{0, 1, 2, 2, 2}));
  step();
  EXPECT_EQ(decode_rows.back(), 3u);  // c decodes from the next step on
  step();
  ASSERT_TRUE(c->finished());
  EXPECT_EQ(c->summary().completion_tokens, 3);
  EXPECT_EQ(c->summary().prompt_tokens, 11);
}

TEST_F(SchedulerTest, CancellingAChunkedPromptStopsItsChunksAndFreesTheSlot) {
  MakeScheduler(2, /*prefill_budget=*/4, {kEos}, /*budget_while_decoding=*/4);
  auto a = Add(1, 50, std::vector<int32_t>(10, 1));
  EXPECT_FALSE(StepConstant(kHello).prefills[0].last_chunk);
  scheduler_->Cancel(1);
  const StepPlan plan = StepConstant(kHello);
  EXPECT_TRUE(plan.empty());
  ASSERT_TRUE(a->finished());
  EXPECT_EQ(a->summary().reason, FinishReason::kCancelled);
  EXPECT_EQ(scheduler_->num_free_slots(), 2);
}

TEST_F(SchedulerTest, FinishAllRetiresEveryone) {
  MakeScheduler(1);
  auto a = Add(1, 100);
  auto b = Add(2, 100);
  StepConstant(kHello);
  scheduler_->FinishAll(FinishReason::kShutdown, absl::OkStatus(), absl::OkStatus());
  EXPECT_EQ(a->summary().reason, FinishReason::kShutdown);
  EXPECT_EQ(b->summary().reason, FinishReason::kShutdown);
  EXPECT_TRUE(scheduler_->idle());
}

// At shutdown, a cancellation or deadline not yet applied keeps its reason
// (the metrics count it so): it is not a waiting request ended by shutdown.
TEST_F(SchedulerTest, FinishingKeepsTheReasonsOfCancelledAndExpiredSequences) {
  MakeScheduler(1);
  auto running = Add(1, 100);
  auto cancelled = Add(2, 100);
  auto expired = Add(3, 100, {1}, absl::Now() + absl::Milliseconds(20));
  auto waiting = Add(4, 100);
  StepConstant(kHello);  // 1 runs; 2, 3 and 4 wait
  scheduler_->Cancel(2);
  absl::SleepFor(absl::Milliseconds(30));
  scheduler_->FinishWaiting(FinishReason::kShutdown, absl::UnavailableError("not started"));
  EXPECT_EQ(cancelled->summary().reason, FinishReason::kCancelled);
  EXPECT_EQ(expired->summary().reason, FinishReason::kDeadline);
  EXPECT_EQ(waiting->summary().reason, FinishReason::kShutdown);
  EXPECT_FALSE(running->finished());
  scheduler_->Cancel(1);
  scheduler_->FinishAll(FinishReason::kShutdown, absl::OkStatus(), absl::OkStatus());
  EXPECT_EQ(running->summary().reason, FinishReason::kCancelled);
}

// Cut off at shutdown: a sequence that generated tokens ends with its text
// (OK); one still prefilling its prompt, with nothing for its client, ends
// with the error a request not started gets (UNAVAILABLE: retry elsewhere).
TEST_F(SchedulerTest, FinishAllTellsSequencesWithoutATokenToRetry) {
  MakeScheduler(2, /*prefill_budget=*/4, {kEos}, /*budget_while_decoding=*/4);
  auto decoding = Add(1, 100, {1, 2});
  StepConstant(kHello);  // 1 has its first token
  auto prefilling = Add(2, 100, std::vector<int32_t>(40, 7));
  StepConstant(kHello);  // 2's first chunk of 4 tokens
  ASSERT_EQ(scheduler_->num_running(), 2);
  EXPECT_EQ(scheduler_->FinishAll(FinishReason::kShutdown, absl::OkStatus(),
                                  absl::UnavailableError("retry")),
            1);  // cut off mid-stream: the one with tokens
  EXPECT_EQ(decoding->summary().reason, FinishReason::kShutdown);
  EXPECT_TRUE(decoding->summary().error.ok());
  EXPECT_EQ(prefilling->summary().reason, FinishReason::kShutdown);
  EXPECT_EQ(prefilling->summary().error.code(), absl::StatusCode::kUnavailable);
}

TEST_F(SchedulerTest, FailedStepFinishesItsSequencesWithTheError) {
  MakeScheduler(2);
  auto a = Add(1, 100);
  StepPlan plan = scheduler_->Schedule(absl::Now());
  scheduler_->Fail(plan, absl::InternalError("boom"), absl::Now());
  ASSERT_TRUE(a->finished());
  EXPECT_EQ(a->summary().reason, FinishReason::kError);
  EXPECT_EQ(a->summary().error.message(), "boom");
  EXPECT_EQ(scheduler_->num_free_slots(), 2);
}

TEST_F(SchedulerTest, NoSequenceIsStarvedUnderContinuousArrivals) {
  MakeScheduler(2);
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  std::vector<uint64_t> admitted;
  auto step = [&] {
    for (const PrefillItem& item : StepConstant(kHello).prefills) {
      admitted.push_back(item.sequence_id);
    }
  };
  // Arrivals (1 per step) outpace service (2 slots, 3 steps per request).
  for (int i = 0; i < 10; ++i) {
    sinks.push_back(Add(i + 1, 3));
    step();
  }
  EXPECT_GT(scheduler_->num_waiting(), 0);
  for (int i = 0; i < 40 && !scheduler_->idle(); ++i) step();
  for (auto& sink : sinks) {
    ASSERT_TRUE(sink->finished());
    EXPECT_EQ(sink->summary().completion_tokens, 3);
  }
  // FIFO admission: everyone is served, in arrival order.
  EXPECT_THAT(admitted, ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
}

}  // namespace
}  // namespace tandem
