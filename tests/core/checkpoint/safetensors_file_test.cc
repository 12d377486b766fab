#include "core/checkpoint/safetensors_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/checkpoint/safetensors_dtype.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tandem {
namespace {

using ::testing::HasSubstr;


// --- Hand-rolled file image helpers (independent of the code under test). --

// 8-byte little-endian length prefix.
std::string LengthPrefix(uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  return out;
}

std::string Image(const std::string& header, const std::string& data) {
  return LengthPrefix(header.size()) + header + data;
}

std::string Floats(std::initializer_list<float> values) {
  std::string out(values.size() * sizeof(float), '\0');
  size_t i = 0;
  for (float v : values) {
    std::memcpy(&out[i], &v, sizeof(float));
    i += sizeof(float);
  }
  return out;
}

float FloatAt(const SafetensorsTensor& t, size_t index) {
  float v;
  std::memcpy(&v, static_cast<const char*>(t.data) + index * sizeof(float),
              sizeof(float));
  return v;
}

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/st_file_test_", getpid(), "_",
                      name);
}

std::string WriteTemp(const std::string& name, const std::string& contents) {
  std::string path = TempPath(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  EXPECT_TRUE(out.good()) << path;
  return path;
}

// Two F32 tensors listed out of offset order in the header, plus metadata.
const char kTwoTensorHeader[] =
    R"({"__metadata__":{"format":"pt","note":"hi"},)"
    R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
    R"("a":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]}})";

// --- dtype helpers ----------------------------------------------------------

TEST(SafetensorsDTypeTest, ParseNameAndSize) {
  struct Case {
    const char* name;
    SafetensorsDType dtype;
    size_t size;
  };
  const Case cases[] = {
      {"F64", SafetensorsDType::kF64, 8}, {"F32", SafetensorsDType::kF32, 4},
      {"F16", SafetensorsDType::kF16, 2}, {"BF16", SafetensorsDType::kBF16, 2},
      {"I64", SafetensorsDType::kI64, 8}, {"I32", SafetensorsDType::kI32, 4},
      {"I16", SafetensorsDType::kI16, 2}, {"I8", SafetensorsDType::kI8, 1},
      {"U8", SafetensorsDType::kU8, 1},   {"BOOL", SafetensorsDType::kBool, 1},
  };
  for (const Case& c : cases) {
    absl::StatusOr<SafetensorsDType> parsed = ParseSafetensorsDType(c.name);
    ASSERT_TRUE(parsed.ok()) << c.name;
    EXPECT_EQ(*parsed, c.dtype) << c.name;
    EXPECT_EQ(SafetensorsDTypeName(c.dtype), c.name);
    EXPECT_EQ(SafetensorsDTypeSize(c.dtype), c.size) << c.name;
  }
  for (const char* bad : {"", "f32", "F8_E4M3", "U16", "FLOAT", "F32 "}) {
    EXPECT_FALSE(ParseSafetensorsDType(bad).ok()) << bad;
  }
}

TEST(SafetensorsDTypeTest, ByteSize) {
  EXPECT_EQ(*SafetensorsByteSize(SafetensorsDType::kF32, {}), 4u);
  EXPECT_EQ(*SafetensorsByteSize(SafetensorsDType::kF32, {2, 3}), 24u);
  EXPECT_EQ(*SafetensorsByteSize(SafetensorsDType::kBF16, {0, 7}), 0u);
  EXPECT_FALSE(SafetensorsByteSize(SafetensorsDType::kF32, {-1}).ok());
  EXPECT_FALSE(SafetensorsByteSize(SafetensorsDType::kU8,
                                   {int64_t{1} << 32, int64_t{1} << 32})
                   .ok());
  EXPECT_FALSE(
      SafetensorsByteSize(SafetensorsDType::kF32, {int64_t{1} << 62}).ok());
  EXPECT_EQ(*SafetensorsByteSize(SafetensorsDType::kU8, {int64_t{1} << 62, 2}),
            uint64_t{1} << 63);
}

// --- Valid files
// --------------------------------------------------------------

TEST(SafetensorsFileTest, OpenReadsTensorsAndMetadata) {
  const std::string path =
      WriteTemp("valid.safetensors",
                Image(kTwoTensorHeader, Floats({1.5f, -2.0f, 3.25f, 4.0f})));
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->path(), path);
  EXPECT_EQ((*file)->header_size(), sizeof(kTwoTensorHeader) - 1);
  EXPECT_EQ((*file)->data_size(), 16u);

  const std::vector<SafetensorsTensor>& tensors = (*file)->tensors();
  ASSERT_EQ(tensors.size(), 2u);
  // Offset order, not header order.
  EXPECT_EQ(tensors[0].name, "a");
  EXPECT_EQ(tensors[1].name, "b");

  const SafetensorsTensor* a = (*file)->Find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, SafetensorsDType::kF32);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(a->size_bytes, 8u);
  EXPECT_EQ(FloatAt(*a, 0), 1.5f);
  EXPECT_EQ(FloatAt(*a, 1), -2.0f);

  const SafetensorsTensor* b = (*file)->Find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(FloatAt(*b, 0), 3.25f);
  EXPECT_EQ(FloatAt(*b, 1), 4.0f);

  EXPECT_EQ((*file)->Find("c"), nullptr);
  EXPECT_EQ((*file)->Find(""), nullptr);
  EXPECT_EQ((*file)->Find("__metadata__"), nullptr);

  const std::map<std::string, std::string> expected_metadata = {
      {"format", "pt"}, {"note", "hi"}};
  EXPECT_EQ((*file)->metadata(), expected_metadata);
  unlink(path.c_str());
}

