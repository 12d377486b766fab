// The body of an OpenAI-style error, {"error": {"message", "type", "param",
// "code"}}: what the HTTP layer's own refusals and the OpenAI routes send.
#ifndef TANDEM_SERVER_HTTP_ERROR_BODY_H_
#define TANDEM_SERVER_HTTP_ERROR_BODY_H_

#include <string>

namespace tandem {

// Empty `param` or `code` is null. Invalid UTF-8 in the strings (a message
// may quote a client's header) is replaced by U+FFFD.
std::string ErrorBody(const std::string& message, const std::string& type,
                      const std::string& param = "", const std::string& code = "");

}  // namespace tandem

#endif  // TANDEM_SERVER_HTTP_ERROR_BODY_H_
