#include "core/checkpoint/safetensors_writer.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/checkpoint/safetensors_dtype.h"
#include "core/checkpoint/safetensors_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tandem {
namespace {

using ::testing::HasSubstr;


std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

// A fresh, empty directory for one test.
class SafetensorsWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(
        ::testing::TempDir(), "/st_writer_test_", getpid(), "_",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0) << dir_;
  }

  void TearDown() override {
    for (const std::string& name : ListDir()) {
      unlink((dir_ + "/" + name).c_str());
    }
    rmdir(dir_.c_str());
  }

  std::vector<std::string> ListDir() const {
    std::vector<std::string> names;
    DIR* d = opendir(dir_.c_str());
    if (d == nullptr) return names;
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(d);
    return names;
  }

  static std::string ReadAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string dir_;
};

TEST_F(SafetensorsWriterTest, WritesExactReferenceLayout) {
  SafetensorsWriter writer;
  writer.SetMetadata("format", "tf");
  writer.SetMetadata("format", "pt");  // Replaces.
  // Added out of name order; the file must be sorted by name.
  ASSERT_TRUE(writer
                  .Add("weight", SafetensorsDType::kF32, {2},
                       Bytes({0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40}))
                  .ok());
  ASSERT_TRUE(
      writer.Add("bias", SafetensorsDType::kI8, {3}, Bytes({1, 0xfe, 3})).ok());

  // Hand-built expectation: 146 bytes of JSON + 6 spaces = 152 = 0x98.
  const std::string expected =
      Bytes({0x98, 0, 0, 0, 0, 0, 0, 0}) +
      R"({"__metadata__":{"format":"pt"},)"
      R"("bias":{"dtype":"I8","shape":[3],"data_offsets":[0,3]},)"
      R"("weight":{"dtype":"F32","shape":[2],"data_offsets":[3,11]}})"
      "      " +
      Bytes({1, 0xfe, 3}) +
      Bytes({0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40});
  ASSERT_EQ(expected.size(), 8u + 152u + 11u);

  const std::string path = dir_ + "/model.safetensors";
  ASSERT_TRUE(writer.WriteFile(path).ok());
  EXPECT_EQ(ReadAll(path), expected);

  absl::StatusOr<std::string> image = writer.Serialize();
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(*image, expected);

  // Nothing but the target is left in the directory (temp file renamed).
  EXPECT_EQ(ListDir(), std::vector<std::string>{"model.safetensors"});
}

TEST_F(SafetensorsWriterTest, EscapesNamesAndOmitsEmptyMetadata) {
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.Add("a\"b\\c\x01\n", SafetensorsDType::kU8, {}, "Z").ok());
  // 66 bytes of JSON + 6 spaces = 72 = 0x48.
  const std::string expected =
      Bytes({0x48, 0, 0, 0, 0, 0, 0, 0}) +
      R"({"a\"b\\c\u0001\n":{"dtype":"U8","shape":[],"data_offsets":[0,1]}})"
      "      Z";
  absl::StatusOr<std::string> image = writer.Serialize();
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(*image, expected);
}

TEST_F(SafetensorsWriterTest, EmptyWriter) {
  SafetensorsWriter writer;
  const std::string path = dir_ + "/empty.safetensors";
  ASSERT_TRUE(writer.WriteFile(path).ok());
  EXPECT_EQ(ReadAll(path), Bytes({8, 0, 0, 0, 0, 0, 0, 0}) + "{}      ");
}