TEST(SafetensorsFileTest, FromBufferPointsIntoCallerBytes) {
  const std::string header = kTwoTensorHeader;
  const std::string bytes = Image(header, Floats({1, 2, 3, 4}));
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::FromBuffer(bytes, "mem");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->path(), "mem");
  const char* data_start = bytes.data() + 8 + header.size();
  EXPECT_EQ((*file)->Find("a")->data, data_start);
  EXPECT_EQ((*file)->Find("b")->data, data_start + 8);
}

TEST(SafetensorsFileTest, ScalarsEmptyTensorsMixedDtypesGapsAndTrailingBytes) {
  // Layout of the 32-byte data buffer:
  //   [0,2)   h: BF16 scalar
  //   [2,4)   gap
  //   [4,12)  i: I64 [1]
  //   [12,12) e: F32 [0,3] (empty)
  //   [12,15) m: BOOL [3]
  //   [15,16) u: U8 [1,1,1]
  //   [16,32) trailing bytes not owned by any tensor
  const std::string header =
      R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[12,15]},)"
      R"("i":{"dtype":"I64","shape":[1],"data_offsets":[4,12]},)"
      R"("e":{"dtype":"F32","shape":[0,3],"data_offsets":[12,12]},)"
      R"("u":{"dtype":"U8","shape":[1,1,1],"data_offsets":[15,16]},)"
      R"("h":{"dtype":"BF16","shape":[],"data_offsets":[0,2]}})"
      "   \n";  // Trailing whitespace is valid JSON padding.
  std::string data(32, '\x7f');
  data[0] = '\x80';
  data[1] = '\x3f';  // BF16 1.0
  const int64_t i_value = -123456789012345;
  std::memcpy(&data[4], &i_value, 8);
  data[12] = 1;
  data[13] = 0;
  data[14] = 1;
  data[15] = '\xAB';
  const std::string bytes = Image(header, data);
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::FromBuffer(bytes, "mixed");
  ASSERT_TRUE(file.ok()) << file.status();

  std::vector<std::string> order;
  for (const SafetensorsTensor& t : (*file)->tensors()) order.push_back(t.name);
  EXPECT_EQ(order, (std::vector<std::string>{"h", "i", "e", "m", "u"}));

  const SafetensorsTensor* h = (*file)->Find("h");
  EXPECT_EQ(h->dtype, SafetensorsDType::kBF16);
  EXPECT_TRUE(h->shape.empty());
  EXPECT_EQ(std::memcmp(h->data, "\x80\x3f", 2), 0);

  const SafetensorsTensor* i = (*file)->Find("i");
  int64_t got;
  std::memcpy(&got, i->data, 8);
  EXPECT_EQ(got, i_value);

  const SafetensorsTensor* e = (*file)->Find("e");
  EXPECT_EQ(e->size_bytes, 0u);
  EXPECT_EQ(e->shape, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(e->data, bytes.data() + 8 + header.size() + 12);

  const SafetensorsTensor* m = (*file)->Find("m");
  EXPECT_EQ(m->dtype, SafetensorsDType::kBool);
  EXPECT_EQ(std::memcmp(m->data, "\x01\x00\x01", 3), 0);

  const SafetensorsTensor* u = (*file)->Find("u");
  EXPECT_EQ(*static_cast<const unsigned char*>(u->data), 0xAB);
  EXPECT_TRUE((*file)->metadata().empty());
}

