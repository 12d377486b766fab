#include "core/base/logging.h"

#include <unistd.h>

#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tandem {

void Log(LogLevel level, absl::string_view message) {
  const char tag = level == LogLevel::kInfo ? 'I' : level == LogLevel::kWarning ? 'W' : 'E';
  std::string line = absl::StrCat(
      std::string(1, tag),
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
      " ", message, "\n");
  ssize_t unused = ::write(STDERR_FILENO, line.data(), line.size());
  (void)unused;
}

}  // namespace tandem
