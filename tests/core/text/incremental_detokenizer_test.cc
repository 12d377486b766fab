#include "core/text/incremental_detokenizer.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/text/gpt2_tokenizer.h"

#ifndef TANDEM_TEST_GPT2_DIR
#error "TANDEM_TEST_GPT2_DIR must name the GPT-2 vocab.json/merges.txt dir"
#endif

namespace tandem {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

const Gpt2Tokenizer& Gpt2() {
  static const Gpt2Tokenizer* const tokenizer = [] {
    const std::string dir = TANDEM_TEST_GPT2_DIR;
    absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> tok =
        Gpt2Tokenizer::FromFiles(dir + "/vocab.json", dir + "/merges.txt");
    if (!tok.ok()) {
      ADD_FAILURE() << tok.status();
      std::abort();
    }
    return tok->release();
  }();
  return *tokenizer;
}

// Ids of single tokens, looked up in GPT-2's vocab.json (byte-level symbols
// map bytes 0x21-0x7E, 0xA1-0xAC, 0xAE-0xFF to themselves and the rest to
// U+0100 onwards).
constexpr int32_t kByteFF = 187;     // "ÿ"  = 0xFF
constexpr int32_t kByte80 = 222;     // "Ģ"  = 0x80
constexpr int32_t kByteE2 = 158;     // "â"  = 0xE2
constexpr int32_t kBytesE280 = 447;  // "âĢ" = 0xE2 0x80
constexpr int32_t kByteF0 = 172;     // "ð"  = 0xF0
constexpr int32_t kLetterX = 87;     // "x"
constexpr int32_t kHello = 15496;    // "Hello"
constexpr int32_t kSpaceWorld = 995;  // " world"

// Feeds all ids and returns the concatenated output of Append and Flush.
std::string Stream(const std::vector<int32_t>& ids) {
  IncrementalDetokenizer detok(&Gpt2());
  std::string text;
  for (int32_t id : ids) text += detok.Append(id);
  return text + detok.Flush();
}

TEST(IncrementalDetokenizerTest, AsciiPassesThrough) {
  IncrementalDetokenizer detok(&Gpt2());
  EXPECT_EQ(detok.Append(kHello), "Hello");
  EXPECT_EQ(detok.Append(kSpaceWorld), " world");
  EXPECT_EQ(detok.pending_bytes(), 0);
  EXPECT_EQ(detok.Flush(), "");
}

TEST(IncrementalDetokenizerTest, SplitEmojiIsHeldBackUntilComplete) {
  // gpt-3-encoder (npm 1.1.4) encodes "🤗" (F0 9F A4 97) as these three
  // tokens; each but the last ends inside the character.
  const std::vector<int32_t> ids = {8582, 97, 245};
  IncrementalDetokenizer detok(&Gpt2());
  EXPECT_EQ(detok.Append(ids[0]), "");
  EXPECT_GT(detok.pending_bytes(), 0);
  EXPECT_EQ(detok.Append(ids[1]), "");
  EXPECT_EQ(detok.Append(ids[2]), "🤗");
  EXPECT_EQ(detok.pending_bytes(), 0);
  EXPECT_EQ(detok.Flush(), "");
}

TEST(IncrementalDetokenizerTest, EveryOutputIsWholeValidCharacters) {
  // "Family: 👨‍👩‍👧‍👦 and 🏳️‍🌈!" as encoded by gpt-3-encoder (npm 1.1.4).
  const std::vector<int32_t> ids = {
      24094, 25,  50169, 101, 447,   235,   41840, 102,   447,
      235,   41840, 100, 447, 235,   41840, 99,    290,   12520,
      237,   111, 37929, 447, 235,   8582,  234,   230,   0};
  const std::string expected = "Family: 👨‍👩‍👧‍👦 and 🏳️‍🌈!";
  IncrementalDetokenizer detok(&Gpt2());
  std::string text;
  int empty_outputs = 0;
  for (int32_t id : ids) {
    const std::string piece = detok.Append(id);
    if (piece.empty()) ++empty_outputs;
    // Each output continues `expected` exactly, with no replacement.
    EXPECT_EQ(expected.compare(text.size(), piece.size(), piece), 0) << id;
    EXPECT_EQ(piece.find(kReplacement), std::string::npos) << id;
    text += piece;
    if (!piece.empty()) {
      const unsigned char last = piece.back();
      EXPECT_TRUE(last < 0x80 || (last & 0xC0) == 0x80) << id;
    }
  }
  EXPECT_GT(empty_outputs, 0);  // Some tokens end mid-character.
  EXPECT_EQ(detok.Flush(), "");
  EXPECT_EQ(text, expected);
}

TEST(IncrementalDetokenizerTest, ConcatenationEqualsDecodedText) {
  const std::string texts[] = {
      "Hello world",
      "Café naïve résumé Zürich Ångström façade",
      "Привет, мир! Съешь ещё этих булок.",
      "Καλημέρα κόσμε, ελληνικά.",
      "你好，世界。日本語のテキスト。한국어",
      "مرحبا بالعالم שלום עולם नमस्ते दुनिया",
      "Family: 👨‍👩‍👧‍👦 and 🏳️‍🌈! 👍🏽 🇺🇸",
      "def add(a, b):\n    return a + b\n",
      "a  b   c\t\td\n\n\ne   ",
  };
  for (const std::string& text : texts) {
    const std::vector<int32_t> ids = Gpt2().Encode(text);
    EXPECT_EQ(Gpt2().Decode(ids), text);
    EXPECT_EQ(Stream(ids), text);
  }
}

TEST(IncrementalDetokenizerTest, LoneInvalidByteBecomesReplacement) {
  IncrementalDetokenizer detok(&Gpt2());
  EXPECT_EQ(detok.Append(kByteFF), kReplacement);
  EXPECT_EQ(detok.pending_bytes(), 0);
  EXPECT_EQ(detok.Append(kByte80), kReplacement);  // Stray continuation.
  EXPECT_EQ(detok.Append(kLetterX), "x");
  EXPECT_EQ(detok.Flush(), "");
}

TEST(IncrementalDetokenizerTest, TruncatedSequenceFollowedByAscii) {
  IncrementalDetokenizer detok(&Gpt2());
  EXPECT_EQ(detok.Append(kBytesE280), "");  // Could still become e.g. "—".
  EXPECT_EQ(detok.pending_bytes(), 2);
  // E2 80 'x' is one maximal invalid subpart plus "x" (Python:
  // b"\xe2\x80x".decode("utf-8", "replace") == "\ufffdx").
  EXPECT_EQ(detok.Append(kLetterX), std::string(kReplacement) + "x");
  EXPECT_EQ(detok.Flush(), "");
}

TEST(IncrementalDetokenizerTest, FlushReplacesHeldBytesOnce) {
  IncrementalDetokenizer detok(&Gpt2());
  EXPECT_EQ(detok.Append(kHello), "Hello");
  EXPECT_EQ(detok.Append(kByteE2), "");
  EXPECT_EQ(detok.Append(kByte80), "");
  EXPECT_EQ(detok.Flush(), kReplacement);
  EXPECT_EQ(detok.pending_bytes(), 0);
  EXPECT_EQ(detok.Flush(), "");
  // Reusable after Flush.
  EXPECT_EQ(detok.Append(kHello), "Hello");
}

TEST(IncrementalDetokenizerTest, MaximalSubparts) {
  // Expected strings follow Unicode's maximal-subpart rule, the behaviour of
  // Python's bytes.decode("utf-8", errors="replace"):
  //   b"\xf0\x80"      -> "\ufffd\ufffd" (F0 must be followed by 90..BF)
  //   b"\xe2\xe2\x80x" -> "\ufffd\ufffdx"
  //   b"\xff\xe2\x80\x94" -> "\ufffd—"
  const std::string r = kReplacement;
  EXPECT_EQ(Stream({kByteF0, kByte80}), r + r);
  EXPECT_EQ(Stream({kByteE2, kBytesE280, kLetterX}), r + r + "x");
  // 0x94 is "Ķ" (id 242) in GPT-2's byte-level alphabet.
  EXPECT_EQ(Stream({kByteFF, kBytesE280, 242}), r + "\xE2\x80\x94");
}

TEST(IncrementalDetokenizerTest, InvalidIdAddsNothing) {
  IncrementalDetokenizer detok(&Gpt2());
  EXPECT_EQ(detok.Append(kByteE2), "");
  EXPECT_EQ(detok.Append(-1), "");
  EXPECT_EQ(detok.Append(1 << 30), "");
  EXPECT_EQ(detok.pending_bytes(), 1);
}

}  // namespace
}  // namespace tandem
