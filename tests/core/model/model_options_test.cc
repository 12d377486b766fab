// The typed command-line flags: each value is parsed once, at the border.
#include "core/model/model_options.h"

#include <string>

#include <gtest/gtest.h>

#include "core/engine/pipeline.h"

namespace tandem {
namespace {

TEST(ModelOptionsTest, DTypeFlagAcceptsTheNamesAndRefusesOthers) {
  DType dtype = DType::kAuto;
  std::string error;
  EXPECT_TRUE(AbslParseFlag("bf16", &dtype, &error));
  EXPECT_EQ(dtype, DType::kBFloat16);
  EXPECT_TRUE(AbslParseFlag("float16", &dtype, &error));
  EXPECT_EQ(dtype, DType::kFloat16);
  EXPECT_EQ(AbslUnparseFlag(DType::kFloat32), "float32");
  EXPECT_FALSE(AbslParseFlag("int8", &dtype, &error));
  EXPECT_EQ(error, "expected float32, float16, bfloat16 or auto");
}

TEST(ModelOptionsTest, DeviceFlagTakesCpuCudaAndAnIndex) {
  DeviceSpec device;
  std::string error;
  EXPECT_TRUE(AbslParseFlag("cuda:3", &device, &error));
  EXPECT_EQ(device.kind, DeviceSpec::Kind::kCuda);
  EXPECT_EQ(device.index, 3);
  EXPECT_EQ(AbslUnparseFlag(device), "cuda:3");
  EXPECT_TRUE(AbslParseFlag("cpu", &device, &error));
  EXPECT_EQ(device.kind, DeviceSpec::Kind::kCpu);
  EXPECT_EQ(device.index, -1);
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:x"}) {
    EXPECT_FALSE(AbslParseFlag(bad, &device, &error)) << bad;
  }
  EXPECT_EQ(error, "expected cpu, cuda, cuda:N or auto");
}

TEST(ModelOptionsTest, KvCacheAndPipelineFlags) {
  KvCacheMode mode = KvCacheMode::kStatic;
  Pipeline pipeline = Pipeline::kSync;
  std::string error;
  EXPECT_TRUE(AbslParseFlag("dynamic", &mode, &error));
  EXPECT_EQ(mode, KvCacheMode::kDynamic);
  EXPECT_FALSE(AbslParseFlag("paged", &mode, &error));
  EXPECT_EQ(error, "expected static or dynamic");
  EXPECT_TRUE(AbslParseFlag("double_buffered", &pipeline, &error));
  EXPECT_EQ(pipeline, Pipeline::kDoubleBuffered);
  EXPECT_EQ(AbslUnparseFlag(Pipeline::kSync), "sync");
  EXPECT_FALSE(AbslParseFlag("async", &pipeline, &error));
}

}  // namespace
}  // namespace tandem
