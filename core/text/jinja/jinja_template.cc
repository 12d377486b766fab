#include "core/text/jinja/jinja_template.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/text/jinja/jinja_lexer.h"
#include "core/text/jinja/jinja_parser.h"

namespace tandem::jinja {
namespace {

// Whether JavaScript treats `key` as an array index (such keys come first
// in an object's key order, ascending).
bool IsArrayIndex(const std::string& key, uint32_t* index) {
  if (key.empty() || key.size() > 10 || (key.size() > 1 && key[0] == '0')) return false;
  uint64_t v = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v >= 0xFFFFFFFFull) return false;
  *index = static_cast<uint32_t>(v);
  return true;
}

absl::StatusOr<Value> Convert(const nlohmann::ordered_json& json, int depth) {
  if (depth > 256) return absl::InvalidArgumentError("template context nests more than 256 deep");
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::Null();
    case nlohmann::ordered_json::value_t::boolean: return Value::Bool(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value::Int(static_cast<double>(json.get<int64_t>()));
    case nlohmann::ordered_json::value_t::number_unsigned:
      return Value::Int(static_cast<double>(json.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: {
      const double x = json.get<double>();
      return std::isfinite(x) && std::trunc(x) == x ? Value::Int(x) : Value::Float(x);
    }
    case nlohmann::ordered_json::value_t::string: return Value::String(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(json.size());
      for (const auto& item : json) {
        ASSIGN_OR_RETURN(Value v, Convert(item, depth + 1));
        items.push_back(std::move(v));
      }
      return Value::Array(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      std::vector<std::pair<uint32_t, const std::string*>> indices;
      for (auto it = json.begin(); it != json.end(); ++it) {
        uint32_t index = 0;
        if (IsArrayIndex(it.key(), &index)) indices.emplace_back(index, &it.key());
      }
      std::sort(indices.begin(), indices.end());
      ValueMap map;
      for (const auto& [index, key] : indices) {
        ASSIGN_OR_RETURN(Value v, Convert(json.at(*key), depth + 1));
        map.Set(*key, std::move(v));
      }
      for (auto it = json.begin(); it != json.end(); ++it) {
        uint32_t index = 0;
        if (IsArrayIndex(it.key(), &index)) continue;
        ASSIGN_OR_RETURN(Value v, Convert(it.value(), depth + 1));
        map.Set(it.key(), std::move(v));
      }
      return Value::Object(std::move(map));
    }
    default:
      return absl::InvalidArgumentError("template context holds a value JSON cannot express");
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<JinjaTemplate>> JinjaTemplate::Parse(std::string_view source,
                                                                    Limits limits) {
  ASSIGN_OR_RETURN(const std::vector<Token> tokens, Lexer::Tokenize(source));
  ASSIGN_OR_RETURN(NodeList program, Parser::Parse(tokens));
  return std::unique_ptr<JinjaTemplate>(new JinjaTemplate(std::move(program), limits));
}

absl::StatusOr<Value> JinjaTemplate::FromJson(const nlohmann::ordered_json& json) {
  return Convert(json, 0);
}

absl::StatusOr<std::string> JinjaTemplate::Render(const nlohmann::ordered_json& context) const {
  if (!context.is_object()) {
    return absl::InvalidArgumentError("a template's context must be a JSON object");
  }
  ASSIGN_OR_RETURN(const Value variables, FromJson(context));
  return Render(variables.map());
}

absl::StatusOr<std::string> JinjaTemplate::Render(const ValueMap& context) const {
  return Interpreter(limits_).Render(program_, context);
}

}  // namespace tandem::jinja
