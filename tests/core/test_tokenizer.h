// The real GPT-2 tokenizer for tests (TANDEM_TEST_GPT2_DIR is set by CMake).
#ifndef TANDEM_TESTS_CORE_TEST_TOKENIZER_H_
#define TANDEM_TESTS_CORE_TEST_TOKENIZER_H_

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "core/text/gpt2_tokenizer.h"

namespace tandem {

inline const Gpt2Tokenizer& TestTokenizer() {
  static const Gpt2Tokenizer* tokenizer = [] {
    const std::string dir = TANDEM_TEST_GPT2_DIR;
    auto loaded = Gpt2Tokenizer::FromFiles(dir + "/vocab.json", dir + "/merges.txt");
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return loaded.ok() ? loaded->release() : nullptr;
  }();
  return *tokenizer;
}

}  // namespace tandem

#endif  // TANDEM_TESTS_CORE_TEST_TOKENIZER_H_