TEST(SafetensorsFileTest, EmptyTensorsMayShareOffsetsAndSitAtBufferEnd) {
  const std::string header =
      R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("y":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
      R"("z":{"dtype":"I8","shape":[0],"data_offsets":[8,8]}})";
  const std::string bytes = Image(header, Floats({1, 2}));
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::FromBuffer(bytes, "empties");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->tensors().size(), 3u);
}

TEST(SafetensorsFileTest, NoTensorsAndNullMetadata) {
  for (const char* header : {"{}", "{}      ", R"({"__metadata__":null})",
                             R"({"__metadata__":{}})"}) {
    const std::string bytes = Image(header, "");
    absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
        SafetensorsFile::FromBuffer(bytes, "none");
    ASSERT_TRUE(file.ok()) << header << ": " << file.status();
    EXPECT_TRUE((*file)->tensors().empty());
    EXPECT_TRUE((*file)->metadata().empty());
  }
}

TEST(SafetensorsFileTest, UnicodeAndEscapedNames) {
  const std::string header =
      "{\"caf\xC3\xA9\\\"q\\u0041\":"
      R"({"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  const std::string bytes = Image(header, "Z");
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::FromBuffer(bytes, "unicode");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_NE((*file)->Find("caf\xC3\xA9\"qA"), nullptr);
}

TEST(SafetensorsFileTest, OpenMissingFileIsNotFound) {
  const std::string path = TempPath("does_not_exist.safetensors");
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::Open(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(file.status().message()), HasSubstr(path));
}

TEST(SafetensorsFileTest, OpenDirectoryFails) {
  const std::string dir = TempPath("a_directory");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
      SafetensorsFile::Open(dir);
  EXPECT_FALSE(file.ok());
  EXPECT_THAT(std::string(file.status().message()), HasSubstr(dir));
  rmdir(dir.c_str());
}

TEST(SafetensorsFileTest, TensorsOutliveNothingButTheFile) {
  // Many opens/closes of the same mapped file must not leak or crash (ASan).
  const std::string path = WriteTemp(
      "reopen.safetensors", Image(kTwoTensorHeader, Floats({1, 2, 3, 4})));
  for (int i = 0; i < 50; ++i) {
    absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
        SafetensorsFile::Open(path);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ(FloatAt(*(*file)->Find("b"), 1), 4.0f);
  }
  unlink(path.c_str());
}

// --- Corrupt inputs
// -------------------------------------------------------------

struct CorruptCase {
  const char* label;
  std::string bytes;
  const char* tensor;  // Must appear in the message; nullptr if none.
  const char* detail;  // A fragment of the expected message.
};

// A tensor entry for "w" with the given JSON body.
std::string W(const std::string& body) {
  return absl::StrCat(R"({"w":{)", body, "}}");
}

