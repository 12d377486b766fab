#include "core/text/plain_chat_template.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/text/tokenizer.h"

namespace tandem {
namespace {

// Each byte is a token; a prompt starts with the BOS 1000 (as Llama 3's
// tokenizer adds <|begin_of_text|> to every input).
class BosTokenizer : public Tokenizer {
 public:
  std::vector<int32_t> Encode(absl::string_view text) const override {
    return std::vector<int32_t>(text.begin(), text.end());
  }
  std::vector<int32_t> EncodePrompt(absl::string_view text) const override {
    std::vector<int32_t> ids = Encode(text);
    ids.insert(ids.begin(), 1000);
    return ids;
  }
  std::string Decode(absl::Span<const int32_t>) const override { return ""; }
  const std::string& TokenBytes(int32_t) const override { return empty_; }
  bool IsValidId(int32_t id) const override { return id >= 0 && id <= 1000; }
  int32_t vocab_size() const override { return 1001; }

 private:
  const std::string empty_;
};

TEST(PlainChatTemplateTest, RendersTurnsAndOpensTheAssistantsReply) {
  const PlainChatTemplate chat;
  const absl::StatusOr<std::string> prompt = chat.Render(
      {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello."}, {"user", "Again"}});
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_EQ(*prompt,
            "System: Be brief.\n\nUser: Hi\n\nAssistant: Hello.\n\nUser: Again\n\nAssistant:");
  EXPECT_THAT(chat.stop_strings(), ::testing::ElementsAre("\nUser:", "\nSystem:"));
}

TEST(PlainChatTemplateTest, AnUnknownRoleIsAnErrorNamingTheMessage) {
  const absl::StatusOr<std::string> prompt =
      PlainChatTemplate().Render({{"user", "Hi"}, {"robot", "beep"}});
  ASSERT_FALSE(prompt.ok());
  EXPECT_THAT(std::string(prompt.status().message()), ::testing::HasSubstr("messages[1].role"));
}

TEST(PlainChatTemplateTest, ThePromptGetsTheTokenizersBosAsACompletionPromptDoes) {
  const PlainChatTemplate chat;
  EXPECT_FALSE(chat.renders_special_tokens());
  const absl::StatusOr<std::vector<int32_t>> ids =
      chat.RenderTokenIds({{"user", "Hi"}}, BosTokenizer());
  ASSERT_TRUE(ids.ok()) << ids.status();
  const std::string text = "User: Hi\n\nAssistant:";
  std::vector<int32_t> expected = {1000};
  expected.insert(expected.end(), text.begin(), text.end());
  EXPECT_EQ(*ids, expected);
  EXPECT_FALSE(chat.RenderTokenIds({{"robot", "beep"}}, BosTokenizer()).ok());
}

}  // namespace
}  // namespace tandem
