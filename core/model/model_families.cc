#include "core/model/model_families.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/read_file.h"
#include "core/base/status_macros.h"
#include "core/model/gpt2/gpt2_family.h"
#include "core/model/llama/llama_family.h"

namespace tandem {

const std::vector<const ModelFamily*>& ModelFamilies() {
  static const Gpt2Family gpt2;  // first: the embedded default
  static const LlamaFamily llama("llama"), qwen2("qwen2"), qwen3("qwen3");
  static const std::vector<const ModelFamily*> families = {&gpt2, &llama, &qwen2, &qwen3};
  return families;
}

absl::StatusOr<const ModelFamily*> FindModelFamily(absl::string_view model_type) {
  std::vector<std::string> known;
  for (const ModelFamily* family : ModelFamilies()) {
    if (family->model_type() == model_type) return family;
    known.emplace_back(family->model_type());
  }
  return absl::NotFoundError(absl::StrCat("model_type \"", model_type,
                                          "\" is not supported (supported: ",
                                          absl::StrJoin(known, ", "), ")"));
}

absl::StatusOr<const ModelFamily*> ModelFamilyOf(const std::string& dir) {
  const std::string path = dir + "/config.json";
  ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a JSON object"));
  }
  const auto type = json.find("model_type");
  if (type == json.end() || !type->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no model_type string"));
  }
  absl::StatusOr<const ModelFamily*> family = FindModelFamily(type->get<std::string>());
  if (!family.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", family.status().message()));
  }
  return family;
}

}  // namespace tandem