std::vector<CorruptCase> CorruptCases() {
  const std::string ok_fields = R"("dtype":"F32","shape":[2])";
  const std::string eight = Floats({1, 2});
  std::vector<CorruptCase> cases = {
      {"empty_file", "", nullptr, "shorter than the 8-byte"},
      {"seven_bytes", std::string(7, '\0'), nullptr, "shorter than the 8-byte"},
      {"header_len_zero", LengthPrefix(0) + "{}", nullptr,
       "header length is 0"},
      {"header_len_beyond_file", LengthPrefix(100) + "{}", nullptr,
       "exceeds the 2 bytes"},
      {"header_len_absurd", LengthPrefix(200'000'000) + "{}", nullptr,
       "exceeds the limit"},
      {"header_len_max_u64", LengthPrefix(~uint64_t{0}) + "{}", nullptr,
       "exceeds the limit"},
      {"not_json", Image(R"({"w":)", ""), nullptr, "not valid JSON"},
      {"json_array", Image("[1,2]", ""), nullptr, "must be a JSON object"},
      {"json_string", Image(R"("w")", ""), nullptr, "must be a JSON object"},
      {"json_number", Image("12345678", ""), nullptr, "must be a JSON object"},
      {"invalid_utf8", Image("{\"w\xFF\":1}", ""), nullptr, "not valid JSON"},
      {"too_deep", Image(std::string(100, '[') + std::string(100, ']'), ""),
       nullptr, "nests deeper"},
      {"entry_not_object", Image(R"({"w":[1,2]})", eight), "w",
       "must be an object"},
      {"missing_dtype", Image(W(R"("shape":[2],"data_offsets":[0,8])"), eight),
       "w", "missing \"dtype\""},
      {"missing_shape",
       Image(W(R"("dtype":"F32","data_offsets":[0,8])"), eight), "w",
       "missing \"shape\""},
      {"missing_offsets", Image(W(ok_fields), eight), "w",
       "missing \"data_offsets\""},
      {"dtype_not_string",
       Image(W(R"("dtype":4,"shape":[2],"data_offsets":[0,8])"), eight), "w",
       "\"dtype\" must be a string"},
      {"unknown_dtype",
       Image(W(R"("dtype":"F8_E5M2","shape":[8],"data_offsets":[0,8])"), eight),
       "w", "unknown dtype"},
      {"lowercase_dtype",
       Image(W(R"("dtype":"f32","shape":[2],"data_offsets":[0,8])"), eight),
       "w", "unknown dtype"},
      {"shape_not_array",
       Image(W(R"("dtype":"F32","shape":2,"data_offsets":[0,8])"), eight), "w",
       "\"shape\" must be an array"},
      {"shape_float",
       Image(W(R"("dtype":"F32","shape":[2.0],"data_offsets":[0,8])"), eight),
       "w", "non-negative integer"},
      {"shape_string",
       Image(W(R"("dtype":"F32","shape":["2"],"data_offsets":[0,8])"), eight),
       "w", "non-negative integer"},
      {"negative_dim",
       Image(W(R"("dtype":"F32","shape":[-2,-1],"data_offsets":[0,8])"), eight),
       "w", "negative"},
      {"dim_beyond_int64",
       Image(W(R"("dtype":"U8","shape":[9223372036854775808],)"
               R"("data_offsets":[0,8])"),
             eight),
       "w", "does not fit"},
      {"offsets_not_array",
       Image(W(ok_fields + R"(,"data_offsets":"0,8")"), eight), "w",
       "array of 2 integers"},
      {"offsets_one_element",
       Image(W(ok_fields + R"(,"data_offsets":[8])"), eight), "w",
       "array of 2 integers"},
      {"offsets_three_elements",
       Image(W(ok_fields + R"(,"data_offsets":[0,8,8])"), eight), "w",
       "array of 2 integers"},
      {"offsets_negative",
       Image(W(ok_fields + R"(,"data_offsets":[-8,0])"), eight), "w",
       "negative"},
      {"offsets_float",
       Image(W(ok_fields + R"(,"data_offsets":[0,8.0])"), eight), "w",
       "non-negative integer"},
      {"offsets_huge",
       Image(W(ok_fields + R"(,"data_offsets":[0,18446744073709551616])"),
             eight),
       "w", "non-negative integer"},
      {"end_before_begin",
       Image(W(ok_fields + R"(,"data_offsets":[8,0])"), eight + eight), "w",
       "before begin"},
      {"offsets_beyond_buffer",
       Image(W(ok_fields + R"(,"data_offsets":[4,12])"), eight), "w",
       "beyond the data buffer"},
      {"offsets_max_u64",
       Image(W(R"("dtype":"U8","shape":[0],)"
               R"("data_offsets":[18446744073709551615,18446744073709551615])"),
             eight),
       "w", "beyond the data buffer"},
      {"size_mismatch",
       Image(W(R"("dtype":"F32","shape":[3],"data_offsets":[0,8])"), eight),
       "w", "needs 12"},
      {"size_mismatch_dtype",
       Image(W(R"("dtype":"F64","shape":[2],"data_offsets":[0,8])"), eight),
       "w", "needs 16"},
      {"shape_overflow",
       Image(W(R"("dtype":"F32","shape":[4294967296,4294967296],)"
               R"("data_offsets":[0,0])"),
             ""),
       "w", "overflow"},
      {"shape_overflow_by_dtype",
       Image(W(R"("dtype":"F32","shape":[4611686018427387904],)"
               R"("data_offsets":[0,0])"),
             ""),
       "w", "overflow"},
      {"overlap",
       Image(R"({"first":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
             R"("second":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
             eight + eight),
       "second", "overlaps tensor \"first\""},
      {"overlap_contained",
       Image(R"({"big":{"dtype":"U8","shape":[16],"data_offsets":[0,16]},)"
             R"("mid":{"dtype":"U8","shape":[2],"data_offsets":[10,12]}})",
             eight + eight),
       "mid", "overlaps tensor \"big\""},
      {"overlap_identical",
       Image(R"({"p":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
             R"("q":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
             eight),
       "q", "overlaps tensor \"p\""},
      {"duplicate_name",
       Image(R"({"dup":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
             R"("dup":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
             eight + eight),
       "dup", "duplicate"},
      {"duplicate_field",
       Image(
           W(R"("dtype":"F32","dtype":"F64","shape":[2],"data_offsets":[0,8])"),
           eight),
       nullptr, "duplicate JSON key \"dtype\""},
      {"duplicate_metadata",
       Image(R"({"__metadata__":{},"__metadata__":{}})", ""), nullptr,
       "duplicate"},
      {"metadata_not_object", Image(R"({"__metadata__":[1]})", ""), nullptr,
       "\"__metadata__\" must be an object"},
      {"metadata_value_not_string",
       Image(R"({"__metadata__":{"epoch":3}})", ""), nullptr,
       "\"epoch\" must be a string"},
  };
  return cases;
}

