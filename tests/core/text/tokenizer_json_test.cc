// Loading GPT-2's tokenizer from a Hugging Face tokenizer.json.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/text/gpt2_tokenizer.h"
#include "tests/core/temp_dir.h"

namespace tandem {
namespace {

using ::testing::HasSubstr;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TokenizerJsonTest : public ::testing::Test {
 protected:

  // tokenizer.json built from GPT-2's vocab.json and merges.txt, with merges
  // as "a b" strings (older files) or ["a", "b"] pairs (newer files).
  void WriteTokenizerJson(bool pairs, const std::string& type = "BPE") {
    const std::string dir = TANDEM_TEST_GPT2_DIR;
    nlohmann::json merges = nlohmann::json::array();
    std::istringstream lines(Read(dir + "/merges.txt"));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty() || line.rfind("#version", 0) == 0) continue;
      const size_t space = line.find(' ');
      if (pairs) {
        merges.push_back({line.substr(0, space), line.substr(space + 1)});
      } else {
        merges.push_back(line);
      }
    }
    nlohmann::json json = {
        {"version", "1.0"},
        {"added_tokens", {{{"id", 50256}, {"content", "<|endoftext|>"}, {"special", true}}}},
        {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}},
        {"model", {{"type", type}, {"vocab", nlohmann::json::parse(Read(dir + "/vocab.json"))},
                   {"merges", merges}}}};
    std::ofstream(dir_ + "/tokenizer.json") << json.dump();
  }

  TempDir temp_{"tandem_tokjson_"};
  const std::string dir_ = temp_.path();
};

TEST_F(TokenizerJsonTest, BothMergeFormsEncodeLikeGpt2) {
  for (bool pairs : {false, true}) {
    WriteTokenizerJson(pairs);
    auto tokenizer = Gpt2Tokenizer::FromTokenizerJson(dir_ + "/tokenizer.json");
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    EXPECT_EQ((*tokenizer)->Encode("Hello world"), (std::vector<int32_t>{15496, 995}));
    EXPECT_EQ((*tokenizer)->Encode("<|endoftext|>"), (std::vector<int32_t>{50256}));
    // From tests/data/tokenizer_corpus.json (gpt-3-encoder's ids).
    EXPECT_EQ((*tokenizer)->Encode("    leading spaces, trailing spaces    "),
              (std::vector<int32_t>{220, 220, 220, 3756, 9029, 11, 25462, 9029, 220, 220, 220, 220}));
  }
}

TEST_F(TokenizerJsonTest, OtherModelTypesAreRejectedWithThePath) {
  WriteTokenizerJson(false, "WordPiece");
  auto tokenizer = Gpt2Tokenizer::FromTokenizerJson(dir_ + "/tokenizer.json");
  ASSERT_FALSE(tokenizer.ok());
  EXPECT_THAT(tokenizer.status().message(), HasSubstr("tokenizer.json"));
  EXPECT_THAT(tokenizer.status().message(), HasSubstr("BPE"));
}

}  // namespace
}  // namespace tandem
