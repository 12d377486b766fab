#include "core/engine/request_validator.h"

#include <cmath>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace tandem {
namespace {

constexpr absl::string_view kFieldPayload = "type.tandem.dev/invalid-field";

// INVALID_ARGUMENT with `message`, naming `field` in a payload too.
absl::Status Invalid(absl::string_view field, absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kFieldPayload, absl::Cord(field));
  return status;
}

}  // namespace

std::string InvalidField(const absl::Status& status) {
  const auto field = status.GetPayload(kFieldPayload);  // absl::optional<absl::Cord>
  return field.has_value() ? std::string(*field) : std::string();
}

absl::Status ValidateRequest(const RequestLimits& limits,
                             GenerationRequest* request) {
  const int prompt_len = static_cast<int>(request->prompt_token_ids.size());
  if (prompt_len == 0) {
    return Invalid("prompt", "the prompt is empty");
  }
  if (prompt_len >= limits.max_context) {
    return Invalid("prompt", absl::StrCat(
        "the prompt has ", prompt_len, " tokens; the context window holds ",
        limits.max_context, " tokens including at least one generated token"));
  }
  for (int i = 0; i < prompt_len; ++i) {
    const int32_t id = request->prompt_token_ids[i];
    if (id < 0 || id >= limits.vocab_size) {
      return Invalid("prompt",
          absl::StrCat("prompt_token_ids[", i, "] = ", id,
                       " is outside the vocabulary [0, ", limits.vocab_size, ")"));
    }
  }
  const int room = limits.max_context - prompt_len;
  StoppingCriteria& stopping = request->stopping;
  if (stopping.max_tokens < 0) {
    return Invalid("max_tokens",
        absl::StrCat("max_tokens = ", stopping.max_tokens, " is negative"));
  }
  if (stopping.max_tokens > room) {
    return Invalid("max_tokens", absl::StrCat(
        "max_tokens = ", stopping.max_tokens, " does not fit: the prompt has ",
        prompt_len, " tokens and the context window ", limits.max_context,
        ", so at most ", room, " tokens can be generated"));
  }
  if (stopping.max_tokens == 0) stopping.max_tokens = room;
  if (static_cast<int>(stopping.stop_strings.size()) > limits.max_stop_strings) {
    return Invalid("stop_strings", absl::StrCat(
        "at most ", limits.max_stop_strings, " stop strings are accepted, got ",
        stopping.stop_strings.size()));
  }
  for (const std::string& stop : stopping.stop_strings) {
    if (stop.empty()) return Invalid("stop_strings", "a stop string is empty");
    if (static_cast<int>(stop.size()) > limits.max_stop_string_bytes) {
      return Invalid("stop_strings", absl::StrCat(
          "a stop string is ", stop.size(), " bytes; the limit is ",
          limits.max_stop_string_bytes));
    }
  }
  if (static_cast<int>(stopping.stop_token_ids.size()) > limits.max_stop_token_ids) {
    return Invalid("stop_token_ids", absl::StrCat(
        "at most ", limits.max_stop_token_ids, " stop token ids are accepted, got ",
        stopping.stop_token_ids.size()));
  }
  for (int32_t id : stopping.stop_token_ids) {
    if (id < 0 || id >= limits.vocab_size) {
      return Invalid("stop_token_ids",
          absl::StrCat("stop_token_ids contains ", id,
                       ", outside the vocabulary [0, ", limits.vocab_size, ")"));
    }
  }
  SamplingParams& sampling = request->sampling;
  if (!std::isfinite(sampling.temperature) || sampling.temperature < 0) {
    return Invalid("temperature", absl::StrCat(
        "temperature = ", sampling.temperature, " must be a finite number >= 0"));
  }
  if (sampling.top_k < 0) {
    return Invalid("top_k",
        absl::StrCat("top_k = ", sampling.top_k, " must be >= 0 (0 = no limit)"));
  }
  if (sampling.top_p == 0) sampling.top_p = 1.0f;
  if (!(sampling.top_p > 0 && sampling.top_p <= 1)) {
    return Invalid("top_p",
        absl::StrCat("top_p = ", sampling.top_p, " must be in (0, 1]"));
  }
  if (!(sampling.min_p >= 0 && sampling.min_p <= 1)) {
    return Invalid("min_p",
        absl::StrCat("min_p = ", sampling.min_p, " must be in [0, 1]"));
  }
  if (request->sink == nullptr) {
    return absl::InvalidArgumentError("the request has no token sink");
  }
  return absl::OkStatus();
}

}  // namespace tandem
