#include "core/engine/request_queue.h"

#include <memory>
#include <thread>

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(RequestQueueTest, BoundsWaitingRequestsIncludingTheEnginesOwn) {
  RequestQueue queue(2);
  ASSERT_TRUE(queue.Push(1, {}).ok());
  ASSERT_TRUE(queue.Push(2, {}).ok());
  EXPECT_EQ(queue.Push(3, {}).code(), absl::StatusCode::kResourceExhausted);
  RequestQueue::Inbox inbox = queue.Take(false, absl::ZeroDuration());
  EXPECT_EQ(inbox.requests.size(), 2u);
  // Taken but not yet reported: still counted.
  EXPECT_EQ(queue.Push(3, {}).code(), absl::StatusCode::kResourceExhausted);
  queue.ReportEngineState(/*waiting=*/1, /*idle=*/false);
  EXPECT_TRUE(queue.Push(3, {}).ok());
}

TEST(RequestQueueTest, ClosedQueueIsUnavailable) {
  RequestQueue queue(8);
  queue.Close();
  EXPECT_EQ(queue.Push(1, {}).code(), absl::StatusCode::kUnavailable);
}

TEST(RequestQueueTest, TakeBlocksUntilWorkArrives) {
  RequestQueue queue(8);
  std::thread producer([&] {
    absl::SleepFor(absl::Milliseconds(50));
    queue.PushCancel(7);
  });
  RequestQueue::Inbox inbox = queue.Take(true, absl::Seconds(10));
  producer.join();
  ASSERT_EQ(inbox.cancellations.size(), 1u);
  EXPECT_EQ(inbox.cancellations[0], 7u);
}

TEST(RequestQueueTest, TakeTimesOutEmpty) {
  RequestQueue queue(8);
  RequestQueue::Inbox inbox = queue.Take(true, absl::Milliseconds(10));
  EXPECT_TRUE(inbox.requests.empty());
  EXPECT_FALSE(inbox.stop);
}

TEST(RequestQueueTest, WaitUntilIdleFollowsEngineReports) {
  RequestQueue queue(8);
  ASSERT_TRUE(queue.Push(1, {}).ok());
  EXPECT_FALSE(queue.WaitUntilIdle(absl::Now() + absl::Milliseconds(10)));
  queue.Take(false, absl::ZeroDuration());
  EXPECT_FALSE(queue.WaitUntilIdle(absl::Now() + absl::Milliseconds(10)));
  queue.ReportEngineState(0, true);
  EXPECT_TRUE(queue.WaitUntilIdle(absl::Now() + absl::Milliseconds(10)));
}

}  // namespace
}  // namespace tandem
