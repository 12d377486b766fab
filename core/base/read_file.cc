#include "core/base/read_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tandem {

absl::StatusOr<std::string> ReadFlagFile(const std::string& path, const char* flag) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", text.status().message()));
  }
  return std::string(absl::StripAsciiWhitespace(*text));
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat("file not found: ", path));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(err)));
  }
  std::string contents;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
    contents.append(buffer, n);
  }
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
  }
  return contents;
}

}  // namespace tandem
