#include "core/engine/sink_dispatcher.h"

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
  dispatcher.StageChunk(sink, Chunk(7));
  EXPECT_EQ(sink->ids(), std::vector<int32_t>{7});
  dispatcher.StageFinish(sink, GenerationSummary{});
  EXPECT_TRUE(sink->finished());
  EXPECT_THAT(sink->threads(), testing::Each(std::this_thread::get_id()));
}

TEST(SinkDispatcherTest, EachSinkGetsItsCallsInOrderOnOneOtherThread) {
  constexpr int kSinks = 16, kTurns = 300;
  SinkDispatcher dispatcher(3);
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  for (int s = 0; s < kSinks; ++s) sinks.push_back(std::make_shared<RecordingSink>());
  for (int turn = 0; turn < kTurns; ++turn) {
    for (auto& sink : sinks) dispatcher.StageChunk(sink, Chunk(turn));
    dispatcher.Flush();
  }
  GenerationSummary summary;
  summary.completion_tokens = kTurns;
  for (auto& sink : sinks) dispatcher.StageFinish(sink, summary);
  dispatcher.Flush();
  std::vector<int32_t> expected;
  for (int turn = 0; turn < kTurns; ++turn) expected.push_back(turn);
  std::vector<std::thread::id> used;
  for (auto& sink : sinks) {
    ASSERT_TRUE(sink->WaitFinished(absl::Seconds(10)));
    EXPECT_EQ(sink->ids(), expected);
    EXPECT_EQ(sink->summary().completion_tokens, kTurns);
    const std::vector<std::thread::id> threads = sink->threads();
    ASSERT_EQ(threads.size(), static_cast<size_t>(kTurns + 1));
    for (const std::thread::id& id : threads) ASSERT_EQ(id, threads[0]);
    EXPECT_NE(threads[0], std::this_thread::get_id());
    if (std::find(used.begin(), used.end(), threads[0]) == used.end()) used.push_back(threads[0]);
  }
  EXPECT_GT(used.size(), 1u) << "16 sinks all on one of 3 delivery threads";
}

TEST(SinkDispatcherTest, StagedCallsWaitForFlush) {
  SinkDispatcher dispatcher(1);
  auto sink = std::make_shared<RecordingSink>();
  dispatcher.StageChunk(sink, Chunk(1));
  dispatcher.StageFinish(sink, GenerationSummary{});
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
    for (int i = 0; i < 5; ++i) dispatcher.StageChunk(sink, Chunk(i));
    dispatcher.Flush();
    dispatcher.StageChunk(sink, Chunk(5));
    dispatcher.StageFinish(sink, GenerationSummary{});
    dispatcher.Stop();
    EXPECT_TRUE(sink->finished());  // delivered before Stop returned
    EXPECT_EQ(sink->ids(), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  }  // the destructor after Stop: nothing left, no second join
  EXPECT_EQ(sink.use_count(), 1) << "the dispatcher still holds the sink";
}

}  // namespace
}  // namespace tandem
