#include "core/engine/request_validator.h"

#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/core/recording_sink.h"

namespace tandem {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class RequestValidatorTest : public ::testing::Test {
 protected:
  RequestValidatorTest() {
    limits_.vocab_size = 100;
    limits_.max_context = 16;
    request_.prompt_token_ids = {1, 2, 3};
    request_.sink = std::make_shared<RecordingSink>();
  }
  absl::Status Validate() { return ValidateRequest(limits_, &request_); }

  RequestLimits limits_;
  GenerationRequest request_;
};

TEST_F(RequestValidatorTest, AcceptsAndResolvesDefaults) {
  request_.sampling.top_p = 0;
  ASSERT_TRUE(Validate().ok());
  EXPECT_EQ(request_.stopping.max_tokens, 13);
  EXPECT_EQ(request_.sampling.top_p, 1.0f);
}

TEST_F(RequestValidatorTest, RejectsEmptyPrompt) {
  request_.prompt_token_ids.clear();
  EXPECT_THAT(Validate().message(), HasSubstr("empty"));
  EXPECT_EQ(Validate().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RequestValidatorTest, RejectsPromptThatFillsTheContext) {
  request_.prompt_token_ids.assign(16, 1);
  EXPECT_EQ(Validate().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Validate().message(), HasSubstr("16 tokens"));
}

TEST_F(RequestValidatorTest, RejectsMaxTokensBeyondContext) {
  request_.stopping.max_tokens = 14;
  EXPECT_THAT(Validate().message(), HasSubstr("at most 13"));
  request_.stopping.max_tokens = 13;
  EXPECT_TRUE(Validate().ok());
  request_.stopping.max_tokens = -1;
  EXPECT_EQ(Validate().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RequestValidatorTest, RejectsIdsOutsideTheVocabulary) {
  request_.prompt_token_ids = {1, 100};
  EXPECT_THAT(Validate().message(), HasSubstr("prompt_token_ids[1] = 100"));
  request_.prompt_token_ids = {-1};
  EXPECT_EQ(Validate().code(), absl::StatusCode::kInvalidArgument);
  request_.prompt_token_ids = {1};
  request_.stopping.stop_token_ids = {100};
  EXPECT_THAT(Validate().message(), HasSubstr("stop_token_ids"));
}

TEST_F(RequestValidatorTest, RejectsBadSamplingParameters) {
  request_.sampling.temperature = -0.5f;
  EXPECT_THAT(Validate().message(), HasSubstr("temperature"));
  request_.sampling.temperature = 1.0f;
  request_.sampling.top_p = 1.5f;
  EXPECT_THAT(Validate().message(), HasSubstr("top_p"));
  request_.sampling.top_p = -0.1f;
  EXPECT_THAT(Validate().message(), HasSubstr("top_p"));
  request_.sampling.top_p = 0.9f;
  request_.sampling.top_k = -1;
  EXPECT_THAT(Validate().message(), HasSubstr("top_k"));
  request_.sampling.top_k = 0;
  request_.sampling.min_p = 2;
  EXPECT_THAT(Validate().message(), HasSubstr("min_p"));
}

// Front ends name their own field for the one an error is about.
TEST_F(RequestValidatorTest, ErrorsNameTheirField) {
  request_.stopping.max_tokens = -1;
  EXPECT_EQ(InvalidField(Validate()), "max_tokens");
  request_.stopping.max_tokens = 1;
  request_.stopping.stop_strings = {""};
  EXPECT_EQ(InvalidField(Validate()), "stop_strings");
  request_.stopping.stop_strings.clear();
  request_.stopping.stop_token_ids = {100};
  EXPECT_EQ(InvalidField(Validate()), "stop_token_ids");
  request_.stopping.stop_token_ids.clear();
  request_.sampling.temperature = -1;
  EXPECT_EQ(InvalidField(Validate()), "temperature");
  request_.sampling.temperature = 0;
  request_.sampling.top_k = -1;
  EXPECT_EQ(InvalidField(Validate()), "top_k");
  request_.sampling.top_k = 0;
  request_.sampling.top_p = 2;
  EXPECT_EQ(InvalidField(Validate()), "top_p");
  request_.sampling.top_p = 1;
  request_.sampling.min_p = 2;
  EXPECT_EQ(InvalidField(Validate()), "min_p");
  request_.sampling.min_p = 0;
  // The OpenAI front end renames the field where the message leads with it.
  request_.stopping.max_tokens = 1000;
  EXPECT_THAT(std::string(Validate().message()), StartsWith("max_tokens = 1000 "));
  request_.stopping.max_tokens = 1;
  request_.prompt_token_ids = {1, 100};
  EXPECT_EQ(InvalidField(Validate()), "prompt");
  EXPECT_THAT(std::string(Validate().message()), StartsWith("prompt_token_ids[1] = 100 "));
  request_.prompt_token_ids.clear();
  EXPECT_EQ(InvalidField(Validate()), "prompt");
  EXPECT_EQ(InvalidField(absl::InvalidArgumentError("x")), "");
}

TEST_F(RequestValidatorTest, RejectsBadStopStrings) {
  request_.stopping.stop_strings = {""};
  EXPECT_THAT(Validate().message(), HasSubstr("empty"));
  request_.stopping.stop_strings.assign(33, "x");
  EXPECT_THAT(Validate().message(), HasSubstr("at most 32"));
}

}  // namespace
}  // namespace tandem
