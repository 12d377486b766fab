// Reading one field of a Hugging Face config.json (the model families'
// configs share it).
#ifndef TANDEM_CORE_MODEL_READ_CONFIG_FIELD_H_
#define TANDEM_CORE_MODEL_READ_CONFIG_FIELD_H_

#include <cstdint>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tandem {

// When json[key] is present and not null, *out = its value; a value of
// another type is InvalidArgumentError `SOURCE: "KEY" must be ...` (an
// integer, a number, true or false), an integer outside int32_t's range
// `SOURCE: "KEY" = V is out of range` (never truncated). Absent or null
// keeps *out (the default).
absl::Status ReadConfigField(const nlohmann::json& json, const char* key,
                             absl::string_view source, int32_t* out);
absl::Status ReadConfigField(const nlohmann::json& json, const char* key,
                             absl::string_view source, double* out);
absl::Status ReadConfigField(const nlohmann::json& json, const char* key,
                             absl::string_view source, bool* out);
// Whether `value` is an integer that fits in an int32_t.
bool IsInt32(const nlohmann::json& value);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_READ_CONFIG_FIELD_H_
