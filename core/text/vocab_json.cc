#include "core/text/vocab_json.h"

#include <cstdint>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace tandem {
namespace {

// SAX handler that reads vocab.json (a flat object of string -> non-negative
// integer) straight into a map, without exceptions and without building a DOM.
class VocabSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit VocabSax(std::unordered_map<std::string, int32_t>* vocab)
      : vocab_(vocab) {}

  bool null() override { return BadValue("null"); }
  bool boolean(bool) override { return BadValue("a boolean"); }
  bool number_integer(number_integer_t value) override {
    if (value < 0) return BadValue(absl::StrCat("negative id ", value));
    return AddId(static_cast<uint64_t>(value));
  }
  bool number_unsigned(number_unsigned_t value) override {
    return AddId(value);
  }
  bool number_float(number_float_t, const string_t& text) override {
    return BadValue(absl::StrCat("non-integer id ", text));
  }
  bool string(string_t&) override { return BadValue("a string"); }
  bool binary(binary_t&) override { return BadValue("binary data"); }
  bool start_object(std::size_t) override {
    if (depth_++ == 0) return true;
    return BadValue("an object");
  }
  bool key(string_t& key) override {
    key_ = std::move(key);
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0) {
      error_ = "top-level value must be an object of token -> id";
      return false;
    }
    return BadValue("an array");
  }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    error_ = absl::StrCat("malformed JSON: ", ex.what());
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  bool BadValue(absl::string_view what) {
    if (depth_ == 0) {
      error_ = "top-level value must be an object of token -> id";
    } else {
      error_ = absl::StrCat("token \"", key_,
                            "\" must map to a non-negative integer id, got ",
                            what);
    }
    return false;
  }

  bool AddId(uint64_t value) {
    if (depth_ == 0) {
      error_ = "top-level value must be an object of token -> id";
      return false;
    }
    if (value > static_cast<uint64_t>(kMaxTokenId)) {
      error_ = absl::StrCat("token \"", key_, "\" has id ", value,
                            ", above the limit ", kMaxTokenId);
      return false;
    }
    if (!vocab_->emplace(key_, static_cast<int32_t>(value)).second) {
      error_ = absl::StrCat("duplicate token \"", key_, "\"");
      return false;
    }
    return true;
  }

  std::unordered_map<std::string, int32_t>* vocab_;
  int depth_ = 0;
  std::string key_;
  std::string error_;
};

}  // namespace

absl::StatusOr<std::unordered_map<std::string, int32_t>> ParseVocabJson(
    absl::string_view json) {
  std::unordered_map<std::string, int32_t> vocab;
  VocabSax sax(&vocab);
  if (!nlohmann::json::sax_parse(json.begin(), json.end(), &sax)) {
    return absl::InvalidArgumentError(sax.error());
  }
  return vocab;
}

}  // namespace tandem
