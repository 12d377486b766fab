// Minimal leveled logging to stderr (Debian's Abseil has no absl/log yet).
#ifndef TANDEM_CORE_BASE_LOGGING_H_
#define TANDEM_CORE_BASE_LOGGING_H_

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tandem {

enum class LogLevel { kInfo, kWarning, kError };

// Writes one line "I2026-11-29T09:00:00.123Z message". Thread-safe: each line
// is written with a single write call.
void Log(LogLevel level, absl::string_view message);

// Writes `message` unless a line of the same `kind` was written less than a
// second ago; then it is only counted, and the next line of that kind says
// how many were left out. For errors a client can cause at will (malformed
// requests), so they cannot flood the log. Thread-safe.
void LogRateLimited(LogLevel level, absl::string_view kind, absl::string_view message);

template <typename... Args>
void LogInfo(const Args&... args) { Log(LogLevel::kInfo, absl::StrCat(args...)); }
template <typename... Args>
void LogWarning(const Args&... args) { Log(LogLevel::kWarning, absl::StrCat(args...)); }
template <typename... Args>
void LogError(const Args&... args) { Log(LogLevel::kError, absl::StrCat(args...)); }

}  // namespace tandem

#endif  // TANDEM_CORE_BASE_LOGGING_H_
