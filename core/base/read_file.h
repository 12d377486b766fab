// Reads a whole file into memory.
#ifndef TANDEM_CORE_BASE_READ_FILE_H_
#define TANDEM_CORE_BASE_READ_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace tandem {

// NotFoundError when `path` does not exist, InvalidArgumentError when it
// cannot be opened or read; both name the path.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// A flag's file (an API key, a PEM file), surrounding whitespace removed;
// ReadFile's errors as InvalidArgumentError prefixed with "--`flag`: ".
absl::StatusOr<std::string> ReadFlagFile(const std::string& path, const char* flag);

// Whether `path` names an existing file or directory.
bool FileExists(const std::string& path);

}  // namespace tandem

#endif  // TANDEM_CORE_BASE_READ_FILE_H_
