// A directory under /tmp that exists for the lifetime of the object, for tests.
#ifndef TANDEM_TESTS_CORE_TEMP_DIR_H_
#define TANDEM_TESTS_CORE_TEMP_DIR_H_

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

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
  // Removes the tree with nftw, not std::filesystem: the CUDA LibTorch
  // wheels export their own, ABI-incompatible copy of std::filesystem
  // (pytorch/pytorch#133437), and remove_all crashed the GPU tests.
  ~TempDir() {
    nftw(
        path_.c_str(),
        [](const char* path, const struct stat*, int, struct FTW*) { return remove(path); }, 16,
        FTW_DEPTH | FTW_PHYS);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tandem

#endif  // TANDEM_TESTS_CORE_TEMP_DIR_H_
