// The load generator's statistics on hand-made timelines, against values
// worked out by hand (and numpy's percentile convention).
#include "client/loadgen/request_record.h"

#include <cmath>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tandem {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;

RequestRecord Record(double start, std::vector<double> tokens, double end, bool ok = true) {
  RequestRecord r;
  r.start = start;
  r.token_times = std::move(tokens);
  r.end = end;
  r.ok = ok;
  return r;
}

TEST(RequestRecordTest, TtftTpotAndItlFollowVllmsDefinitions) {
  const RequestRecord r = Record(0, {0.1, 0.15, 0.25}, 0.3);
  EXPECT_DOUBLE_EQ(*TimeToFirstToken(r), 0.1);
  EXPECT_DOUBLE_EQ(*TimePerOutputToken(r), (0.3 - 0.1) / 2);  // (E2E - TTFT) / (n - 1)
  EXPECT_THAT(InterTokenLatencies(r), ElementsAre(DoubleNear(0.05, 1e-12), DoubleNear(0.1, 1e-12)));
  const RequestRecord one = Record(0, {0.2}, 0.2);
  EXPECT_FALSE(TimePerOutputToken(one).has_value());
  EXPECT_TRUE(InterTokenLatencies(one).empty());
  EXPECT_FALSE(TimeToFirstToken(Record(0, {}, 0.1)).has_value());
}

TEST(RequestRecordTest, PercentilesInterpolateLikeNumpy) {
  const std::vector<double> v = {4, 1, 3, 2};  // unsorted on purpose
  EXPECT_DOUBLE_EQ(Percentile(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(Percentile(v, 90), 3.7);  // numpy.percentile([1,2,3,4], 90)
  EXPECT_DOUBLE_EQ(Percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(Percentile(v, 100), 4);
  EXPECT_TRUE(std::isnan(Percentile({}, 50)));
  const Distribution d = Describe(v);
  EXPECT_DOUBLE_EQ(d.mean, 2.5);
  EXPECT_DOUBLE_EQ(d.max, 4);
  EXPECT_EQ(d.count, 4);
}

TEST(RequestRecordTest, SummaryCountsThroughputAndGoodput) {
  const std::vector<RequestRecord> records = {
      Record(0, {0.1, 0.15, 0.25}, 0.3),  // TTFT 100 ms, TPOT 100 ms
      Record(0.5, {0.2}, 0.2),            // TTFT 200 ms, ends at 0.7
      Record(1.0, {}, 0.1, /*ok=*/false),  // failed, ends at 1.1
  };
  Slo slo;
  std::string error;
  ASSERT_TRUE(ParseSlo("ttft:150", &slo, &error)) << error;
  RunSummary s = Summarize(records, slo);
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.output_tokens, 4);
  EXPECT_DOUBLE_EQ(s.duration_seconds, 1.1);
  EXPECT_DOUBLE_EQ(s.requests_per_second, 2 / 1.1);
  EXPECT_DOUBLE_EQ(s.output_tokens_per_second, 4 / 1.1);
  EXPECT_DOUBLE_EQ(s.goodput_requests_per_second, 1 / 1.1);  // only the first meets 150 ms
  EXPECT_DOUBLE_EQ(s.ttft.p50, 0.15);
  EXPECT_DOUBLE_EQ(s.ttft.p90, 0.19);
  EXPECT_EQ(s.tpot.count, 1);
  EXPECT_EQ(s.itl.count, 2);
  EXPECT_DOUBLE_EQ(s.e2e.max, 0.3);
  // A TPOT bound the first request misses: no request is good.
  ASSERT_TRUE(ParseSlo("ttft:150,tpot:50", &slo, &error));
  EXPECT_DOUBLE_EQ(Summarize(records, slo).goodput_requests_per_second, 0);
}

TEST(RequestRecordTest, SloParsing) {
  Slo slo;
  std::string error;
  ASSERT_TRUE(ParseSlo("tpot:20", &slo, &error));
  EXPECT_FALSE(slo.ttft_seconds.has_value());
  EXPECT_DOUBLE_EQ(*slo.tpot_seconds, 0.02);
  EXPECT_FALSE(ParseSlo("ttft", &slo, &error));
  EXPECT_FALSE(ParseSlo("latency:5", &slo, &error));
  EXPECT_FALSE(ParseSlo("ttft:-1", &slo, &error));
  EXPECT_FALSE(ParseSlo("ttft:nan", &slo, &error));
  EXPECT_FALSE(ParseSlo("tpot:inf", &slo, &error));
}

}  // namespace
}  // namespace tandem
