// An OpenAI-style error: the HTTP status and the JSON object clients parse,
// {"error": {"message", "type", "param", "code"}}.
#ifndef TANDEM_SERVER_OPENAI_API_ERROR_H_
#define TANDEM_SERVER_OPENAI_API_ERROR_H_

#include <string>

#include "absl/status/status.h"

namespace tandem {

struct ApiError {
  int http_status = 400;
  std::string type = "invalid_request_error";
  std::string message;
  std::string param;  // the request field at fault, if any
  std::string code;   // e.g. "model_not_found"; empty: null

  // The response body.
  std::string Json() const;

  static ApiError BadField(const std::string& param, const std::string& message);
  // 404 model_not_found: `asked` is not the served model.
  static ApiError ModelNotFound(const std::string& asked, const std::string& served);
  // From an engine status: INVALID_ARGUMENT 400, RESOURCE_EXHAUSTED 429,
  // UNAVAILABLE 503, others 500.
  static ApiError FromStatus(const absl::Status& status);
};

}  // namespace tandem

#endif  // TANDEM_SERVER_OPENAI_API_ERROR_H_