TEST(SafetensorsFileCorruptTest, FromBufferNamesBufferAndTensor) {
  for (const CorruptCase& c : CorruptCases()) {
    SCOPED_TRACE(c.label);
    const std::string display = absl::StrCat("corrupt_", c.label, ".st");
    absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
        SafetensorsFile::FromBuffer(c.bytes, display);
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(file.status().message());
    EXPECT_THAT(message, HasSubstr(display));
    EXPECT_THAT(message, HasSubstr(c.detail));
    if (c.tensor != nullptr) {
      EXPECT_THAT(message, HasSubstr(absl::StrCat("tensor \"", c.tensor, "\"")));
    }
  }
}

TEST(SafetensorsFileCorruptTest, OpenNamesPathAndTensor) {
  for (const CorruptCase& c : CorruptCases()) {
    SCOPED_TRACE(c.label);
    const std::string path = WriteTemp(absl::StrCat(c.label, ".st"), c.bytes);
    absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
        SafetensorsFile::Open(path);
    unlink(path.c_str());
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(file.status().message());
    EXPECT_THAT(message, HasSubstr(path));
    EXPECT_THAT(message, HasSubstr(c.detail));
    if (c.tensor != nullptr) {
      EXPECT_THAT(message, HasSubstr(absl::StrCat("tensor \"", c.tensor, "\"")));
    }
  }
}

