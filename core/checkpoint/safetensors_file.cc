#include "core/checkpoint/safetensors_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/json_nesting_depth.h"
#include "core/checkpoint/json_guards.h"

namespace tandem {
namespace {

using Json = nlohmann::json;

constexpr absl::string_view kMetadataKey = "__metadata__";
constexpr size_t kLengthPrefixBytes = 8;
// Untrusted strings echoed in error messages are escaped and cut to this.
constexpr size_t kMaxEchoChars = 128;

// Escapes an untrusted string for an error message.
std::string Echo(absl::string_view s) {
  if (s.size() <= kMaxEchoChars) return absl::CHexEscape(s);
  return absl::StrCat(absl::CHexEscape(s.substr(0, kMaxEchoChars)), "...");
}

absl::Status FileError(absl::string_view file, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("safetensors file ", file, ": ", what));
}

absl::Status TensorError(absl::string_view file, absl::string_view tensor,
                         absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "safetensors file ", file, ": tensor \"", Echo(tensor), "\": ", what));
}

std::string TooShortMessage(uint64_t size) {
  return absl::StrCat("file is ", size,
                      " bytes, shorter than the 8-byte header length");
}

uint64_t ReadLittleEndianU64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) {
    v = (v << 8) | static_cast<uint8_t>(p[i]);
  }
  return v;
}

const char* JsonTypeName(const Json& j) {
  return j.type_name();  // Never throws.
}

// Reads a JSON integer that must be >= 0 into `out`. Returns an error
// description (empty on success).
std::string ReadNonNegative(const Json& j, uint64_t* out) {
  if (j.is_number_unsigned()) {
    *out = j.get<uint64_t>();
    return "";
  }
  if (j.is_number_integer()) {  // Signed: nlohmann only uses it for < 0.
    const int64_t v = j.get<int64_t>();
    if (v < 0) return absl::StrCat("negative value ", v);
    *out = static_cast<uint64_t>(v);
    return "";
  }
  return absl::StrCat("expected a non-negative integer, got ", JsonTypeName(j));
}

struct Parsed {
  std::vector<SafetensorsTensor> tensors;
  std::map<std::string, std::string> metadata;
};

absl::Status ParseMetadata(absl::string_view file, const Json& value,
                           std::map<std::string, std::string>* metadata) {
  if (value.is_null()) return absl::OkStatus();
  if (!value.is_object()) {
    return FileError(file, absl::StrCat("\"__metadata__\" must be an object, "
                                        "got ",
                                        JsonTypeName(value)));
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (!it.value().is_string()) {
      return FileError(
          file,
          absl::StrCat("\"__metadata__\" value for key \"", Echo(it.key()),
                       "\" must be a string, got ", JsonTypeName(it.value())));
    }
    (*metadata)[it.key()] = it.value().get_ref<const std::string&>();
  }
  return absl::OkStatus();
}

// The tensor's "dtype" entry; `dtype_name_out` gets its spelling.
absl::Status ParseTensorDType(absl::string_view file, const std::string& name,
                              const Json& entry, SafetensorsTensor* tensor,
                              std::string* dtype_name_out) {
  auto dtype_it = entry.find("dtype");
  if (dtype_it == entry.end()) {
    return TensorError(file, name, "missing \"dtype\"");
  }
  if (!dtype_it->is_string()) {
    return TensorError(file, name,
                       absl::StrCat("\"dtype\" must be a string, got ",
                                    JsonTypeName(*dtype_it)));
  }
  const std::string& dtype_name = dtype_it->get_ref<const std::string&>();
  absl::StatusOr<SafetensorsDType> dtype = ParseSafetensorsDType(dtype_name);
  if (!dtype.ok()) {
    return TensorError(
        file, name, absl::StrCat("unknown dtype \"", Echo(dtype_name), "\""));
  }
  tensor->dtype = *dtype;
  *dtype_name_out = dtype_name;

  return absl::OkStatus();
}

