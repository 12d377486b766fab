// A directory under /tmp that exists for the lifetime of the object, for tests.
#ifndef TANDEM_TESTS_CORE_TEMP_DIR_H_
#define TANDEM_TESTS_CORE_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace tandem {

class TempDir {
 public:
  // Creates /tmp/<prefix>XXXXXX; throws if it cannot.
  explicit TempDir(const std::string& prefix) {
    std::string pattern = "/tmp/" + prefix + "XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary directory " + pattern);
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tandem

#endif  // TANDEM_TESTS_CORE_TEMP_DIR_H_
