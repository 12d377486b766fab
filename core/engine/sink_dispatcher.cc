#include "core/engine/sink_dispatcher.h"

#include <utility>

namespace tandem {

SinkDispatcher::SinkDispatcher(int threads) {
  for (int i = 0; i < threads; ++i) {
    lanes_.push_back(std::make_unique<Lane>());
    Lane* lane = lanes_.back().get();
    lane->thread = std::thread([lane] { Run(lane); });
  }
}

SinkDispatcher::~SinkDispatcher() { Stop(); }

SinkDispatcher::Lane* SinkDispatcher::LaneOf(uint64_t sequence_id) {
  if (lanes_.empty() || stopped_) return nullptr;
  return lanes_[sequence_id % lanes_.size()].get();
}

void SinkDispatcher::StageChunk(uint64_t sequence_id, const std::shared_ptr<TokenSink>& sink,
                                GenerationChunk chunk) {
  Lane* lane = LaneOf(sequence_id);
  if (lane == nullptr) {
    sink->OnChunk(std::move(chunk));
    return;
  }
  lane->staged.push_back({sink, false, std::move(chunk), {}});
}

void SinkDispatcher::StageFinish(uint64_t sequence_id, const std::shared_ptr<TokenSink>& sink,
                                 const GenerationSummary& summary) {
  Lane* lane = LaneOf(sequence_id);
  if (lane == nullptr) {
    sink->OnFinish(summary);
    return;
  }
  lane->staged.push_back({sink, true, {}, summary});
}

void SinkDispatcher::Flush() {
  for (auto& lane : lanes_) {
    if (lane->staged.empty()) continue;
    {
      absl::MutexLock lock(&lane->mu);
      // A whole turn behind: wait until the thread takes that turn's calls.
      auto taken = [&lane]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(lane->mu) {
        return lane->calls.empty();
      };
      lane->mu.Await(absl::Condition(&taken));
      lane->calls.swap(lane->staged);
    }
    lane->ready.Signal();
  }
}

void SinkDispatcher::Stop() {
  if (stopped_) return;
  Flush();
  stopped_ = true;
  for (auto& lane : lanes_) {
    {
      absl::MutexLock lock(&lane->mu);
      lane->stop = true;
    }
    lane->ready.Signal();
  }
  for (auto& lane : lanes_) lane->thread.join();
}

void SinkDispatcher::Deliver(Call& call) {
  if (call.finish) {
    call.sink->OnFinish(call.summary);
  } else {
    call.sink->OnChunk(std::move(call.chunk));
  }
}

void SinkDispatcher::Run(Lane* lane) {
  std::vector<Call> batch;
  while (true) {
    {
      absl::MutexLock lock(&lane->mu);
      while (lane->calls.empty() && !lane->stop) lane->ready.Wait(&lane->mu);
      if (lane->calls.empty()) return;  // stopped, and everything flushed was delivered
      batch.swap(lane->calls);
    }
    for (Call& call : batch) Deliver(call);
    batch.clear();  // releases the sinks here, not under the lock
  }
}

}  // namespace tandem
