#include "core/model/read_config_field.h"

#include <type_traits>

#include "absl/strings/str_cat.h"

namespace tandem {
namespace {

template <typename T>
absl::Status Read(const nlohmann::json& json, const char* key, absl::string_view source,
                  T* out) {
  const auto it = json.find(key);
  if (it == json.end() || it->is_null()) return absl::OkStatus();
  constexpr bool kBool = std::is_same_v<T, bool>, kInteger = std::is_integral_v<T> && !kBool;
  const bool fits = kBool ? it->is_boolean() : kInteger ? it->is_number_integer() : it->is_number();
  if (!fits) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": \"", key, "\" must be ",
        kBool ? "true or false" : kInteger ? "an integer" : "a number"));
  }
  *out = it->get<T>();
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadConfigField(const nlohmann::json& json, const char* key,
                             absl::string_view source, int32_t* out) {
  return Read(json, key, source, out);
}

absl::Status ReadConfigField(const nlohmann::json& json, const char* key,
                             absl::string_view source, double* out) {
  return Read(json, key, source, out);
}

absl::Status ReadConfigField(const nlohmann::json& json, const char* key,
                             absl::string_view source, bool* out) {
  return Read(json, key, source, out);
}

}  // namespace tandem
