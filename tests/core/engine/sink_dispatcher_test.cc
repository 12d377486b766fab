#include "core/engine/sink_dispatcher.h"

#include <memory>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "tests/core/recording_sink.h"

namespace tandem {
namespace {

GenerationChunk Chunk(int32_t id) {
  GenerationChunk chunk;
  chunk.text = std::to_string(id) + ",";
  chunk.token_ids = {id};
  return chunk;
}

TEST(SinkDispatcherTest, WithoutThreadsCallsTheSinkAtOnceOnTheCallingThread) {
  SinkDispatcher dispatcher(0);
  auto sink = std::make_shared<RecordingSink>();
  dispatcher.StageChunk(1, sink, Chunk(7));
  EXPECT_EQ(sink->ids(), std::vector<int32_t>{7});
  dispatcher.StageFinish(1, sink, GenerationSummary{});
  EXPECT_TRUE(sink->finished());
  EXPECT_THAT(sink->threads(), testing::Each(std::this_thread::get_id()));
}

TEST(SinkDispatcherTest, EachSinkGetsItsCallsInOrderOnOneOtherThread) {
  constexpr int kSinks = 16, kTurns = 300;
  SinkDispatcher dispatcher(3);
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  for (int s = 0; s < kSinks; ++s) sinks.push_back(std::make_shared<RecordingSink>());
  for (int turn = 0; turn < kTurns; ++turn) {
    for (int s = 0; s < kSinks; ++s) dispatcher.StageChunk(s, sinks[s], Chunk(turn));
    dispatcher.Flush();
  }
  GenerationSummary summary;
  summary.completion_tokens = kTurns;
  for (int s = 0; s < kSinks; ++s) dispatcher.StageFinish(s, sinks[s], summary);
  dispatcher.Flush();
  std::vector<int32_t> expected;
  for (int turn = 0; turn < kTurns; ++turn) expected.push_back(turn);
  std::vector<std::thread::id> lane_thread(3);
  for (int s = 0; s < kSinks; ++s) {
    const auto& sink = sinks[s];
    ASSERT_TRUE(sink->WaitFinished(absl::Seconds(10)));
    EXPECT_EQ(sink->ids(), expected);
    EXPECT_EQ(sink->summary().completion_tokens, kTurns);
    const std::vector<std::thread::id> threads = sink->threads();
    ASSERT_EQ(threads.size(), static_cast<size_t>(kTurns + 1));
    for (const std::thread::id& id : threads) ASSERT_EQ(id, threads[0]);
    EXPECT_NE(threads[0], std::this_thread::get_id());
    // Sequence id modulo the threads: ids 0, 3, 6, ... share one.
    if (s < 3) {
      lane_thread[s] = threads[0];
    } else {
      EXPECT_EQ(threads[0], lane_thread[s % 3]) << "sequence " << s;
    }
  }
  EXPECT_NE(lane_thread[0], lane_thread[1]);
  EXPECT_NE(lane_thread[1], lane_thread[2]);
  EXPECT_NE(lane_thread[0], lane_thread[2]);
}

TEST(SinkDispatcherTest, StagedCallsWaitForFlush) {
  SinkDispatcher dispatcher(1);
  auto sink = std::make_shared<RecordingSink>();
  dispatcher.StageChunk(4, sink, Chunk(1));
  dispatcher.StageFinish(4, sink, GenerationSummary{});
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_TRUE(sink->ids().empty());
  EXPECT_FALSE(sink->finished());
  dispatcher.Flush();
  ASSERT_TRUE(sink->WaitFinished(absl::Seconds(10)));
  EXPECT_EQ(sink->ids(), std::vector<int32_t>{1});
}

TEST(SinkDispatcherTest, StopDeliversWhatWasStagedThenJoins) {
  auto sink = std::make_shared<RecordingSink>();
  {
    SinkDispatcher dispatcher(2);
    for (int i = 0; i < 5; ++i) dispatcher.StageChunk(9, sink, Chunk(i));
    dispatcher.Flush();
    dispatcher.StageChunk(9, sink, Chunk(5));
    dispatcher.Stop();
    EXPECT_EQ(sink->ids(), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));  // before Stop returned
    // After Stop, a call is made at once, on the calling thread.
    dispatcher.StageFinish(9, sink, GenerationSummary{});
    EXPECT_TRUE(sink->finished());
    EXPECT_EQ(sink->threads().back(), std::this_thread::get_id());
  }  // the destructor after Stop: nothing left, no second join
  EXPECT_EQ(sink.use_count(), 1) << "the dispatcher still holds the sink";
}

// A sink that blocks its delivery thread until released.
class GatedSink : public RecordingSink {
 public:
  void OnChunk(GenerationChunk chunk) override {
    gate_.WaitForNotification();
    RecordingSink::OnChunk(std::move(chunk));
  }
  absl::Notification gate_;
};

// While a delivery thread has not taken the previous turn's calls, Flush
// waits: the queue never grows past two turns.
TEST(SinkDispatcherTest, FlushWaitsWhileADeliveryThreadIsATurnBehind) {
  SinkDispatcher dispatcher(1);
  auto sink = std::make_shared<GatedSink>();
  dispatcher.StageChunk(0, sink, Chunk(0));
  dispatcher.Flush();                      // taken; its call blocks the thread
  absl::SleepFor(absl::Milliseconds(20));  // let the thread take it
  dispatcher.StageChunk(0, sink, Chunk(1));
  dispatcher.Flush();  // queued: the thread is busy
  dispatcher.StageChunk(0, sink, Chunk(2));
  absl::Notification flushed;
  std::thread engine([&] {
    dispatcher.Flush();  // turn 1 is still queued: waits
    flushed.Notify();
  });
  EXPECT_FALSE(flushed.WaitForNotificationWithTimeout(absl::Milliseconds(100)));
  sink->gate_.Notify();
  EXPECT_TRUE(flushed.WaitForNotificationWithTimeout(absl::Seconds(10)));
  engine.join();
  dispatcher.StageFinish(0, sink, GenerationSummary{});
  dispatcher.Flush();
  ASSERT_TRUE(sink->WaitFinished(absl::Seconds(10)));
  EXPECT_EQ(sink->ids(), (std::vector<int32_t>{0, 1, 2}));
}

}  // namespace
}  // namespace tandem
