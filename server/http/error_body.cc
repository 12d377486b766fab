#include "server/http/error_body.h"

#include <nlohmann/json.hpp>

#include "server/http/dump_json.h"

namespace tandem {

std::string ErrorBody(const std::string& message, const std::string& type,
                      const std::string& param, const std::string& code) {
  const auto or_null = [](const std::string& s) {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
  };
  const nlohmann::json body = {
      {"error",
       {{"message", message}, {"type", type}, {"param", or_null(param)}, {"code", or_null(code)}}}};
  return DumpJson(body);
}

}  // namespace tandem
