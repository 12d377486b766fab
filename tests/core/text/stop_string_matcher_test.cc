#include "core/text/stop_string_matcher.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(StopStringMatcherTest, WithoutStopStringsEverythingIsReleased) {
  StopStringMatcher matcher({});
  EXPECT_EQ(matcher.Append("abc").releasable, "abc");
  EXPECT_EQ(matcher.Flush(), "");
}

TEST(StopStringMatcherTest, HoldsBackAPossiblePrefixAcrossChunks) {
  StopStringMatcher matcher({"END"});
  StopStringMatcher::Result r = matcher.Append("the E");
  EXPECT_EQ(r.releasable, "the ");
  EXPECT_FALSE(r.matched);
  r = matcher.Append("N");
  EXPECT_EQ(r.releasable, "");
  r = matcher.Append("D and more");
  EXPECT_TRUE(r.matched);
  EXPECT_EQ(r.stop, "END");
  EXPECT_EQ(r.releasable, "");
  EXPECT_EQ(matcher.Flush(), "");
}

TEST(StopStringMatcherTest, ReleasesHeldTextWhenThePrefixBreaks) {
  StopStringMatcher matcher({"END"});
  EXPECT_EQ(matcher.Append("xE").releasable, "x");
  EXPECT_EQ(matcher.Append("Nx").releasable, "ENx");
  EXPECT_EQ(matcher.Append("EN").releasable, "");
  EXPECT_EQ(matcher.Flush(), "EN");
}

TEST(StopStringMatcherTest, EarliestMatchWinsAndTextBeforeItIsKept) {
  StopStringMatcher matcher({"world", "lo w"});
  StopStringMatcher::Result r = matcher.Append("hello world");
  EXPECT_TRUE(r.matched);
  EXPECT_EQ(r.stop, "lo w");
  EXPECT_EQ(r.releasable, "hel");
}

TEST(StopStringMatcherTest, NothingAfterAMatch) {
  StopStringMatcher matcher({"\n"});
  EXPECT_TRUE(matcher.Append("a\nb").matched);
  EXPECT_EQ(matcher.Append("more").releasable, "");
  EXPECT_EQ(matcher.Flush(), "");
}

TEST(StopStringMatcherTest, MultiByteStopString) {
  StopStringMatcher matcher({"日本"});
  EXPECT_EQ(matcher.Append("こんにちは日").releasable, "こんにちは");
  StopStringMatcher::Result r = matcher.Append("本語");
  EXPECT_TRUE(r.matched);
  EXPECT_EQ(r.releasable, "");
}

}  // namespace
}  // namespace tandem
