// The registry of model families. Model layer only.
#ifndef TANDEM_CORE_MODEL_MODEL_FAMILIES_H_
#define TANDEM_CORE_MODEL_MODEL_FAMILIES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/model/model_family.h"

namespace tandem {

// Every family Tandem serves, the default (the embedded model's) first.
const std::vector<const ModelFamily*>& ModelFamilies();
// By config.json's model_type; NOT_FOUND lists the supported ones.
absl::StatusOr<const ModelFamily*> FindModelFamily(absl::string_view model_type);
// The family of the checkpoint in `dir`, from its config.json's model_type.
absl::StatusOr<const ModelFamily*> ModelFamilyOf(const std::string& dir);

}  // namespace tandem

#endif  // TANDEM_CORE_MODEL_MODEL_FAMILIES_H_
