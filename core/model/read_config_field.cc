#include "core/model/read_config_field.h"

#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace tandem {
namespace {

template <typename T>
bool InRange(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    return value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
  }
  const int64_t v = value.get<int64_t>();
  return v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
}

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
  if constexpr (kInteger) {
    if (!InRange<T>(*it)) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": \"", key, "\" = ", it->dump(), " is out of range"));
    }
  }
  *out = it->get<T>();
  return absl::OkStatus();
}

}  // namespace

bool IsInt32(const nlohmann::json& value) {
  return value.is_number_integer() && InRange<int32_t>(value);
}

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
