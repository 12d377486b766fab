#include "core/text/plain_chat_template.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tandem {
namespace {

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

}  // namespace
}  // namespace tandem
