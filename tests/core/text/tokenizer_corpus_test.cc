// Tandem's tokenizer against GPT-2's reference encoder on a varied corpus
// (tests/data/tokenizer_corpus.json: ids produced by the npm package
// gpt-3-encoder, never by Tandem; regenerate with
// `node tests/data/make_tokenizer_corpus.js tests/data/tokenizer_corpus.json`).
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/core/test_tokenizer.h"

namespace tandem {
namespace {

TEST(TokenizerCorpusTest, MatchesTheReferenceEncoderAndRoundTrips) {
  std::ifstream in(std::string(TANDEM_TEST_SOURCE_DIR) + "/tests/data/tokenizer_corpus.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json corpus = nlohmann::json::parse(in);
  ASSERT_GE(corpus["cases"].size(), 30u);
  for (const auto& c : corpus["cases"]) {
    const std::string text = c["text"].get<std::string>();
    const std::vector<int32_t> expected = c["ids"].get<std::vector<int32_t>>();
    const std::vector<int32_t> ids = TestTokenizer().Encode(text);
    EXPECT_EQ(ids, expected) << text;
    EXPECT_EQ(TestTokenizer().Decode(ids), text);
  }
}

}  // namespace
}  // namespace tandem
