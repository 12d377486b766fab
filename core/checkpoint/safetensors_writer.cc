#include "core/checkpoint/safetensors_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/checkpoint/safetensors_file.h"

namespace tandem {
namespace {

constexpr absl::string_view kMetadataKey = "__metadata__";
constexpr size_t kHeaderAlignment = 8;

// Strict UTF-8 validation (RFC 3629: no overlongs, surrogates or code points
// above U+10FFFF), matching what the JSON parser of the reader accepts.
bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const uint8_t c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint8_t lo = 0x80;
    uint8_t hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (n - i < len) return false;
    const uint8_t c1 = static_cast<uint8_t>(s[i + 1]);
    if (c1 < lo || c1 > hi) return false;
    for (size_t k = 2; k < len; ++k) {
      const uint8_t ck = static_cast<uint8_t>(s[i + k]);
      if (ck < 0x80 || ck > 0xBF) return false;
    }
    i += len;
  }
  return true;
}

// Appends `s` as a JSON string literal (same escaping as nlohmann::json).
// `s` must be valid UTF-8.
void AppendJsonString(absl::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char ch : s) {
    const uint8_t c = static_cast<uint8_t>(ch);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xF]);
        } else {
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

std::string EncodeLittleEndianU64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  }
  return out;
}

absl::Status WriteAll(int fd, absl::string_view bytes,
                      const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, absl::StrCat("cannot write ", path));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

void SafetensorsWriter::SetMetadata(std::string key, std::string value) {
  metadata_[std::move(key)] = std::move(value);
}

absl::Status SafetensorsWriter::Add(std::string name, SafetensorsDType dtype,
                                    std::vector<int64_t> shape,
                                    absl::string_view bytes) {
  auto error = [&name](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(
        "safetensors tensor \"", absl::CHexEscape(name), "\": ", what));
  };
  if (name == kMetadataKey) return error("the name is reserved");
  if (!IsValidUtf8(name)) return error("the name is not valid UTF-8");
  if (tensors_.count(name) != 0) return error("duplicate tensor name");
  absl::StatusOr<uint64_t> expected = SafetensorsByteSize(dtype, shape);
  if (!expected.ok()) return error(expected.status().message());
  if (*expected != bytes.size()) {
    return error(absl::StrCat(
        "got ", bytes.size(), " bytes but shape [", absl::StrJoin(shape, ","),
        "] of ", SafetensorsDTypeName(dtype), " needs ", *expected));
  }
  Entry entry{dtype, std::move(shape), std::string(bytes)};
  tensors_.emplace(std::move(name), std::move(entry));
  return absl::OkStatus();
}

absl::StatusOr<std::string> SafetensorsWriter::SerializeHeader() const {
  std::string header = "{";
  bool first = true;
  if (!metadata_.empty()) {
    header.append("\"__metadata__\":{");
    for (const auto& [key, value] : metadata_) {
      if (!IsValidUtf8(key) || !IsValidUtf8(value)) {
        return absl::InvalidArgumentError(
            absl::StrCat("safetensors metadata entry \"", absl::CHexEscape(key),
                         "\" is not valid UTF-8"));
      }
      if (!first) header.push_back(',');
      first = false;
      AppendJsonString(key, &header);
      header.push_back(':');
      AppendJsonString(value, &header);
    }
    header.push_back('}');
  }
  uint64_t offset = 0;
  for (const auto& [name, entry] : tensors_) {
    if (header.size() > 1) header.push_back(',');
    AppendJsonString(name, &header);
    absl::StrAppend(&header, ":{\"dtype\":\"",
                    SafetensorsDTypeName(entry.dtype), "\",\"shape\":[",
                    absl::StrJoin(entry.shape, ","), "],\"data_offsets\":[",
                    offset, ",", offset + entry.bytes.size(), "]}");
    offset += entry.bytes.size();
  }
  header.push_back('}');
  header.append(
      (kHeaderAlignment - header.size() % kHeaderAlignment) % kHeaderAlignment,
      ' ');
  if (header.size() > SafetensorsFile::kMaxHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "safetensors header of ", header.size(), " bytes exceeds the limit of ",
        SafetensorsFile::kMaxHeaderBytes));
  }
  return header;
}

absl::StatusOr<std::string> SafetensorsWriter::Serialize() const {
  absl::StatusOr<std::string> header = SerializeHeader();
  if (!header.ok()) return header.status();
  std::string out = EncodeLittleEndianU64(header->size());
  out.append(*header);
  for (const auto& [name, entry] : tensors_) out.append(entry.bytes);
  return out;
}

absl::Status SafetensorsWriter::WriteFile(const std::string& path) const {
  absl::StatusOr<std::string> header = SerializeHeader();
  if (!header.ok()) return header.status();

  static std::atomic<uint64_t> counter{0};
  std::string tmp_path;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp_path = absl::StrCat(path, ".tmp.", getpid(), ".", counter++);
    fd = open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST && errno != EINTR) break;
  }
  if (fd < 0) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat("cannot create temporary file ", tmp_path));
  }

  absl::Status status =
      WriteAll(fd, EncodeLittleEndianU64(header->size()), tmp_path);
  if (status.ok()) status = WriteAll(fd, *header, tmp_path);
  for (auto it = tensors_.begin(); status.ok() && it != tensors_.end(); ++it) {
    status = WriteAll(fd, it->second.bytes, tmp_path);
  }
  if (status.ok() && fsync(fd) != 0) {
    status =
        absl::ErrnoToStatus(errno, absl::StrCat("cannot fsync ", tmp_path));
  }
  if (close(fd) != 0 && status.ok()) {
    status =
        absl::ErrnoToStatus(errno, absl::StrCat("cannot close ", tmp_path));
  }
  if (status.ok() && rename(tmp_path.c_str(), path.c_str()) != 0) {
    status = absl::ErrnoToStatus(
        errno, absl::StrCat("cannot rename ", tmp_path, " to ", path));
  }
  if (!status.ok()) {
    unlink(tmp_path.c_str());
    return status;
  }
  // Best effort: persist the rename itself.
  const int dir_fd =
      open(DirectoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
  return absl::OkStatus();
}

}  // namespace tandem
