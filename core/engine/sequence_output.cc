#include "core/engine/sequence_output.h"

#include <algorithm>
#include <utility>

namespace tandem {
namespace {

double Seconds(absl::Time from, absl::Time to) {
  if (from == absl::InfinitePast() || to == absl::InfinitePast()) return 0;
  return absl::ToDoubleSeconds(to - from);
}

bool Contains(const std::vector<int32_t>& ids, int32_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

SequenceOutput::SequenceOutput(const GenerationRequest* request, const Tokenizer* tokenizer,
                               const std::vector<int32_t>* eos_token_ids)
    : request_(*request),
      tokenizer_(*tokenizer),
      eos_token_ids_(*eos_token_ids),
      detokenizer_(tokenizer),
      stop_matcher_(request->stopping.stop_strings) {}

bool SequenceOutput::IsStopToken(int32_t token) const {
  const StoppingCriteria& stopping = request_.stopping;
  return (!stopping.ignore_eos && Contains(eos_token_ids_, token)) ||
         Contains(stopping.stop_token_ids, token);
}

SequenceOutput::Update SequenceOutput::Accept(const SampledToken& sampled, absl::Time now) {
  Update update;
  const int32_t token = sampled.token;
  generated_.push_back(token);
  if (generated_.size() == 1) {
    first_token_ = now;
  } else {
    update.inter_token_seconds = absl::ToDoubleSeconds(now - last_token_);
  }
  last_token_ = now;

  const bool stop_token = IsStopToken(token);
  const bool length =
      static_cast<int32_t>(generated_.size()) >= request_.stopping.max_tokens;
  // A stop token's own text is never returned; ids past the tokenizer's
  // vocabulary (a padded LM head) have no text.
  std::string text = stop_token || !tokenizer_.IsValidId(token) ? std::string()
                                                               : detokenizer_.Append(token);
  if (stop_token || length) text += detokenizer_.Flush();
  StopStringMatcher::Result matched = stop_matcher_.Append(text);

  update.chunk.text = std::move(matched.releasable);
  update.chunk.token_ids.push_back(token);
  if (request_.return_logprobs) update.chunk.logprobs.push_back(sampled.logprob);
  if (matched.matched) {
    update.finish = FinishReason::kStop;
    update.stop_sequence = std::move(matched.stop);
  } else if (stop_token || length) {
    update.finish = stop_token ? FinishReason::kStop : FinishReason::kLength;
    update.chunk.text += stop_matcher_.Flush();
  }
  return update;
}

std::string SequenceOutput::ReleaseHeldBack() {
  if (generated_.empty()) return "";
  std::string tail = detokenizer_.Flush();
  return stop_matcher_.Append(tail).releasable + stop_matcher_.Flush();
}

GenerationSummary SequenceOutput::Summary(FinishReason reason, std::string stop_sequence,
                                          absl::Status error, absl::Time now) const {
  GenerationSummary summary;
  summary.reason = reason;
  summary.stop_sequence = std::move(stop_sequence);
  summary.error = std::move(error);
  summary.prompt_tokens = static_cast<int>(request_.prompt_token_ids.size());
  summary.completion_tokens = static_cast<int>(generated_.size());
  const absl::Time arrival = request_.arrival;
  summary.queue_seconds = Seconds(arrival, started_ == absl::InfinitePast() ? now : started_);
  summary.time_to_first_token_seconds = Seconds(arrival, first_token_);
  summary.total_seconds = Seconds(arrival, now);
  return summary;
}

}  // namespace tandem
