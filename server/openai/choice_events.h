// The output of a request's choices, handed from the engine's delivery
// threads to the HTTP thread that writes the response.
#ifndef TANDEM_SERVER_OPENAI_CHOICE_EVENTS_H_
#define TANDEM_SERVER_OPENAI_CHOICE_EVENTS_H_

#include <deque>
#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/engine/token_sink.h"

namespace tandem {

// Threading: Push from the engine's delivery threads (never blocks; a
// request's choices may be on different ones), Take from one HTTP thread.
// Shared by the sinks and the response writer.
class ChoiceEvents {
 public:
  struct Event {
    int index = 0;  // the choice
    bool finished = false;
    GenerationChunk chunk;       // when !finished
    GenerationSummary summary;   // when finished
  };

  void Push(Event event);
  // Everything queued; waits up to `timeout` while nothing is.
  std::vector<Event> Take(absl::Duration timeout);

 private:
  absl::Mutex mu_;
  std::deque<Event> events_ ABSL_GUARDED_BY(mu_);
};

// The engine's sink for choice `index` of a request.
class ChoiceSink : public TokenSink {
 public:
  ChoiceSink(std::shared_ptr<ChoiceEvents> events, int index)
      : events_(std::move(events)), index_(index) {}
  void OnChunk(GenerationChunk chunk) override {
    events_->Push({index_, false, std::move(chunk), {}});
  }
  void OnFinish(const GenerationSummary& summary) override {
    events_->Push({index_, true, {}, summary});
  }

 private:
  std::shared_ptr<ChoiceEvents> events_;
  const int index_;
};

}  // namespace tandem

#endif  // TANDEM_SERVER_OPENAI_CHOICE_EVENTS_H_
