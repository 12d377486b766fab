// The usage text of Tandem's programs (tandem-server, tandem-cli, ...).
#ifndef TANDEM_CORE_BASE_PROGRAM_USAGE_H_
#define TANDEM_CORE_BASE_PROGRAM_USAGE_H_

#include "absl/strings/string_view.h"

namespace tandem {

// Sets the program's usage message and makes --help list the flags this
// project defines. Abseil's default --help lists only flags defined in a file
// named after the binary (tandem-server.cc), which none of ours is, so it
// printed "No flags matched"; --helpfull also lists Abseil's own flags.
// Call once, first thing in main, before absl::ParseCommandLine.
void SetProgramUsage(absl::string_view message);

}  // namespace tandem

#endif  // TANDEM_CORE_BASE_PROGRAM_USAGE_H_
