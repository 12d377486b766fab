#include "core/text/gpt2_tokenizer.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#ifndef TANDEM_TEST_GPT2_DIR
#error "TANDEM_TEST_GPT2_DIR must name the GPT-2 vocab.json/merges.txt dir"
#endif

namespace tandem {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

const std::string kGpt2Dir = TANDEM_TEST_GPT2_DIR;

// The real GPT-2 tokenizer, loaded once and shared by the tests (it is
// immutable and thread-safe).
const Gpt2Tokenizer& Gpt2() {
  static const Gpt2Tokenizer* const tokenizer = [] {
    absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> tok =
        Gpt2Tokenizer::FromFiles(kGpt2Dir + "/vocab.json",
                                 kGpt2Dir + "/merges.txt");
    if (!tok.ok()) {
      ADD_FAILURE() << tok.status();
      std::abort();
    }
    return tok->release();
  }();
  return *tokenizer;
}

struct Case {
  const char* name;
  std::string text;
  std::vector<int32_t> ids;
};

// Expected ids come from the reference JavaScript encoder, npm gpt-3-encoder
// 1.1.4 (a port of OpenAI's encoder.py), run as
//   node -e "const {encode}=require('gpt-3-encoder');
//            console.log(JSON.stringify(encode(TEXT)))"
// and pasted here; "Hello world" and " Hello" are also well-known GPT-2 ids.
const std::vector<Case>& ReferenceCases() {
  static const auto* const cases = new std::vector<Case>{
      {"hello", "Hello world", {15496, 995}},
      {"hello_space", " Hello", {18435}},
      {"english",
       "The quick brown fox jumps over the lazy dog.",
       {464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13}},
      {"contractions",
       "I'm sure they'll say it's what we've done, and you're right; he'd "
       "agree. Don't!",
       {40,  1101, 1654, 484, 1183, 910, 340, 338,  644,  356, 1053, 1760, 11,
        290, 345,  821,  826, 26,   339, 1549, 4236, 13, 2094, 470,  0}},
      {"numbers",
       "In 2024, 3.14159 and 1,000,000 plus 42 items cost $19.99.",
       {818, 48609, 11,   513, 13,   1415, 19707, 290,  352, 11, 830,
        11,  830,   5556, 5433, 3709, 1575, 720,   1129, 13, 2079, 13}},
      {"code",
       "def add(a, b):\n    if a:\n        return a + b\n    return b\n",
       {4299, 751, 7,   64,  11,   275, 2599, 198, 220, 220, 220,
        611,  257, 25,  198, 220,  220, 220,  220, 220, 220, 220,
        1441, 257, 1343, 275, 198, 220, 220,  220, 1441, 275, 198}},
      {"whitespace",
       "a  b   c\t\td\n\n\ne   ",
       {64, 220, 275, 220, 220, 269, 197, 197, 67, 628, 198, 68, 220, 220,
        220}},
      {"whitespace2",
       "line one\n\n  \tindented\t \nend  \n",
       {1370, 530, 628, 220, 220, 197, 521, 4714, 197, 220, 198, 437, 220, 220,
        198}},
      {"trailing_spaces",
       "trailing spaces   ",
       {9535, 4386, 9029, 220, 220, 220}},
      {"unicode_spaces",
       "a\u00a0b\u3000 c\u2003\u2003d",
       {64, 1849, 65, 5099, 222, 269, 447, 225, 447, 225, 67}},
      {"accented",
       "Café naïve résumé Zürich Ångström façade",
       {34,    1878, 2634, 41492, 40560, 16345, 2634, 1168,  9116, 7527,
        6184,  227,  782,  2536,  9101,  76,    24685, 16175, 671}},
      {"cyrillic",
       "Привет, мир! Съешь ещё этих булок.",
       {140,   253,   21169, 18849, 38857, 16843, 20375, 11,  12466, 120,
        18849, 21169, 0,     12466, 94,    141,   232,   16843, 141, 230,
        45367, 12466, 113,   141,   231,   141,   239,   220,   141, 235,
        20375, 18849, 141,   227,   12466, 109,   35072, 30143, 25443, 118,
        13}},
      {"greek",
       "Καλημέρα κόσμε, ελληνικά.",
       {138,   248,   17394, 39377, 138, 115,   34703, 138,   255,
        33643, 17394, 7377,  118,   139, 234,   38392, 34703, 30950,
        11,    7377,  113,   39377, 39377, 138, 115, 26180, 29945,
        43000, 138,   105,   13}},
      {"cjk",
       "你好，世界。日本語のテキスト。한국어",
       {19526, 254,   25001, 121,   171,   120,   234, 10310,
        244,   45911, 234,   16764, 33768, 98,    17312, 105,
        45739, 252,   5641,  24336, 25084, 43302, 16764, 47991,
        250,   166,   113,   255,   168,   244,   112}},
      {"emoji_zwj",
       "Family: 👨‍👩‍👧‍👦 and 🏳️‍🌈!",
       {24094, 25,  50169, 101, 447,   235,   41840, 102,   447,
        235,   41840, 100, 447, 235,   41840, 99,    290,   12520,
        237,   111, 37929, 447, 235,   8582,  234,   230,   0}},
      {"emoji", "🤗", {8582, 97, 245}},
  };
  return *cases;
}

TEST(Gpt2TokenizerTest, LoadsRealVocab) {
  const Gpt2Tokenizer& tok = Gpt2();
  EXPECT_EQ(tok.vocab_size(), 50257);
  EXPECT_EQ(tok.end_of_text_id(), 50256);
  EXPECT_TRUE(tok.IsValidId(0));
  EXPECT_TRUE(tok.IsValidId(50256));
  EXPECT_FALSE(tok.IsValidId(50257));
  EXPECT_FALSE(tok.IsValidId(-1));
}

TEST(Gpt2TokenizerTest, TokenBytesAreRawBytes) {
  const Gpt2Tokenizer& tok = Gpt2();
  EXPECT_EQ(tok.TokenBytes(15496), "Hello");
  EXPECT_EQ(tok.TokenBytes(18435), " Hello");  // "ĠHello" in vocab.json.
  EXPECT_EQ(tok.TokenBytes(198), "\n");         // "Ċ".
  EXPECT_EQ(tok.TokenBytes(187), "\xFF");       // "ÿ" (byte 0xFF).
  EXPECT_EQ(tok.TokenBytes(447), "\xE2\x80");   // "âĢ".
  EXPECT_EQ(tok.TokenBytes(50256), "<|endoftext|>");
  EXPECT_EQ(tok.TokenBytes(50257), "");  // Invalid id.
}

TEST(Gpt2TokenizerTest, MatchesReferenceEncoder) {
  const Gpt2Tokenizer& tok = Gpt2();
  for (const Case& c : ReferenceCases()) {
    EXPECT_THAT(tok.Encode(c.text), ElementsAreArray(c.ids)) << c.name;
  }
}

TEST(Gpt2TokenizerTest, DecodeOfReferenceIdsIsText) {
  const Gpt2Tokenizer& tok = Gpt2();
  for (const Case& c : ReferenceCases()) {
    EXPECT_EQ(tok.Decode(c.ids), c.text) << c.name;
  }
}

TEST(Gpt2TokenizerTest, RoundTrip) {
  const Gpt2Tokenizer& tok = Gpt2();
  std::string all;
  for (const Case& c : ReferenceCases()) {
    EXPECT_EQ(tok.Decode(tok.Encode(c.text)), c.text) << c.name;
    absl::StrAppend(&all, c.text, "\n");
  }
  EXPECT_EQ(tok.Decode(tok.Encode(all)), all);
  const std::string more[] = {
      "",
      " ",
      "\n",
      "   \n\t  \r\n",
      "مرحبا بالعالم",
      "שלום עולם",
      "नमस्ते दुनिया",
      "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o",
      "x<|endoftext|>y<|endoftext|><|endoftext|>",
      // Not UTF-8: byte-level BPE still round-trips it.
      "ab\xFF\xFE" "cd \xE2\x82 \xC3",
  };
  for (const std::string& text : more) {
    EXPECT_EQ(tok.Decode(tok.Encode(text)), text);
  }
}

TEST(Gpt2TokenizerTest, EndOfTextBecomesSpecialId) {
  const Gpt2Tokenizer& tok = Gpt2();
  EXPECT_THAT(tok.Encode("<|endoftext|>"), ElementsAreArray({50256}));
  // "Hello" -> 15496 and "world" -> 6894 from gpt-3-encoder; the special token
  // splits the text as in Hugging Face.
  EXPECT_THAT(tok.Encode("Hello<|endoftext|>world"),
              ElementsAreArray({15496, 50256, 6894}));
  EXPECT_THAT(tok.Encode("<|endoftext|><|endoftext|>"),
              ElementsAreArray({50256, 50256}));
}

TEST(Gpt2TokenizerTest, UnicodeWhitespaceFollowsPythonReference) {
  // \s is Unicode White_Space, which includes U+0085 (NEL). Expected ids from
  // OpenAI's gpt-2 encoder.py algorithm run with Python's `regex` module;
  // gpt-3-encoder gives [64, 220, 1587, 227, 65] here because JavaScript's
  // \s lacks U+0085.
  EXPECT_THAT(Gpt2().Encode("a  \u0085b"),
              ElementsAreArray({64, 220, 220, 126, 227, 65}));
}

TEST(Gpt2TokenizerTest, DecodeSkipsInvalidIds) {
  EXPECT_EQ(Gpt2().Decode({15496, -5, 99999999, 995}), "Hello world");
  EXPECT_EQ(Gpt2().Decode({}), "");
}

TEST(Gpt2TokenizerTest, LongInputs) {
  const Gpt2Tokenizer& tok = Gpt2();
  const std::string spaces(100000, ' ');
  const std::vector<int32_t> ids = tok.Encode(spaces);
  EXPECT_EQ(tok.Decode(ids), spaces);
  std::string mixed;
  while (mixed.size() < (1 << 20)) {
    for (const Case& c : ReferenceCases()) absl::StrAppend(&mixed, c.text, " ");
  }
  EXPECT_EQ(tok.Decode(tok.Encode(mixed)), mixed);
  const std::string word(200000, 'a');
  EXPECT_EQ(tok.Decode(tok.Encode(word)), word);
}

TEST(Gpt2TokenizerTest, ConcurrentEncodeAgrees) {
  const Gpt2Tokenizer& tok = Gpt2();
  std::string text;
  for (const Case& c : ReferenceCases()) absl::StrAppend(&text, c.text, " ");
  const std::vector<int32_t> expected = tok.Encode(text);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        if (tok.Encode(text) != expected) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

// ---------------------------------------------------------------------------
// Loader tests on small inline vocabularies.

// GPT-2's bytes_to_unicode(): printable bytes stand for themselves, the rest
// map to U+0100 onwards in byte order. Returns the JSON members giving every
// byte symbol its byte value as id.
std::string ByteSymbolsJson() {
  std::string json;
  int next = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable =
        (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    const int cp = printable ? b : 0x100 + next++;
    char escaped[16];
    std::snprintf(escaped, sizeof(escaped), "\\u%04x", cp);
    absl::StrAppend(&json, b == 0 ? "" : ",", "\"", escaped, "\":", b);
  }
  return json;
}

std::string SmallVocab(const std::string& extra_members = "") {
  return absl::StrCat("{", ByteSymbolsJson(), extra_members, "}");
}

TEST(Gpt2TokenizerLoaderTest, SmallVocabMergesByRank) {
  // "b c" outranks "a b", so "abc" becomes a + bc, then abc via "a bc".
  absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> tok =
      Gpt2Tokenizer::FromStrings(
          SmallVocab(R"(,"ab":256,"bc":257,"abc":258,"\u0120a":259)"),
          "#version: 0.2\nb c\na b\na bc\n\u0120 a\n");
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->vocab_size(), 260);
  EXPECT_EQ((*tok)->end_of_text_id(), -1);
  EXPECT_THAT((*tok)->Encode("abc"), ElementsAreArray({258}));
  // Byte symbols have their byte value as id: 'd' is 100.
  EXPECT_THAT((*tok)->Encode("abd"), ElementsAreArray({256, 100}));
  EXPECT_THAT((*tok)->Encode("bcab a"), ElementsAreArray({257, 256, 259}));
  // Without the special token in the vocab the text is ordinary.
  EXPECT_EQ((*tok)->Decode((*tok)->Encode("<|endoftext|>")), "<|endoftext|>");
  EXPECT_EQ((*tok)->TokenBytes(259), " a");
}

TEST(Gpt2TokenizerLoaderTest, VersionLineOptionalAndCrlfAccepted) {
  absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> tok =
      Gpt2Tokenizer::FromStrings(SmallVocab(R"(,"ab":256)"), "a b\r\n");
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_THAT((*tok)->Encode("ab"), ElementsAreArray({256}));
}

TEST(Gpt2TokenizerLoaderTest, SpecialTokenInSmallVocab) {
  absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> tok =
      Gpt2Tokenizer::FromStrings(SmallVocab(R"(,"<|endoftext|>":300)"), "");
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->end_of_text_id(), 300);
  EXPECT_EQ((*tok)->vocab_size(), 301);
  EXPECT_FALSE((*tok)->IsValidId(256));  // A hole in the ids.
  // 97 is the byte symbol 'a'.
  EXPECT_THAT((*tok)->Encode("a<|endoftext|>"), ElementsAreArray({97, 300}));
}

