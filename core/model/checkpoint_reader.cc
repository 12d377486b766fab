#include "core/model/checkpoint_reader.h"

#include <cstring>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/read_file.h"
#include "core/base/status_macros.h"

namespace tandem {
namespace {

absl::StatusOr<at::ScalarType> TorchType(SafetensorsDType dtype) {
  switch (dtype) {
    case SafetensorsDType::kF32: return at::kFloat;
    case SafetensorsDType::kF16: return at::kHalf;
    case SafetensorsDType::kBF16: return at::kBFloat16;
    case SafetensorsDType::kF64: return at::kDouble;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("dtype ", SafetensorsDTypeName(dtype), " is not a floating-point type"));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<CheckpointReader>> CheckpointReader::Open(const std::string& dir) {
  std::unique_ptr<CheckpointReader> reader(new CheckpointReader());
  const std::string index_path = dir + "/model.safetensors.index.json";
  if (!FileExists(index_path)) {
    reader->path_ = dir + "/model.safetensors";
    ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file, SafetensorsFile::Open(reader->path_));
    for (const SafetensorsTensor& t : file->tensors()) reader->where_[t.name] = file.get();
    reader->files_.push_back(std::move(file));
    return reader;
  }
  reader->path_ = index_path;
  ASSIGN_OR_RETURN(const std::string text, ReadFile(index_path));
  const nlohmann::json index =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (index.is_discarded() || !index.is_object() || !index.contains("weight_map") ||
      !index["weight_map"].is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(index_path, ": expected a JSON object with a \"weight_map\" object"));
  }
  std::map<std::string, const SafetensorsFile*> shards;
  for (const auto& [name, shard] : index["weight_map"].items()) {
    if (!shard.is_string() || shard.get<std::string>().find('/') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          index_path, ": weight_map[\"", name, "\"] must name a file in the directory"));
    }
    const std::string file_name = shard.get<std::string>();
    auto it = shards.find(file_name);
    if (it == shards.end()) {
      ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file,
                       SafetensorsFile::Open(dir + "/" + file_name));
      it = shards.emplace(file_name, file.get()).first;
      reader->files_.push_back(std::move(file));
    }
    if (it->second->Find(name) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(it->second->path(), ": tensor \"", name,
                                                     "\" is missing (", index_path,
                                                     " puts it there)"));
    }
    reader->where_[name] = it->second;
  }
  return reader;
}

bool CheckpointReader::Contains(const std::string& name) const {
  return where_.count(name) > 0;
}

absl::StatusOr<at::Tensor> CheckpointReader::Read(const std::string& name,
                                                  const std::vector<int64_t>& shape,
                                                  at::ScalarType dtype, at::Device device) const {
  const auto it = where_.find(name);
  if (it == where_.end()) {
    return absl::NotFoundError(absl::StrCat(path_, ": tensor \"", name, "\" is missing"));
  }
  return ReadTensor(*it->second, *it->second->Find(name), shape, dtype, device);
}

absl::StatusOr<at::Tensor> CheckpointReader::ReadTensor(const SafetensorsFile& file,
                                                        const SafetensorsTensor& info,
                                                        const std::vector<int64_t>& shape,
                                                        at::ScalarType dtype,
                                                        at::Device device) {
  if (info.shape != shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        file.path(), ": tensor \"", info.name, "\" has shape [", absl::StrJoin(info.shape, ", "),
        "], expected [", absl::StrJoin(shape, ", "), "] from config.json"));
  }
  absl::StatusOr<at::ScalarType> source = TorchType(info.dtype);
  if (!source.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.path(), ": tensor \"", info.name, "\": ", source.status().message()));
  }
  at::Tensor host;
  const auto align = static_cast<uintptr_t>(at::elementSize(*source));
  if (reinterpret_cast<uintptr_t>(info.data) % align == 0) {
    // A view of the mapped file; the copy below is the only read.
    host = at::from_blob(const_cast<void*>(info.data), shape, at::TensorOptions().dtype(*source));
  } else {
    host = at::empty(shape, at::TensorOptions().dtype(*source));
    std::memcpy(host.data_ptr(), info.data, info.size_bytes);
  }
  return host.to(device, dtype, /*non_blocking=*/false, /*copy=*/true);
}

}  // namespace tandem
