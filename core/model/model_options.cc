#include "core/model/model_options.h"

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tandem {

bool AbslParseFlag(absl::string_view text, DType* dtype, std::string* error) {
  if (text == "auto") {
    *dtype = DType::kAuto;
  } else if (text == "float32" || text == "fp32") {
    *dtype = DType::kFloat32;
  } else if (text == "float16" || text == "fp16") {
    *dtype = DType::kFloat16;
  } else if (text == "bfloat16" || text == "bf16") {
    *dtype = DType::kBFloat16;
  } else {
    *error = "expected float32, float16, bfloat16 or auto";
    return false;
  }
  return true;
}

std::string AbslUnparseFlag(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kAuto: break;
  }
  return "auto";
}

bool AbslParseFlag(absl::string_view text, DeviceSpec* device, std::string* error) {
  *device = DeviceSpec();
  if (text == "auto") return true;
  if (text == "cpu") {
    device->kind = DeviceSpec::Kind::kCpu;
    return true;
  }
  if (text == "cuda") {
    device->kind = DeviceSpec::Kind::kCuda;
    return true;
  }
  int index = 0;
  if (absl::ConsumePrefix(&text, "cuda:") && absl::SimpleAtoi(text, &index) && index >= 0) {
    device->kind = DeviceSpec::Kind::kCuda;
    device->index = index;
    return true;
  }
  *error = "expected cpu, cuda, cuda:N or auto";
  return false;
}

std::string AbslUnparseFlag(const DeviceSpec& device) {
  switch (device.kind) {
    case DeviceSpec::Kind::kCpu: return "cpu";
    case DeviceSpec::Kind::kCuda:
      return device.index < 0 ? "cuda" : absl::StrCat("cuda:", device.index);
    case DeviceSpec::Kind::kAuto: break;
  }
  return "auto";
}

bool AbslParseFlag(absl::string_view text, KvCacheMode* mode, std::string* error) {
  if (text == "static") {
    *mode = KvCacheMode::kStatic;
  } else if (text == "dynamic") {
    *mode = KvCacheMode::kDynamic;
  } else {
    *error = "expected static or dynamic";
    return false;
  }
  return true;
}

std::string AbslUnparseFlag(KvCacheMode mode) {
  return mode == KvCacheMode::kStatic ? "static" : "dynamic";
}

}  // namespace tandem
