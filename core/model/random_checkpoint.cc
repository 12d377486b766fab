#include "core/model/random_checkpoint.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/model/model_families.h"

namespace tandem {
namespace {

absl::StatusOr<const ModelFamily*> FamilyFor(const RandomCheckpointOptions& options) {
  if (options.architecture.empty()) return ModelFamilies().front();
  return FindModelFamily(options.architecture);
}

}  // namespace

std::string ResolvedPreset(const RandomCheckpointOptions& options) {
  if (!options.preset.empty()) return options.preset;
  absl::StatusOr<const ModelFamily*> family = FamilyFor(options);
  return family.ok() ? (*family)->presets().front() : "";
}

absl::Status WriteRandomCheckpoint(const std::string& dir,
                                   const RandomCheckpointOptions& options) {
  ASSIGN_OR_RETURN(const ModelFamily* family, FamilyFor(options));
  const std::string preset = ResolvedPreset(options);
  const std::vector<std::string> presets = family->presets();
  if (std::find(presets.begin(), presets.end(), preset) == presets.end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown ", family->model_type(), " size \"",
                                                   preset, "\" (expected ",
                                                   absl::StrJoin(presets, ", "), ")"));
  }
  // Storage only: float16 is fine here even though the CPU cannot run it.
  const at::ScalarType type = options.dtype == DType::kFloat16    ? at::kHalf
                              : options.dtype == DType::kBFloat16 ? at::kBFloat16
                                                                  : at::kFloat;
  return family->WriteRandom(dir, preset, options, type);
}

std::vector<std::string> DescribeArchitectures() {
  std::vector<std::string> lines;
  for (const ModelFamily* family : ModelFamilies()) {
    lines.push_back(absl::StrCat(family->model_type(), ": ",
                                 absl::StrJoin(family->presets(), ", ")));
  }
  return lines;
}

}  // namespace tandem
