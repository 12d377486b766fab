// A TokenSink that records everything, for tests.
#ifndef TANDEM_TESTS_CORE_RECORDING_SINK_H_
#define TANDEM_TESTS_CORE_RECORDING_SINK_H_

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/engine/token_sink.h"

namespace tandem {

class RecordingSink : public TokenSink {
 public:
  void OnChunk(GenerationChunk chunk) override {
    absl::MutexLock lock(&mu_);
    ASSERT_FALSE(finished_.HasBeenNotified()) << "chunk after OnFinish";
    threads_.push_back(std::this_thread::get_id());
    text_ += chunk.text;
    chunks_.push_back(chunk.text);
    ids_.insert(ids_.end(), chunk.token_ids.begin(), chunk.token_ids.end());
  }
  void OnFinish(const GenerationSummary& summary) override {
    absl::MutexLock lock(&mu_);
    ASSERT_FALSE(finished_.HasBeenNotified()) << "OnFinish twice";
    threads_.push_back(std::this_thread::get_id());
    summary_ = summary;
    finished_.Notify();
  }

  bool WaitFinished(absl::Duration timeout) {
    return finished_.WaitForNotificationWithTimeout(timeout);
  }
  bool finished() const { return finished_.HasBeenNotified(); }
  std::string text() { absl::MutexLock lock(&mu_); return text_; }
  std::vector<std::string> chunks() { absl::MutexLock lock(&mu_); return chunks_; }
  std::vector<int32_t> ids() { absl::MutexLock lock(&mu_); return ids_; }
  GenerationSummary summary() { absl::MutexLock lock(&mu_); return summary_; }
  // The thread of each call, OnFinish's last.
  std::vector<std::thread::id> threads() { absl::MutexLock lock(&mu_); return threads_; }

 private:
  absl::Mutex mu_;
  std::string text_;
  std::vector<std::string> chunks_;
  std::vector<int32_t> ids_;
  GenerationSummary summary_;
  std::vector<std::thread::id> threads_;
  absl::Notification finished_;
};

}  // namespace tandem

#endif  // TANDEM_TESTS_CORE_RECORDING_SINK_H_