void ExpectError(const absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>>& tok,
                 absl::StatusCode code, const std::string& text1,
                 const std::string& text2 = "") {
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), code) << tok.status();
  EXPECT_THAT(std::string(tok.status().message()), HasSubstr(text1));
  EXPECT_THAT(std::string(tok.status().message()), HasSubstr(text2));
}

TEST(Gpt2TokenizerLoaderTest, MalformedJson) {
  ExpectError(Gpt2Tokenizer::FromStrings("{\"a\": 0,\n \"b\": }", ""),
              absl::StatusCode::kInvalidArgument, "vocab.json", "line 2");
  ExpectError(Gpt2Tokenizer::FromStrings("", ""),
              absl::StatusCode::kInvalidArgument, "vocab.json");
  ExpectError(Gpt2Tokenizer::FromStrings(SmallVocab() + "x", ""),
              absl::StatusCode::kInvalidArgument, "vocab.json");
}

TEST(Gpt2TokenizerLoaderTest, BadVocabShape) {
  ExpectError(Gpt2Tokenizer::FromStrings("[1, 2]", ""),
              absl::StatusCode::kInvalidArgument, "vocab.json", "object");
  ExpectError(Gpt2Tokenizer::FromStrings(SmallVocab(R"(,"ab":"x")"), ""),
              absl::StatusCode::kInvalidArgument, "vocab.json", "\"ab\"");
  ExpectError(Gpt2Tokenizer::FromStrings(SmallVocab(R"(,"ab":-1)"), ""),
              absl::StatusCode::kInvalidArgument, "\"ab\"", "negative");
  ExpectError(Gpt2Tokenizer::FromStrings(SmallVocab(R"(,"ab":1.5)"), ""),
              absl::StatusCode::kInvalidArgument, "\"ab\"");
  ExpectError(Gpt2Tokenizer::FromStrings(SmallVocab(R"(,"ab":5)"), ""),
              absl::StatusCode::kInvalidArgument, "id 5");
  // Lacks most byte symbols.
  ExpectError(Gpt2Tokenizer::FromStrings(R"({"a": 0})", ""),
              absl::StatusCode::kInvalidArgument, "vocab.json", "byte");
}

