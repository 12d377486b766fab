#include "core/model/checkpoint_writer.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/base/read_file.h"
#include "core/base/status_macros.h"
#include "core/checkpoint/safetensors_writer.h"

namespace tandem {
namespace {

SafetensorsDType SafetensorsTypeFor(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf: return SafetensorsDType::kF16;
    case at::kBFloat16: return SafetensorsDType::kBF16;
    default: return SafetensorsDType::kF32;
  }
}

}  // namespace

absl::Status MakeDirectory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status WriteTextFile(const std::string& path, absl::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status CopyFile(const std::string& from, const std::string& to) {
  ASSIGN_OR_RETURN(const std::string text, ReadFile(from));
  return WriteTextFile(to, text);
}

std::string BaseName(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

absl::Status WriteCheckpointTensors(const std::string& dir,
                                    const std::vector<std::pair<std::string, at::Tensor>>& named,
                                    at::ScalarType dtype, uint64_t seed,
                                    int64_t max_shard_bytes) {
  RETURN_IF_ERROR(MakeDirectory(dir));
  // Group the tensors into shards (in order), then write each.
  std::vector<std::vector<size_t>> shards(1);
  int64_t shard_bytes = 0;
  for (size_t i = 0; i < named.size(); ++i) {
    const int64_t bytes = named[i].second.numel() * at::elementSize(dtype);
    if (max_shard_bytes > 0 && !shards.back().empty() && shard_bytes + bytes > max_shard_bytes) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    shards.back().push_back(i);
    shard_bytes += bytes;
  }
  nlohmann::json weight_map = nlohmann::json::object();
  int64_t total_bytes = 0;
  for (size_t s = 0; s < shards.size(); ++s) {
    const std::string file =
        max_shard_bytes > 0
            ? absl::StrFormat("model-%05d-of-%05d.safetensors", s + 1, shards.size())
            : std::string("model.safetensors");
    SafetensorsWriter writer;
    writer.SetMetadata("format", "pt");
    writer.SetMetadata("tandem_seed", std::to_string(seed));
    for (const size_t i : shards[s]) {
      const at::Tensor t = named[i].second.to(at::kCPU, dtype).contiguous();
      total_bytes += t.numel() * t.element_size();
      RETURN_IF_ERROR(writer.Add(named[i].first, SafetensorsTypeFor(dtype), t.sizes().vec(),
                                 absl::string_view(static_cast<const char*>(t.data_ptr()),
                                                   t.numel() * t.element_size())));
      weight_map[named[i].first] = file;
    }
    RETURN_IF_ERROR(writer.WriteFile(dir + "/" + file));
  }
  if (max_shard_bytes <= 0) return absl::OkStatus();
  const nlohmann::json index = {{"metadata", {{"total_size", total_bytes}}},
                                {"weight_map", weight_map}};
  return WriteTextFile(dir + "/model.safetensors.index.json", index.dump(2) + "\n");
}

}  // namespace tandem
