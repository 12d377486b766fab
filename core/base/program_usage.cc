#include "core/base/program_usage.h"

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"

namespace tandem {
namespace {

// Whether a flag defined in `filename` (its __FILE__) is one of ours: every
// flag but those Abseil defines for itself (--flagfile, --fromenv, ...).
bool IsProjectFlag(absl::string_view filename) {
  return !absl::StrContains(filename, "absl/");
}

}  // namespace

void SetProgramUsage(absl::string_view message) {
  absl::SetProgramUsageMessage(message);
  absl::FlagsUsageConfig config;
  config.contains_help_flags = IsProjectFlag;
  config.contains_helpshort_flags = IsProjectFlag;
  absl::SetFlagsUsageConfig(config);
}

}  // namespace tandem
