#include "core/base/cuda_queues.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace tandem {
namespace {

constexpr char kName[] = "CUDA_DEVICE_MAX_CONNECTIONS";

TEST(CudaQueuesTest, SetsOneQueueWhereTheEnvironmentIsSilent) {
  unsetenv(kName);
  EXPECT_EQ(UseOneCudaHardwareQueue(), "1");
  ASSERT_NE(std::getenv(kName), nullptr);
  EXPECT_STREQ(std::getenv(kName), "1");
}

TEST(CudaQueuesTest, KeepsTheOperatorsSetting) {
  setenv(kName, "8", 1);
  EXPECT_EQ(UseOneCudaHardwareQueue(), "8");
  EXPECT_STREQ(std::getenv(kName), "8");
  unsetenv(kName);
}

}  // namespace
}  // namespace tandem
