#include "core/base/logging.h"

#include <unistd.h>

#include <string>

#include <utility>

#include "absl/base/const_init.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
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

void LogRateLimited(LogLevel level, absl::string_view kind, absl::string_view message) {
  struct Kind {
    absl::Time last = absl::InfinitePast();
    int64_t suppressed = 0;
  };
  static absl::Mutex mu(absl::kConstInit);
  static auto* kinds = new absl::flat_hash_map<std::string, Kind>();
  const absl::Time now = absl::Now();
  int64_t suppressed = 0;
  {
    absl::MutexLock lock(&mu);
    Kind& k = (*kinds)[kind];
    if (now - k.last < absl::Seconds(1)) {
      ++k.suppressed;
      return;
    }
    k.last = now;
    suppressed = std::exchange(k.suppressed, 0);
  }
  if (suppressed == 0) {
    Log(level, message);
  } else {
    Log(level, absl::StrCat(message, " (and ", suppressed, " more like it in the last second(s))"));
  }
}

}  // namespace tandem