// --- Randomized robustness
// --------------------------------------------------------

const char* const kFragments[] = {"{",
                                  "}",
                                  "[",
                                  "]",
                                  "\"",
                                  ",",
                                  ":",
                                  "0",
                                  "-1",
                                  "8",
                                  "4294967296",
                                  "18446744073709551615",
                                  "18446744073709551616",
                                  "1e400",
                                  "2.5",
                                  "null",
                                  "true",
                                  "\"F32\"",
                                  "\"BF16\"",
                                  "\"XX\"",
                                  "\"dtype\"",
                                  "\"shape\"",
                                  "\"data_offsets\"",
                                  "\"__metadata__\"",
                                  "[0,4]",
                                  "[4,0]",
                                  "[]",
                                  "{}",
                                  "\\u0000",
                                  "\\",
                                  "\xC3",
                                  "\xFF",
                                  " ",
                                  "\"a\":{\"dtype\":\"U8\",\"shape\":"
                                  "[1],\"data_offsets\":[0,1]}"};

std::string ValidFuzzSeed() {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},)"
      R"("emb":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
      R"("bias":{"dtype":"BF16","shape":[3],"data_offsets":[16,22]},)"
      R"("flag":{"dtype":"BOOL","shape":[],"data_offsets":[22,23]},)"
      R"("nil":{"dtype":"I64","shape":[0,5],"data_offsets":[23,23]},)"
      R"("ids":{"dtype":"I32","shape":[2],"data_offsets":[24,32]}})";
  return Image(header, std::string(32, '\x11'));
}

// Replaces the length prefix so that the header is everything up to the first
// byte of the data buffer as originally laid out (keeps mutated JSON parseable
// after insertions/deletions within the header).
void FixLength(std::string* image, size_t header_size) {
  if (image->size() < 8) return;
  image->replace(0, 8, LengthPrefix(header_size));
}

