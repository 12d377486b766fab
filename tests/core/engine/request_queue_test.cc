#include "core/engine/request_queue.h"

#include <memory>
#include <thread>

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(RequestQueueTest, BoundsWaitingRequestsIncludingTheEnginesOwn) {
  RequestQueue queue(/*num_slots=*/0, /*max_waiting=*/2);
  ASSERT_TRUE(queue.Push(1, {}).ok());
  ASSERT_TRUE(queue.Push(2, {}).ok());
  EXPECT_EQ(queue.Push(3, {}).code(), absl::StatusCode::kResourceExhausted);
  RequestQueue::Inbox inbox = queue.Take(false, absl::ZeroDuration());
  EXPECT_EQ(inbox.requests.size(), 2u);
  // Taken but not yet reported: still counted.
  EXPECT_EQ(queue.Push(3, {}).code(), absl::StatusCode::kResourceExhausted);
  queue.ReportEngineState(/*waiting=*/1, /*free_slots=*/0, /*idle=*/false);
  EXPECT_TRUE(queue.Push(3, {}).ok());
}

// A burst against idle slots: capacity is free slots + queue places, and a
// request on its way to a free slot does not take a queue place.
TEST(RequestQueueTest, CapacityIsFreeSlotsPlusTheQueue) {
  RequestQueue queue(/*num_slots=*/8, /*max_waiting=*/32);
  int accepted = 0;
  for (int i = 0; i < 200; ++i) accepted += queue.Push(i, {}).ok() ? 1 : 0;
  EXPECT_EQ(accepted, 40);
  // The engine took them: 8 running, 32 waiting. Nothing more fits ...
  queue.Take(false, absl::ZeroDuration());
  queue.ReportEngineState(/*waiting=*/32, /*free_slots=*/0, /*idle=*/false);
  EXPECT_EQ(queue.Push(500, {}).code(), absl::StatusCode::kResourceExhausted);
  // ... until a sequence finishes and its slot is free again.
  queue.ReportEngineState(/*waiting=*/32, /*free_slots=*/1, /*idle=*/false);
  EXPECT_TRUE(queue.Push(501, {}).ok());
  EXPECT_EQ(queue.Push(502, {}).code(), absl::StatusCode::kResourceExhausted);
}

TEST(RequestQueueTest, CloseAsksTheEngineToDrainOnce) {
  RequestQueue queue(1, 8);
  queue.Close();
  EXPECT_TRUE(queue.Take(true, absl::Seconds(10)).drain);  // wakes a blocked engine
  EXPECT_FALSE(queue.Take(false, absl::ZeroDuration()).drain);
}

TEST(RequestQueueTest, ClosedQueueIsUnavailable) {
  RequestQueue queue(1, 8);
  queue.Close();
  EXPECT_EQ(queue.Push(1, {}).code(), absl::StatusCode::kUnavailable);
}

TEST(RequestQueueTest, TakeBlocksUntilWorkArrives) {
  RequestQueue queue(1, 8);
  std::thread producer([&] {
    absl::SleepFor(absl::Milliseconds(50));
    queue.PushCancel(7, FinishReason::kDeadline);
  });
  RequestQueue::Inbox inbox = queue.Take(true, absl::Seconds(10));
  producer.join();
  ASSERT_EQ(inbox.cancellations.size(), 1u);
  EXPECT_EQ(inbox.cancellations[0].id, 7u);
  EXPECT_EQ(inbox.cancellations[0].reason, FinishReason::kDeadline);
}

TEST(RequestQueueTest, TakeTimesOutEmpty) {
  RequestQueue queue(1, 8);
  RequestQueue::Inbox inbox = queue.Take(true, absl::Milliseconds(10));
  EXPECT_TRUE(inbox.requests.empty());
  EXPECT_FALSE(inbox.stop);
}

TEST(RequestQueueTest, WaitUntilIdleFollowsEngineReports) {
  RequestQueue queue(1, 8);
  ASSERT_TRUE(queue.Push(1, {}).ok());
  EXPECT_FALSE(queue.WaitUntilIdle(absl::Now() + absl::Milliseconds(10)));
  queue.Take(false, absl::ZeroDuration());
  EXPECT_FALSE(queue.WaitUntilIdle(absl::Now() + absl::Milliseconds(10)));
  queue.ReportEngineState(0, 1, true);
  EXPECT_TRUE(queue.WaitUntilIdle(absl::Now() + absl::Milliseconds(10)));
}

}  // namespace
}  // namespace tandem