TEST_F(SafetensorsWriterTest, RoundTripsThroughReader) {
  SafetensorsWriter writer;
  writer.SetMetadata("format", "pt");
  writer.SetMetadata("quote\"and\\newline\n", "caf\xC3\xA9 \xF0\x9F\x98\x80");

  std::vector<float> f32(2 * 3);
  for (size_t i = 0; i < f32.size(); ++i)
    f32[i] = 0.5f * static_cast<float>(i) - 1;
  const std::string f32_bytes(reinterpret_cast<const char*>(f32.data()),
                              f32.size() * sizeof(float));
  const std::string f64_bytes(8, '\x42');
  const std::string bf16_bytes = Bytes({0x80, 0x3f, 0x00, 0x40, 0x40, 0x40});
  const std::string i64_bytes = Bytes({1, 2, 3, 4, 5, 6, 7, 8});
  const std::string i32_bytes = Bytes({9, 9, 9, 9});
  const std::string i16_bytes = Bytes({7, 7, 6, 6});
  const std::string bool_bytes = Bytes({1, 0, 1, 1});

  struct Expected {
    std::string name;
    SafetensorsDType dtype;
    std::vector<int64_t> shape;
    std::string bytes;
  };
  const std::vector<Expected> tensors = {
      {"model.layers.0.w", SafetensorsDType::kF32, {2, 3}, f32_bytes},
      {"d", SafetensorsDType::kF64, {}, f64_bytes},
      {"h", SafetensorsDType::kBF16, {3}, bf16_bytes},
      {"h16", SafetensorsDType::kF16, {1, 1, 3}, bf16_bytes},
      {"i64", SafetensorsDType::kI64, {1}, i64_bytes},
      {"i32", SafetensorsDType::kI32, {1, 1}, i32_bytes},
      {"i16", SafetensorsDType::kI16, {2}, i16_bytes},
      {"i8", SafetensorsDType::kI8, {2, 2}, bool_bytes},
      {"mask", SafetensorsDType::kBool, {4}, bool_bytes},
      {"empty", SafetensorsDType::kU8, {3, 0}, ""},
      {"\xE5\x90\x8D\xE5\x89\x8D", SafetensorsDType::kU8, {1}, "x"},
  };
  for (const Expected& t : tensors) {
    ASSERT_TRUE(writer.Add(t.name, t.dtype, t.shape, t.bytes).ok()) << t.name;
  }

  const std::string path = dir_ + "/round.safetensors";
  ASSERT_TRUE(writer.WriteFile(path).ok());
  const std::string raw = ReadAll(path);
  // Header length is a multiple of 8 (so the data buffer starts 8-aligned).
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(raw[i]);
  EXPECT_EQ(n % 8, 0u);

  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ((*file)->tensors().size(), tensors.size());
  for (const Expected& t : tensors) {
    const SafetensorsTensor* got = (*file)->Find(t.name);
    ASSERT_NE(got, nullptr) << t.name;
    EXPECT_EQ(got->dtype, t.dtype) << t.name;
    EXPECT_EQ(got->shape, t.shape) << t.name;
    EXPECT_EQ(std::string(static_cast<const char*>(got->data), got->size_bytes),
              t.bytes)
        << t.name;
  }
  // Contiguous, sorted by name, no gaps, nothing trailing.
  uint64_t offset = 0;
  std::string previous;
  for (const SafetensorsTensor& t : (*file)->tensors()) {
    EXPECT_EQ(static_cast<const char*>(t.data) -
                  static_cast<const char*>((*file)->tensors()[0].data),
              static_cast<ptrdiff_t>(offset))
        << t.name;
    EXPECT_LT(previous, t.name);
    previous = t.name;
    offset += t.size_bytes;
  }
  EXPECT_EQ(offset, (*file)->data_size());
  EXPECT_EQ(raw.size(), 8 + n + offset);

  const std::map<std::string, std::string> expected_metadata = {
      {"format", "pt"},
      {"quote\"and\\newline\n", "caf\xC3\xA9 \xF0\x9F\x98\x80"}};
  EXPECT_EQ((*file)->metadata(), expected_metadata);
}

TEST_F(SafetensorsWriterTest, OverwritesExistingFileAtomically) {
  const std::string path = dir_ + "/m.safetensors";
  {
    std::ofstream out(path, std::ios::binary);
    out << "old contents";
  }
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.Add("x", SafetensorsDType::kU8, {1}, "q").ok());
  ASSERT_TRUE(writer.WriteFile(path).ok());
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(*static_cast<const char*>((*file)->Find("x")->data), 'q');
  EXPECT_EQ(ListDir(), std::vector<std::string>{"m.safetensors"});
}

TEST_F(SafetensorsWriterTest, AddRejectsBadTensors) {
  SafetensorsWriter writer;
  ASSERT_TRUE(
      writer.Add("w", SafetensorsDType::kF32, {2}, std::string(8, 0)).ok());

  struct Case {
    const char* label;
    std::string name;
    SafetensorsDType dtype;
    std::vector<int64_t> shape;
    std::string bytes;
    const char* detail;
  };
  const Case cases[] = {
      {"duplicate",
       "w",
       SafetensorsDType::kF32,
       {2},
       std::string(8, 0),
       "duplicate"},
      {"too_few_bytes",
       "a",
       SafetensorsDType::kF32,
       {2, 2},
       std::string(15, 0),
       "needs 16"},
      {"too_many_bytes",
       "b",
       SafetensorsDType::kBF16,
       {3},
       std::string(7, 0),
       "needs 6"},
      {"negative_dim", "c", SafetensorsDType::kU8, {2, -1}, "", "negative"},
      {"overflow",
       "d",
       SafetensorsDType::kF32,
       {int64_t{1} << 31, int64_t{1} << 31, 4},
       "",
       "overflow"},
      {"reserved", "__metadata__", SafetensorsDType::kU8, {0}, "", "reserved"},
      {"bad_utf8", "e\xFF", SafetensorsDType::kU8, {0}, "", "UTF-8"},
      {"surrogate_utf8",
       "e\xED\xA0\x80",
       SafetensorsDType::kU8,
       {0},
       "",
       "UTF-8"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    absl::Status status = writer.Add(c.name, c.dtype, c.shape, c.bytes);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.detail));
  }
  // Failed adds left the writer unchanged.
  absl::StatusOr<std::string> image = writer.Serialize();
  ASSERT_TRUE(image.ok());
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::FromBuffer(*image, "after_errors");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->tensors().size(), 1u);
}

TEST_F(SafetensorsWriterTest, InvalidMetadataFailsWithoutWriting) {
  SafetensorsWriter writer;
  writer.SetMetadata("k", "bad\xC0\xAF");  // Overlong encoding.
  const std::string path = dir_ + "/bad.safetensors";
  absl::Status status = writer.WriteFile(path);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ListDir().empty());
}

TEST_F(SafetensorsWriterTest, MissingDirectoryFails) {
  SafetensorsWriter writer;
  const std::string path = dir_ + "/no/such/dir/x.safetensors";
  absl::Status status = writer.WriteFile(path);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("x.safetensors"));
  EXPECT_TRUE(ListDir().empty());
}

}  // namespace
}  // namespace tandem