// The tensor's "shape" entry: non-negative dimensions that fit in int64.
absl::Status ParseTensorShape(absl::string_view file, const std::string& name,
                              const Json& entry, SafetensorsTensor* tensor) {
  auto shape_it = entry.find("shape");
  if (shape_it == entry.end()) {
    return TensorError(file, name, "missing \"shape\"");
  }
  if (!shape_it->is_array()) {
    return TensorError(file, name,
                       absl::StrCat("\"shape\" must be an array, got ",
                                    JsonTypeName(*shape_it)));
  }
  tensor->shape.clear();
  tensor->shape.reserve(shape_it->size());
  for (size_t i = 0; i < shape_it->size(); ++i) {
    const Json& dim = (*shape_it)[i];
    uint64_t value = 0;
    std::string error = ReadNonNegative(dim, &value);
    if (!error.empty()) {
      return TensorError(
          file, name,
          absl::StrCat("bad dimension ", i, " of \"shape\": ", error));
    }
    if (value > static_cast<uint64_t>(INT64_MAX)) {
      return TensorError(file, name,
                         absl::StrCat("dimension ", i, " of \"shape\" (", value,
                                      ") does not fit in int64"));
    }
    tensor->shape.push_back(static_cast<int64_t>(value));
  }

  return absl::OkStatus();
}

// The tensor's "data_offsets" entry: [begin, end) inside the data buffer.
absl::Status ParseTensorOffsets(absl::string_view file, const std::string& name,
                                const Json& entry, uint64_t data_size, uint64_t* begin_out,
                                uint64_t* end_out) {
  auto offsets_it = entry.find("data_offsets");
  if (offsets_it == entry.end()) {
    return TensorError(file, name, "missing \"data_offsets\"");
  }
  if (!offsets_it->is_array() || offsets_it->size() != 2) {
    return TensorError(
        file, name,
        absl::StrCat("\"data_offsets\" must be an array of 2 integers, got ",
                     offsets_it->is_array()
                         ? absl::StrCat("an array of ", offsets_it->size())
                         : std::string(JsonTypeName(*offsets_it))));
  }
  uint64_t begin = 0;
  uint64_t end = 0;
  std::string error = ReadNonNegative((*offsets_it)[0], &begin);
  if (error.empty()) error = ReadNonNegative((*offsets_it)[1], &end);
  if (!error.empty()) {
    return TensorError(file, name,
                       absl::StrCat("bad \"data_offsets\": ", error));
  }
  if (end < begin) {
    return TensorError(
        file, name,
        absl::StrCat("\"data_offsets\" end ", end, " is before begin ", begin));
  }
  if (end > data_size) {
    return TensorError(file, name,
                       absl::StrCat("\"data_offsets\" [", begin, ", ", end,
                                    ") extend beyond the data buffer of ",
                                    data_size, " bytes"));
  }

  *begin_out = begin;
  *end_out = end;
  return absl::OkStatus();
}

absl::Status ParseTensor(absl::string_view file, const std::string& name,
                         const Json& entry, const char* data_begin,
                         uint64_t data_size, SafetensorsTensor* tensor) {
  if (!entry.is_object()) {
    return TensorError(
        file, name,
        absl::StrCat("entry must be an object, got ", JsonTypeName(entry)));
  }
  tensor->name = name;
  std::string dtype_name;
  uint64_t begin = 0, end = 0;
  absl::Status status = ParseTensorDType(file, name, entry, tensor, &dtype_name);
  if (status.ok()) status = ParseTensorShape(file, name, entry, tensor);
  if (status.ok()) status = ParseTensorOffsets(file, name, entry, data_size, &begin, &end);
  if (!status.ok()) return status;

  absl::StatusOr<uint64_t> expected =
      SafetensorsByteSize(tensor->dtype, tensor->shape);
  if (!expected.ok()) {
    return TensorError(file, name, expected.status().message());
  }
  if (*expected != end - begin) {
    return TensorError(
        file, name,
        absl::StrCat("\"data_offsets\" span ", end - begin,
                     " bytes but shape [", absl::StrJoin(tensor->shape, ","),
                     "] of ", dtype_name, " needs ", *expected));
  }
  tensor->data = data_begin + begin;
  tensor->size_bytes = static_cast<size_t>(end - begin);
  return absl::OkStatus();
}