TEST(Gpt2TokenizerLoaderTest, BadMergeLines) {
  const std::string vocab = SmallVocab(R"(,"ab":256)");
  ExpectError(Gpt2Tokenizer::FromStrings(vocab, "#version: 0.2\na b\na b c\n"),
              absl::StatusCode::kInvalidArgument, "merges.txt:3",
              "two symbols");
  ExpectError(Gpt2Tokenizer::FromStrings(vocab, "ab\n"),
              absl::StatusCode::kInvalidArgument, "merges.txt:1",
              "two symbols");
  ExpectError(Gpt2Tokenizer::FromStrings(vocab, "a b\nab c\n"),
              absl::StatusCode::kInvalidArgument, "merges.txt:2",
              "merged symbol");
  ExpectError(Gpt2Tokenizer::FromStrings(vocab, "xy z\n"),
              absl::StatusCode::kInvalidArgument, "merges.txt:1",
              "left symbol");
  ExpectError(Gpt2Tokenizer::FromStrings(vocab, "a xy\n"),
              absl::StatusCode::kInvalidArgument, "merges.txt:1",
              "right symbol");
}

TEST(Gpt2TokenizerLoaderTest, MissingFile) {
  const std::string missing = testing::TempDir() + "/no_such_vocab.json";
  ExpectError(Gpt2Tokenizer::FromFiles(missing, kGpt2Dir + "/merges.txt"),
              absl::StatusCode::kNotFound, missing);
  const std::string missing_merges = testing::TempDir() + "/no_such.txt";
  ExpectError(
      Gpt2Tokenizer::FromFiles(kGpt2Dir + "/vocab.json", missing_merges),
      absl::StatusCode::kNotFound, missing_merges);
}

TEST(Gpt2TokenizerLoaderTest, UnreadableFile) {
  // A directory opens but cannot be read.
  ExpectError(Gpt2Tokenizer::FromFiles(kGpt2Dir, kGpt2Dir + "/merges.txt"),
              absl::StatusCode::kInvalidArgument, kGpt2Dir);
}

TEST(Gpt2TokenizerLoaderTest, FileErrorsNameThePath) {
  const std::string merges = testing::TempDir() + "/tandem_bad_merges.txt";
  std::FILE* f = std::fopen(merges.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("#version: 0.2\n\u0120 t\noops\n", f);
  std::fclose(f);
  ExpectError(Gpt2Tokenizer::FromFiles(kGpt2Dir + "/vocab.json", merges),
              absl::StatusCode::kInvalidArgument, merges + ":3");
  std::remove(merges.c_str());
}

}  // namespace
}  // namespace tandem
