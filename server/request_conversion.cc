#include "server/request_conversion.h"

#include <random>

#include "absl/strings/str_cat.h"

namespace tandem {

absl::Status CheckSize(const char* field, size_t bytes, size_t limit) {
  if (bytes <= limit) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " is ", bytes, " bytes; the limit is ", limit, " bytes"));
}

absl::StatusOr<GenerationRequest> ToGenerationRequest(const v1::GenerateRequest& proto,
                                                      const Tokenizer& tokenizer,
                                                      const ChatTemplate& chat_template,
                                                      const WireLimits& limits) {
  absl::Status size = CheckSize("request_id", proto.request_id().size(),
                                limits.max_request_id_bytes);
  if (size.ok()) size = CheckSize("prompt", proto.prompt().size(), limits.max_prompt_bytes);
  if (!size.ok()) return size;
  const bool has_text = proto.has_prompt();
  const bool has_ids = proto.prompt_token_ids_size() > 0;
  const bool has_messages = proto.messages_size() > 0;
  const int given = int{has_text} + int{has_ids} + int{has_messages};
  if (given > 1) {
    return absl::InvalidArgumentError(
        "set exactly one of prompt, prompt_token_ids and messages, not several");
  }
  if (given == 0) {
    return absl::InvalidArgumentError(
        "set exactly one of prompt, prompt_token_ids and messages; the request has none");
  }
  if (has_text && proto.prompt().empty()) {
    return absl::InvalidArgumentError("prompt is empty");
  }
  GenerationRequest request;
  request.request_id = proto.request_id();
  if (has_text) {
    request.prompt_token_ids = tokenizer.EncodePrompt(proto.prompt());
  } else if (has_messages) {
    std::vector<ChatMessage> messages;
    size_t bytes = 0;
    for (const v1::ChatMessage& m : proto.messages()) {
      if (m.role() != "system" && m.role() != "user" && m.role() != "assistant") {
        return absl::InvalidArgumentError(absl::StrCat(
            "messages: role \"", m.role().substr(0, 32), "\" is not system, user or assistant"));
      }
      bytes += m.content().size();
      messages.push_back({m.role(), m.content()});
    }
    if (absl::Status size = CheckSize("messages", bytes, limits.max_prompt_bytes); !size.ok()) {
      return size;
    }
    absl::StatusOr<std::vector<int32_t>> ids = chat_template.RenderTokenIds(messages, tokenizer);
    if (!ids.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("messages: ", ids.status().message()));
    }
    request.prompt_token_ids = *std::move(ids);
  } else {
    request.prompt_token_ids.assign(proto.prompt_token_ids().begin(),
                                    proto.prompt_token_ids().end());
  }
  const v1::SamplingParams& sampling = proto.sampling();
  request.sampling.temperature = sampling.temperature();
  request.sampling.top_k = sampling.top_k();
  request.sampling.top_p = sampling.top_p();
  request.sampling.min_p = sampling.min_p();
  if (sampling.has_seed()) {
    request.sampling.seed = sampling.seed();
  } else {
    static thread_local std::mt19937_64 random_seeds{std::random_device{}()};
    request.sampling.seed = random_seeds();
  }
  const v1::StoppingCriteria& stopping = proto.stopping();
  request.stopping.max_tokens = stopping.max_tokens();
  if (stopping.stop_size() > limits.max_stop_strings) {
    return absl::InvalidArgumentError(absl::StrCat("stopping.stop: at most ",
                                                   limits.max_stop_strings,
                                                   " stop strings are accepted, got ",
                                                   stopping.stop_size()));
  }
  request.stopping.stop_strings.assign(stopping.stop().begin(), stopping.stop().end());
  if (has_messages) {
    for (const std::string& stop : chat_template.stop_strings()) {
      request.stopping.stop_strings.push_back(stop);
    }
  }
  request.stopping.stop_token_ids.assign(stopping.stop_token_ids().begin(),
                                         stopping.stop_token_ids().end());
  request.stopping.ignore_eos = stopping.ignore_eos();
  request.return_logprobs = proto.return_logprobs();
  return request;
}

v1::FinishReason ToProto(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return v1::FINISH_REASON_STOP;
    case FinishReason::kLength: return v1::FINISH_REASON_LENGTH;
    case FinishReason::kCancelled: return v1::FINISH_REASON_CANCELLED;
    case FinishReason::kDeadline: return v1::FINISH_REASON_DEADLINE;
    case FinishReason::kShutdown: return v1::FINISH_REASON_SHUTDOWN;
    case FinishReason::kError: return v1::FINISH_REASON_UNSPECIFIED;
  }
  return v1::FINISH_REASON_UNSPECIFIED;
}

void FillSummary(const GenerationSummary& summary, v1::GenerateResponse* response) {
  response->set_finish_reason(ToProto(summary.reason));
  response->set_stop_sequence(summary.stop_sequence);
  response->mutable_usage()->set_prompt_tokens(summary.prompt_tokens);
  response->mutable_usage()->set_completion_tokens(summary.completion_tokens);
  v1::Timings* timings = response->mutable_timings();
  timings->set_queue_seconds(summary.queue_seconds);
  timings->set_time_to_first_token_seconds(summary.time_to_first_token_seconds);
  timings->set_total_seconds(summary.total_seconds);
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  // absl::StatusCode values are the canonical gRPC codes.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

}  // namespace tandem
