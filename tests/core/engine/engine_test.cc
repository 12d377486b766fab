#include "core/engine/engine.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"
#include "tests/core/recording_sink.h"
#include "tests/core/test_tokenizer.h"

namespace tandem {
namespace {

constexpr int32_t kHello = 18435;  // " Hello"

// Samples " Hello" for every row; optionally blocks each step until released.
class FakeRunner : public ModelRunner {
 public:
  explicit FakeRunner(int slots) {
    description_.name = "fake";
    description_.vocab_size = 50257;
    description_.max_context = 64;
    description_.num_slots = slots;
    description_.eos_token_ids = {50256};
  }
  const ModelDescription& description() const override { return description_; }
  bool reads_tokens_on_device() const override { return on_device_; }
  absl::StatusOr<StepOutput> Step(const StepPlan& plan) override {
    step_thread_ = std::this_thread::get_id();
    if (gate_ != nullptr) gate_->WaitForNotification();
    absl::SleepFor(step_delay_);
    if (fail_) return absl::InternalError("device lost");
    StepOutput output;
    output.prefill_tokens.assign(plan.prefills.size(), {kHello, 0});
    output.decode_tokens.assign(plan.decodes.size(), {kHello, 0});
    return output;
  }
  ModelDescription description_;
  absl::Notification* gate_ = nullptr;
  absl::Duration step_delay_ = absl::ZeroDuration();
  bool fail_ = false;
  bool on_device_ = false;
  std::atomic<std::thread::id> step_thread_;  // the engine thread, once a step ran
};

GenerationRequest MakeRequest(std::shared_ptr<RecordingSink> sink, int max_tokens) {
  GenerationRequest request;
  request.prompt_token_ids = {1, 2, 3};
  request.stopping.max_tokens = max_tokens;
  request.sink = std::move(sink);
  return request;
}

TEST(EngineTest, ServesConcurrentSubmissionsFromManyThreads) {
  Engine engine({}, std::make_unique<FakeRunner>(4), &TestTokenizer(), nullptr);
  std::vector<std::shared_ptr<RecordingSink>> sinks(32);
  std::vector<std::thread> clients;
  for (int i = 0; i < 32; ++i) {
    clients.emplace_back([&, i] {
      sinks[i] = std::make_shared<RecordingSink>();
      EXPECT_TRUE(engine.Submit(MakeRequest(sinks[i], 5)).ok());
    });
  }
  for (std::thread& t : clients) t.join();
  for (auto& sink : sinks) {
    ASSERT_TRUE(sink->WaitFinished(absl::Seconds(10)));
    EXPECT_EQ(sink->summary().reason, FinishReason::kLength);
    EXPECT_EQ(sink->text(), " Hello Hello Hello Hello Hello");
  }
  EXPECT_EQ(engine.Shutdown(absl::Seconds(1)), 0);
}

// The sinks run on the delivery threads, each request's calls on one of
// them, OnFinish last (RecordingSink checks that no call follows it), or on
// the engine thread when there are none. (SinkDispatcherTest checks the
// order of the calls.)
TEST(EngineTest, CallsTheSinksOnDeliveryThreadsOrTheEngineThread) {
  for (int threads : {0, 2}) {
    auto runner = std::make_unique<FakeRunner>(4);
    FakeRunner* fake = runner.get();
    EngineOptions options;
    options.delivery_threads = threads;
    Engine engine(options, std::move(runner), &TestTokenizer(), nullptr);
    std::vector<std::shared_ptr<RecordingSink>> sinks;
    for (int i = 0; i < 8; ++i) {
      sinks.push_back(std::make_shared<RecordingSink>());
      ASSERT_TRUE(engine.Submit(MakeRequest(sinks.back(), 6)).ok());
    }
    for (auto& sink : sinks) ASSERT_TRUE(sink->WaitFinished(absl::Seconds(10)));
    const std::thread::id engine_thread = fake->step_thread_.load();
    EXPECT_EQ(engine.Shutdown(absl::Seconds(10)), 0);
    for (auto& sink : sinks) {
      EXPECT_EQ(sink->text(), " Hello Hello Hello Hello Hello Hello");
      const std::vector<std::thread::id> called_on = sink->threads();
      ASSERT_EQ(called_on.size(), 7u);  // 6 chunks, then OnFinish
      EXPECT_THAT(called_on, testing::Each(called_on[0]));
      if (threads == 0) {
        EXPECT_EQ(called_on[0], engine_thread);
      } else {
        EXPECT_NE(called_on[0], engine_thread);
        EXPECT_NE(called_on[0], std::this_thread::get_id());
      }
    }
  }
}

TEST(EngineTest, RejectsInvalidRequestsWithoutCallingTheSink) {
  Engine engine({}, std::make_unique<FakeRunner>(1), &TestTokenizer(), nullptr);
  auto sink = std::make_shared<RecordingSink>();
  GenerationRequest request = MakeRequest(sink, 100);  // context is 64
  absl::StatusOr<uint64_t> id = engine.Submit(std::move(request));
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(sink->WaitFinished(absl::Milliseconds(50)));
}

TEST(EngineTest, FullQueueIsResourceExhaustedAndShutdownIsUnavailable) {
  auto runner = std::make_unique<FakeRunner>(1);
  absl::Notification gate;
  runner->gate_ = &gate;
  EngineOptions options;
  options.max_queue = 2;
  Engine engine(options, std::move(runner), &TestTokenizer(), nullptr);
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  auto submit = [&] {
    sinks.push_back(std::make_shared<RecordingSink>());
    return engine.Submit(MakeRequest(sinks.back(), 2)).status();
  };
  ASSERT_TRUE(submit().ok());  // takes the only slot; its step blocks
  absl::SleepFor(absl::Milliseconds(100));
  ASSERT_TRUE(submit().ok());  // waiting 1
  ASSERT_TRUE(submit().ok());  // waiting 2
  EXPECT_EQ(submit().code(), absl::StatusCode::kResourceExhausted);
  gate.Notify();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sinks[i]->WaitFinished(absl::Seconds(10)));
  EXPECT_TRUE(submit().ok());  // room again
  ASSERT_TRUE(sinks[4]->WaitFinished(absl::Seconds(10)));
  engine.Shutdown(absl::Seconds(1));
  EXPECT_EQ(submit().code(), absl::StatusCode::kUnavailable);
}

TEST(EngineTest, CancelFinishesARunningRequest) {
  Engine engine({}, std::make_unique<FakeRunner>(1), &TestTokenizer(), nullptr);
  auto sink = std::make_shared<RecordingSink>();
  absl::StatusOr<uint64_t> id = engine.Submit(MakeRequest(sink, 60));
  ASSERT_TRUE(id.ok());
  engine.Cancel(*id);
  ASSERT_TRUE(sink->WaitFinished(absl::Seconds(10)));
  // Either cancelled mid-way or (on a very fast machine) finished first.
  if (sink->summary().reason == FinishReason::kCancelled) {
    EXPECT_LT(sink->summary().completion_tokens, 60);
  } else {
    EXPECT_EQ(sink->summary().reason, FinishReason::kLength);
  }
}

TEST(EngineTest, ShutdownCutsOffRequestsThatOutliveTheGracePeriod) {
  auto runner = std::make_unique<FakeRunner>(1);
  absl::Notification gate;  // never released before shutdown
  runner->gate_ = &gate;
  Engine engine({}, std::move(runner), &TestTokenizer(), nullptr);
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(engine.Submit(MakeRequest(sink, 10)).ok());
  std::thread release([&] {
    absl::SleepFor(absl::Milliseconds(200));
    gate.Notify();
  });
  EXPECT_EQ(engine.Shutdown(absl::Milliseconds(50)), 1);
  release.join();
  ASSERT_TRUE(sink->finished());
  EXPECT_EQ(sink->summary().reason, FinishReason::kShutdown);
}

// Requests that have not started end at once, UNAVAILABLE, so clients can
// retry elsewhere; the running one gets its grace period; a second signal
// (CutShort) ends that early.
TEST(EngineTest, ShutdownEndsWaitingRequestsAtOnceAndCutShortEndsTheGrace) {
  auto runner = std::make_unique<FakeRunner>(1);
  runner->step_delay_ = absl::Milliseconds(20);  // 60 tokens take over a second
  Engine engine({}, std::move(runner), &TestTokenizer(), nullptr);
  auto running = std::make_shared<RecordingSink>();
  ASSERT_TRUE(engine.Submit(MakeRequest(running, 60)).ok());
  std::vector<std::shared_ptr<RecordingSink>> waiting;
  for (int i = 0; i < 3; ++i) {
    waiting.push_back(std::make_shared<RecordingSink>());
    ASSERT_TRUE(engine.Submit(MakeRequest(waiting.back(), 60)).ok());
  }
  absl::Time start = absl::Now();
  int cut_off = -1;
  std::thread drain([&] { cut_off = engine.Shutdown(absl::Seconds(60)); });
  for (auto& sink : waiting) {
    ASSERT_TRUE(sink->WaitFinished(absl::Seconds(5)));
    EXPECT_EQ(sink->summary().reason, FinishReason::kShutdown);
    EXPECT_EQ(sink->summary().error.code(), absl::StatusCode::kUnavailable);
    EXPECT_EQ(sink->summary().completion_tokens, 0);
  }
  EXPECT_FALSE(running->finished());
  engine.CutShort();
  drain.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ASSERT_TRUE(running->finished());
  EXPECT_EQ(running->summary().reason, FinishReason::kShutdown);
  EXPECT_LT(running->summary().completion_tokens, 60);
  EXPECT_TRUE(running->summary().error.ok());
  EXPECT_EQ(cut_off, 1);
}

// Shutdown without a grace period: the waiting ones still get UNAVAILABLE,
// only the running one is cut off.
TEST(EngineTest, ShutdownWithoutGraceStillRefusesTheWaitingOnes) {
  auto runner = std::make_unique<FakeRunner>(1);
  runner->step_delay_ = absl::Milliseconds(20);
  Engine engine({}, std::move(runner), &TestTokenizer(), nullptr);
  auto running = std::make_shared<RecordingSink>();
  ASSERT_TRUE(engine.Submit(MakeRequest(running, 60)).ok());
  absl::SleepFor(absl::Milliseconds(50));  // admitted and decoding
  auto waiting = std::make_shared<RecordingSink>();
  ASSERT_TRUE(engine.Submit(MakeRequest(waiting, 60)).ok());
  EXPECT_EQ(engine.Shutdown(absl::ZeroDuration()), 1);
  ASSERT_TRUE(waiting->finished());
  EXPECT_EQ(waiting->summary().error.code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(running->finished());
  EXPECT_EQ(running->summary().reason, FinishReason::kShutdown);
  EXPECT_TRUE(running->summary().error.ok());
}

TEST(EngineTest, ACancelledCallWhoseDeadlinePassedCountsAsDeadline) {
  auto runner = std::make_unique<FakeRunner>(1);
  runner->step_delay_ = absl::Milliseconds(20);  // the blocker holds the slot
  Engine engine({}, std::move(runner), &TestTokenizer(), nullptr);
  auto blocker = std::make_shared<RecordingSink>();
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(engine.Submit(MakeRequest(blocker, 60)).ok());
  absl::StatusOr<uint64_t> id = engine.Submit(MakeRequest(sink, 60));  // waits for the slot
  ASSERT_TRUE(id.ok());
  engine.Cancel(*id, FinishReason::kDeadline);
  ASSERT_TRUE(sink->WaitFinished(absl::Seconds(10)));
  EXPECT_EQ(sink->summary().reason, FinishReason::kDeadline);
}

TEST(EngineTest, ShutdownWaitsForRequestsWithinTheGracePeriod) {
  Engine engine({}, std::make_unique<FakeRunner>(2), &TestTokenizer(), nullptr);
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(engine.Submit(MakeRequest(sink, 20)).ok());
  EXPECT_EQ(engine.Shutdown(absl::Seconds(10)), 0);
  ASSERT_TRUE(sink->finished());
  EXPECT_EQ(sink->summary().reason, FinishReason::kLength);
}

TEST(EngineTest, RunnerFailureFinishesItsRequestsWithAnError) {
  auto runner = std::make_unique<FakeRunner>(1);
  runner->fail_ = true;
  Engine engine({}, std::move(runner), &TestTokenizer(), nullptr);
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(engine.Submit(MakeRequest(sink, 5)).ok());
  ASSERT_TRUE(sink->WaitFinished(absl::Seconds(10)));
  EXPECT_EQ(sink->summary().reason, FinishReason::kError);
  EXPECT_EQ(sink->summary().error.code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace tandem

namespace tandem {
namespace {

class TokenCounter : public EngineObserver {
 public:
  void OnStep(const StepStats& stats) override { generated += stats.generated_tokens; }
  std::atomic<int> generated{0};
};

TEST(EngineTest, PipelinedEngineDropsTheExtraRowOfFinishedSequences) {
  auto runner = std::make_unique<FakeRunner>(2);
  runner->on_device_ = true;  // lets the engine launch step i+1 before reading step i
  TokenCounter counter;
  Engine engine({}, std::move(runner), &TestTokenizer(), &counter);
  ASSERT_TRUE(engine.pipelined());
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  for (int i = 0; i < 6; ++i) {
    sinks.push_back(std::make_shared<RecordingSink>());
    ASSERT_TRUE(engine.Submit(MakeRequest(sinks.back(), 1 + i)).ok());
  }
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(sinks[i]->WaitFinished(absl::Seconds(10)));
    EXPECT_EQ(sinks[i]->summary().reason, FinishReason::kLength);
    EXPECT_EQ(sinks[i]->ids().size(), static_cast<size_t>(1 + i)) << "no token past max_tokens";
  }
  EXPECT_EQ(engine.Shutdown(absl::Seconds(1)), 0);
  EXPECT_EQ(counter.generated.load(), 1 + 2 + 3 + 4 + 5 + 6) << "dropped rows are not counted";
}

}  // namespace
}  // namespace tandem
