#include "server/openai/api_error.h"

#include "absl/strings/str_cat.h"
#include "server/http/error_body.h"

namespace tandem {

std::string ApiError::Json() const { return ErrorBody(message, type, param, code); }

ApiError ApiError::BadField(const std::string& param, const std::string& message) {
  ApiError e;
  e.param = param;
  e.message = message;
  return e;
}

ApiError ApiError::ModelNotFound(const std::string& asked, const std::string& served) {
  ApiError e = BadField("model", absl::StrCat("the model '", asked,
                                              "' does not exist; this server serves '", served,
                                              "'"));
  e.http_status = 404;
  e.code = "model_not_found";
  return e;
}

ApiError ApiError::FromStatus(const absl::Status& status) {
  ApiError e;
  e.message = std::string(status.message());
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      break;
    case absl::StatusCode::kResourceExhausted:
      e.http_status = 429;
      e.type = "rate_limit_error";
      break;
    case absl::StatusCode::kUnavailable:
      e.http_status = 503;
      e.type = "service_unavailable";
      break;
    default:
      e.http_status = 500;
      e.type = "server_error";
  }
  return e;
}

}  // namespace tandem
