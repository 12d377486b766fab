#include "core/engine/sink_dispatcher.h"

#include <functional>
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

SinkDispatcher::Lane& SinkDispatcher::LaneOf(const TokenSink* sink) {
  // Sinks are heap objects: drop the low bits every allocation shares.
  return *lanes_[(std::hash<const TokenSink*>()(sink) >> 4) % lanes_.size()];
}

void SinkDispatcher::StageChunk(const std::shared_ptr<TokenSink>& sink, GenerationChunk chunk) {
  if (lanes_.empty()) {
    sink->OnChunk(std::move(chunk));
    return;
  }
  LaneOf(sink.get()).staged.push_back({sink, false, std::move(chunk), {}});
}

void SinkDispatcher::StageFinish(const std::shared_ptr<TokenSink>& sink,
                                 const GenerationSummary& summary) {
  if (lanes_.empty()) {
    sink->OnFinish(summary);
    return;
  }
  LaneOf(sink.get()).staged.push_back({sink, true, {}, summary});
}

void SinkDispatcher::Flush() {
  for (auto& lane : lanes_) {
    if (lane->staged.empty()) continue;
    {
      absl::MutexLock lock(&lane->mu);
      if (lane->calls.empty()) {
        lane->calls.swap(lane->staged);
      } else {
        for (Call& call : lane->staged) lane->calls.push_back(std::move(call));
        lane->staged.clear();
      }
    }
    lane->ready.Signal();
  }
}

void SinkDispatcher::Stop() {
  if (stopped_) return;
  stopped_ = true;
  Flush();
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