TEST(SafetensorsFileFuzzTest, RandomMutationsNeverCrashOrEscapeTheBuffer) {
  const std::string seed = ValidFuzzSeed();
  {
    absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
        SafetensorsFile::FromBuffer(seed, "seed");
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_EQ((*file)->tensors().size(), 5u);
  }
  uint64_t seed_header_size = 0;
  for (int i = 7; i >= 0; --i) {
    seed_header_size = (seed_header_size << 8) | static_cast<uint8_t>(seed[i]);
  }

  std::mt19937_64 rng(20240607);
  auto uniform = [&rng](size_t lo, size_t hi) {  // Inclusive.
    return std::uniform_int_distribution<size_t>(lo, hi)(rng);
  };
  constexpr int kIterations = 5000;
  int ok_count = 0;
  int error_count = 0;
  for (int iter = 0; iter < kIterations; ++iter) {
    std::string image = seed;
    size_t header_size = seed_header_size;
    const size_t mutations = uniform(1, 3);
    for (size_t m = 0; m < mutations; ++m) {
      const size_t kind = uniform(0, 6);
      switch (kind) {
        case 0: {  // Bit flips anywhere.
          if (image.empty()) break;
          for (size_t k = uniform(1, 8); k > 0; --k) {
            image[uniform(0, image.size() - 1)] ^=
                static_cast<char>(1u << uniform(0, 7));
          }
          break;
        }
        case 1:  // Truncation.
          image.resize(uniform(0, image.size()));
          break;
        case 2: {  // Random header length.
          if (image.size() < 8) break;
          uint64_t n;
          switch (uniform(0, 2)) {
            case 0:
              n = rng();
              break;
            case 1:
              n = uniform(0, image.size() + 16);
              break;
            default:
              n = header_size + uniform(0, 16) - 8;
              break;
          }
          image.replace(0, 8, LengthPrefix(n));
          break;
        }
        case 3:    // Replace a header span with a JSON fragment.
        case 4: {  // Insert a JSON fragment into the header.
          if (image.size() < 8 + header_size || header_size == 0) break;
          const std::string fragment =
              kFragments[uniform(0, std::size(kFragments) - 1)];
          const size_t pos = 8 + uniform(0, header_size - 1);
          const size_t erase =
              kind == 3 ? std::min<size_t>(uniform(0, 6), 8 + header_size - pos)
                        : 0;
          image.replace(pos, erase, fragment);
          header_size = header_size - erase + fragment.size();
          FixLength(&image, header_size);
          break;
        }
        case 5: {  // Rewrite a number in the header (targets offsets/dims).
          if (image.size() < 8 + header_size) break;
          std::vector<size_t> digits;
          for (size_t p = 8; p < 8 + header_size; ++p) {
            if (image[p] >= '0' && image[p] <= '9') digits.push_back(p);
          }
          if (digits.empty()) break;
          const size_t pos = digits[uniform(0, digits.size() - 1)];
          const std::string number = std::to_string(uniform(0, 40));
          image.replace(pos, 1, number);
          header_size += number.size() - 1;
          FixLength(&image, header_size);
          break;
        }
        case 6:  // Append or drop data bytes.
          if (uniform(0, 1) == 0) {
            image.append(uniform(1, 16), '\x22');
          } else if (image.size() > 8 + header_size) {
            image.resize(uniform(8 + header_size, image.size()));
          }
          break;
      }
    }

    // Exactly-sized heap copy so ASan flags any read past the end.
    const size_t size = image.size();
    std::unique_ptr<char[]> buffer(new char[size == 0 ? 1 : size]);
    std::memcpy(buffer.get(), image.data(), size);
    const char* begin = buffer.get();
    const char* end = begin + size;

    absl::StatusOr<std::unique_ptr<SafetensorsFile>> file =
        SafetensorsFile::FromBuffer(absl::string_view(begin, size), "fuzz");
    if (!file.ok()) {
      ++error_count;
      EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(std::string(file.status().message()), HasSubstr("fuzz"));
      continue;
    }
    ++ok_count;
    const char* data_start = begin + 8 + (*file)->header_size();
    ASSERT_LE(data_start, end);
    EXPECT_EQ(static_cast<size_t>(end - data_start), (*file)->data_size());
    const char* previous_end = data_start;
    for (const SafetensorsTensor& t : (*file)->tensors()) {
      const char* t_begin = static_cast<const char*>(t.data);
      ASSERT_GE(t_begin, data_start) << "iteration " << iter << " " << t.name;
      ASSERT_LE(t_begin, end) << "iteration " << iter << " " << t.name;
      ASSERT_LE(t.size_bytes, static_cast<size_t>(end - t_begin))
          << "iteration " << iter << " " << t.name;
      uint64_t expected = SafetensorsDTypeSize(t.dtype);
      for (int64_t d : t.shape) {
        ASSERT_GE(d, 0);
        expected *= static_cast<uint64_t>(d);
      }
      EXPECT_EQ(expected, t.size_bytes) << t.name;
      if (t.size_bytes > 0) {
        EXPECT_GE(t_begin, previous_end) << "overlap at iteration " << iter;
        previous_end = t_begin + t.size_bytes;
      }
      // Touch every byte so ASan would report an out-of-bounds view.
      unsigned sum = 0;
      for (size_t k = 0; k < t.size_bytes; ++k)
        sum += static_cast<unsigned char>(t_begin[k]);
      (void)sum;
      EXPECT_EQ((*file)->Find(t.name), &t);
    }
  }
  // The mutations must exercise both outcomes.
  EXPECT_GT(ok_count, 50);
  EXPECT_GT(error_count, 1000);
  std::printf("fuzz: %d ok, %d rejected\n", ok_count, error_count);
}

}  // namespace
}  // namespace tandem