// Sorts `tensors` into file (offset) order and rejects overlaps between
// non-empty ones, naming both.
absl::Status CheckNoOverlaps(absl::string_view file, const char* data_begin,
                             std::vector<SafetensorsTensor>* tensors) {
  // File (offset) order; then reject overlaps between non-empty tensors.
  std::sort(
      tensors->begin(), tensors->end(),
      [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
        const char* a_end = static_cast<const char*>(a.data) + a.size_bytes;
        const char* b_end = static_cast<const char*>(b.data) + b.size_bytes;
        if (a.data != b.data) {
          return std::less<const void*>()(a.data, b.data);
        }
        if (a_end != b_end) return std::less<const char*>()(a_end, b_end);
        return a.name < b.name;
      });
  const SafetensorsTensor* furthest = nullptr;  // Non-empty, max end.
  const char* furthest_end = data_begin;
  for (const SafetensorsTensor& t : *tensors) {
    if (t.size_bytes == 0) continue;
    const char* begin = static_cast<const char*>(t.data);
    if (furthest != nullptr && begin < furthest_end) {
      return TensorError(
          file, t.name,
          absl::StrCat("data [", begin - data_begin, ", ",
                       begin - data_begin + t.size_bytes,
                       ") overlaps tensor \"", Echo(furthest->name), "\" [",
                       static_cast<const char*>(furthest->data) - data_begin,
                       ", ", furthest_end - data_begin, ")"));
    }
    if (furthest == nullptr || begin + t.size_bytes > furthest_end) {
      furthest = &t;
      furthest_end = begin + t.size_bytes;
    }
  }
  return absl::OkStatus();
}

// Parses and validates the JSON header. Never throws.
absl::Status ParseHeader(absl::string_view file, absl::string_view header,
                         const char* data_begin, uint64_t data_size,
                         Parsed* out) {
  // Safetensors headers nest 3 levels deep; deeper input is rejected before
  // parsing so that nothing downstream can recurse without bound.
  if (JsonNestingDepth(header, kMaxJsonNesting) > kMaxJsonNesting) {
    return FileError(file, absl::StrCat("header JSON nests deeper than ",
                                        kMaxJsonNesting, " levels"));
  }
  DuplicateKeyDetector detector;
  Json root;
  try {
    root = Json::parse(
        header.data(), header.data() + header.size(),
        [&detector](int depth, Json::parse_event_t event, Json& parsed) {
          return detector.OnEvent(depth, event, parsed);
        },
        /*allow_exceptions=*/false);
  } catch (const std::exception& e) {  // e.g. std::bad_alloc.
    return FileError(file, absl::StrCat("cannot parse header: ", e.what()));
  }
  if (root.is_discarded()) {
    return FileError(file, "header is not valid JSON");
  }
  if (!root.is_object()) {
    return FileError(file, absl::StrCat("header must be a JSON object, got ",
                                        JsonTypeName(root)));
  }
  if (detector.found()) {
    if (detector.duplicate_depth() == 1) {
      return TensorError(file, detector.duplicate(),
                         "duplicate name in header");
    }
    return FileError(
        file, absl::StrCat("duplicate JSON key \"", Echo(detector.duplicate()),
                           "\" in header"));
  }

  try {
    out->tensors.reserve(root.size());
    for (auto it = root.begin(); it != root.end(); ++it) {
      const std::string& key = it.key();
      if (key == kMetadataKey) {
        absl::Status status = ParseMetadata(file, it.value(), &out->metadata);
        if (!status.ok()) return status;
        continue;
      }
      SafetensorsTensor tensor;
      absl::Status status =
          ParseTensor(file, key, it.value(), data_begin, data_size, &tensor);
      if (!status.ok()) return status;
      out->tensors.push_back(std::move(tensor));
    }
  } catch (const std::exception& e) {  // Defensive: nlohmann type errors.
    return FileError(file, absl::StrCat("bad header: ", e.what()));
  }

  return CheckNoOverlaps(file, data_begin, &out->tensors);
}

}  // namespace

