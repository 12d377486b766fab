#include "server/write_dispatcher.h"

#include <atomic>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

namespace tandem {
namespace {

TEST(WriteDispatcherTest, RunsEachShardsTasksInOrderOnOneThread) {
  absl::Mutex mu;
  std::map<size_t, std::vector<int>> order;              // shard -> task numbers as run
  std::map<size_t, std::set<std::thread::id>> threads;  // shard -> threads that ran it
  {
    WriteDispatcher dispatcher(3);
    ASSERT_EQ(dispatcher.threads(), 3);
    for (int i = 0; i < 300; ++i) {
      const size_t shard = static_cast<size_t>(i % 5);
      dispatcher.Post(shard, [&, shard, i] {
        absl::MutexLock lock(&mu);
        order[shard].push_back(i);
        threads[shard].insert(std::this_thread::get_id());
      });
    }
  }  // the destructor runs what was posted
  ASSERT_EQ(order.size(), 5u);
  for (const auto& [shard, numbers] : order) {
    ASSERT_EQ(numbers.size(), 60u) << "shard " << shard;
    for (size_t k = 0; k < numbers.size(); ++k) {
      EXPECT_EQ(numbers[k], static_cast<int>(shard + 5 * k)) << "shard " << shard;
    }
    EXPECT_EQ(threads[shard].size(), 1u) << "shard " << shard;
  }
  // Shards 0 and 3 share a thread (3 threads); 0 and 1 do not.
  EXPECT_EQ(*threads[0].begin(), *threads[3].begin());
  EXPECT_NE(*threads[0].begin(), *threads[1].begin());
}

TEST(WriteDispatcherTest, RunsTasksOffTheCallersThreadAndAcceptsPostsFromTasks) {
  WriteDispatcher dispatcher(2);
  std::atomic<bool> on_caller{true};
  absl::Notification done;
  const std::thread::id caller = std::this_thread::get_id();
  dispatcher.Post(0, [&] {
    on_caller = std::this_thread::get_id() == caller;
    dispatcher.Post(1, [&] { done.Notify(); });  // from a task, to another thread
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(on_caller);
}

TEST(WriteDispatcherTest, ATaskPostedByATaskDuringShutdownStillRuns) {
  std::atomic<bool> ran{false};
  {
    WriteDispatcher dispatcher(2);
    dispatcher.Post(0, [&] {
      // By now the destructor has stopped shard 1's thread, which had no work.
      absl::SleepFor(absl::Milliseconds(50));
      dispatcher.Post(1, [&] { ran = true; });
    });
  }
  EXPECT_TRUE(ran);
}

TEST(WriteDispatcherTest, AtLeastOneThread) {
  WriteDispatcher dispatcher(0);
  EXPECT_EQ(dispatcher.threads(), 1);
  absl::Notification done;
  dispatcher.Post(7, [&] { done.Notify(); });
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
}

}  // namespace
}  // namespace tandem
