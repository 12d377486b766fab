#include "server/metrics/name_validation.h"

#include <cstddef>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tandem {
namespace metrics {
namespace {

bool IsNameStart(char c, bool allow_colon) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         (allow_colon && c == ':');
}

bool IsNameChar(char c, bool allow_colon) {
  return IsNameStart(c, allow_colon) ||
         absl::ascii_isdigit(static_cast<unsigned char>(c));
}

bool MatchesNameSyntax(absl::string_view name, bool allow_colon) {
  if (name.empty() || !IsNameStart(name[0], allow_colon)) return false;
  for (char c : name.substr(1)) {
    if (!IsNameChar(c, allow_colon)) return false;
  }
  return true;
}

bool IsValidUtf8(absl::string_view text) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const std::uint8_t c = p[i];
    std::size_t len;
    std::uint32_t code_point;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      code_point = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      code_point = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      code_point = c & 0x07;
    } else {
      return false;
    }
    if (n - i < len) return false;
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      code_point = (code_point << 6) | (p[i + k] & 0x3F);
    }
    // Reject overlong encodings, surrogates and values above U+10FFFF.
    static constexpr std::uint32_t kMinForLength[5] = {0, 0, 0x80, 0x800,
                                                       0x10000};
    if (code_point < kMinForLength[len] || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

}  // namespace

absl::Status ValidateMetricName(absl::string_view name) {
  if (!MatchesNameSyntax(name, /*allow_colon=*/true)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid metric name \"", name,
                     "\": must match [a-zA-Z_:][a-zA-Z0-9_:]*"));
  }
  return absl::OkStatus();
}

absl::Status ValidateLabelName(absl::string_view name) {
  if (!MatchesNameSyntax(name, /*allow_colon=*/false)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid label name \"", name,
                     "\": must match [a-zA-Z_][a-zA-Z0-9_]*"));
  }
  if (absl::StartsWith(name, "__")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid label name \"", name, "\": the \"__\" prefix is reserved"));
  }
  return absl::OkStatus();
}

absl::Status ValidateLabels(const Labels& labels) {
  for (const auto& [name, value] : labels) {
    if (absl::Status status = ValidateLabelName(name); !status.ok()) {
      return status;
    }
    if (absl::Status status =
            ValidateUtf8(value, absl::StrCat("value of label ", name));
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateUtf8(absl::string_view text, absl::string_view what) {
  if (!IsValidUtf8(text)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is not valid UTF-8"));
  }
  return absl::OkStatus();
}

}  // namespace metrics
}  // namespace tandem
