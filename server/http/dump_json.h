// JSON text for the wire.
#ifndef TANDEM_SERVER_HTTP_DUMP_JSON_H_
#define TANDEM_SERVER_HTTP_DUMP_JSON_H_

#include <string>

#include <nlohmann/json.hpp>

namespace tandem {

// Compact JSON text that never throws on invalid UTF-8 (replaced by U+FFFD).
std::string DumpJson(const nlohmann::json& j);

}  // namespace tandem

#endif  // TANDEM_SERVER_HTTP_DUMP_JSON_H_