SafetensorsFile::SafetensorsFile(std::string path) : path_(std::move(path)) {}

SafetensorsFile::~SafetensorsFile() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_size_);
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(
    const std::string& path) {
  int fd;
  do {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat("cannot open safetensors file ", path));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return absl::ErrnoToStatus(err, absl::StrCat("cannot stat safetensors "
                                                 "file ",
                                                 path));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return FileError(path, "not a regular file");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < kLengthPrefixBytes) {
    close(fd);
    return FileError(path, TooShortMessage(size));
  }
  void* mapping =
      mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int mmap_errno = errno;
  close(fd);  // The mapping keeps its own reference to the file.
  if (mapping == MAP_FAILED) {
    return absl::ErrnoToStatus(
        mmap_errno, absl::StrCat("cannot mmap safetensors file ", path));
  }
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile(path));
  file->mapping_ = mapping;
  file->mapping_size_ = static_cast<size_t>(size);
  absl::Status status = file->Parse(absl::string_view(
      static_cast<const char*>(mapping), file->mapping_size_));
  if (!status.ok()) return status;  // ~SafetensorsFile unmaps.
  return file;
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::FromBuffer(
    absl::string_view bytes, std::string display_name) {
  std::unique_ptr<SafetensorsFile> file(
      new SafetensorsFile(std::move(display_name)));
  absl::Status status = file->Parse(bytes);
  if (!status.ok()) return status;
  return file;
}

absl::Status SafetensorsFile::Parse(absl::string_view bytes) {
  if (bytes.size() < kLengthPrefixBytes) {
    return FileError(path_, TooShortMessage(bytes.size()));
  }
  const uint64_t header_size = ReadLittleEndianU64(bytes.data());
  const uint64_t available = bytes.size() - kLengthPrefixBytes;
  if (header_size == 0) {
    return FileError(path_, "header length is 0");
  }
  if (header_size > kMaxHeaderBytes) {
    return FileError(path_, absl::StrCat("header length ", header_size,
                                         " exceeds the limit of ",
                                         kMaxHeaderBytes, " bytes"));
  }
  if (header_size > available) {
    return FileError(
        path_, absl::StrCat("header length ", header_size, " exceeds the ",
                            available, " bytes after the length prefix"));
  }
  const absl::string_view header =
      bytes.substr(kLengthPrefixBytes, static_cast<size_t>(header_size));
  const char* data_begin = header.data() + header.size();
  const uint64_t data_size = available - header_size;

  Parsed parsed;
  absl::Status status =
      ParseHeader(path_, header, data_begin, data_size, &parsed);
  if (!status.ok()) return status;

  header_size_ = header_size;
  data_size_ = data_size;
  tensors_ = std::move(parsed.tensors);
  metadata_ = std::move(parsed.metadata);
  index_.clear();
  for (size_t i = 0; i < tensors_.size(); ++i) {
    index_.emplace(tensors_[i].name, i);
  }
  return absl::OkStatus();
}

const SafetensorsTensor* SafetensorsFile::Find(absl::string_view name) const {
  auto it = index_.find(std::string_view(name.data(), name.size()));
  if (it == index_.end()) return nullptr;
  return &tensors_[it->second];
}

}  // namespace tandem
