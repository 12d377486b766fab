// Tests for the Prometheus client library in server/metrics/.

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "server/metrics/buckets.h"
#include "server/metrics/builder.h"
#include "server/metrics/counter.h"
#include "server/metrics/family.h"
#include "server/metrics/gauge.h"
#include "server/metrics/histogram.h"
#include "server/metrics/name_validation.h"
#include "server/metrics/registry.h"
#include "server/metrics/text_serializer.h"

// Counts heap allocations per thread so tests can assert that the hot path
// does not allocate. Replaces the global operator new/delete of the test
// binary (the sized/array/nothrow variants forward to these in libstdc++).
namespace {
thread_local std::int64_t allocations_on_this_thread = 0;
}  // namespace

// noinline (here and below) keeps GCC's -Wmismatched-new-delete from
// flagging the correct malloc/free pairing once these are inlined.
__attribute__((noinline)) void* operator new(std::size_t size) {
  ++allocations_on_this_thread;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

__attribute__((noinline)) void operator delete(void* p) noexcept {
  std::free(p);
}
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace tandem {
namespace metrics {
namespace {

TEST(CounterTest, StartsAtZeroAndIncrements) {
  Counter counter;
  EXPECT_EQ(counter.Value(), 0.0);
  counter.Increment();
  counter.Increment(2.5);
  EXPECT_EQ(counter.Value(), 3.5);
  EXPECT_EQ(counter.Collect().counter.value, 3.5);
}

TEST(CounterTest, IgnoresNegativeAndNanIncrements) {
  Counter counter;
  counter.Increment(5);
  counter.Increment(-1);
  counter.Increment(std::nan(""));
  EXPECT_EQ(counter.Value(), 5.0);
}

TEST(GaugeTest, IncrementDecrementSet) {
  Gauge gauge;
  EXPECT_EQ(gauge.Value(), 0.0);
  gauge.Increment();
  gauge.Increment(4);
  gauge.Decrement();
  gauge.Decrement(0.5);
  EXPECT_EQ(gauge.Value(), 3.5);
  gauge.Set(-7.25);
  EXPECT_EQ(gauge.Value(), -7.25);
  EXPECT_EQ(gauge.Collect().gauge.value, -7.25);
  EXPECT_EQ(Gauge(42).Value(), 42.0);
}

TEST(GaugeTest, SetToCurrentTime) {
  Gauge gauge;
  gauge.SetToCurrentTime();
  // 2020-01-01 < now < 2100-01-01.
  EXPECT_GT(gauge.Value(), 1577836800.0);
  EXPECT_LT(gauge.Value(), 4102444800.0);
}

TEST(HistogramTest, UpperBoundIsInclusive) {
  Histogram histogram({1, 2, 5});
  histogram.Observe(0.5);  // le=1
  histogram.Observe(1);    // exactly on a bound: le=1
  histogram.Observe(2);    // le=2
  histogram.Observe(4.9);  // le=5
  histogram.Observe(5);    // le=5
  histogram.Observe(5.1);  // +Inf only
  histogram.Observe(-3);   // le=1 (everything up to 1)
  ClientMetric::Histogram h = histogram.Collect().histogram;
  ASSERT_EQ(h.bucket.size(), 3u);
  EXPECT_EQ(h.bucket[0].upper_bound, 1);
  EXPECT_EQ(h.bucket[0].cumulative_count, 3u);
  EXPECT_EQ(h.bucket[1].upper_bound, 2);
  EXPECT_EQ(h.bucket[1].cumulative_count, 4u);
  EXPECT_EQ(h.bucket[2].upper_bound, 5);
  EXPECT_EQ(h.bucket[2].cumulative_count, 6u);
  EXPECT_EQ(h.sample_count, 7u);
  EXPECT_DOUBLE_EQ(h.sample_sum, 0.5 + 1 + 2 + 4.9 + 5 + 5.1 - 3);
}

TEST(HistogramTest, InfinityAndNanLandInInfBucket) {
  Histogram histogram({1});
  histogram.Observe(INFINITY);
  ClientMetric::Histogram h = histogram.Collect().histogram;
  EXPECT_EQ(h.bucket[0].cumulative_count, 0u);
  EXPECT_EQ(h.sample_count, 1u);
  EXPECT_EQ(h.sample_sum, INFINITY);
  histogram.Observe(std::nan(""));
  h = histogram.Collect().histogram;
  EXPECT_EQ(h.bucket[0].cumulative_count, 0u);
  EXPECT_EQ(h.sample_count, 2u);
  EXPECT_TRUE(std::isnan(h.sample_sum));
}

TEST(HistogramTest, NoBoundsMeansOnlyInf) {
  Histogram histogram({});
  histogram.Observe(1);
  histogram.Observe(2);
  ClientMetric::Histogram h = histogram.Collect().histogram;
  EXPECT_TRUE(h.bucket.empty());
  EXPECT_EQ(h.sample_count, 2u);
  EXPECT_EQ(h.sample_sum, 3);
}

TEST(BucketsTest, Generators) {
  EXPECT_EQ(ExponentialBuckets(1, 2, 4), (std::vector<double>{1, 2, 4, 8}));
  EXPECT_EQ(ExponentialBuckets(0.001, 10, 3).size(), 3u);
  EXPECT_EQ(LinearBuckets(0, 5, 3), (std::vector<double>{0, 5, 10}));
  EXPECT_EQ(LinearBuckets(-1, 0.5, 3), (std::vector<double>{-1, -0.5, 0}));
  EXPECT_TRUE(ExponentialBuckets(1, 2, 0).empty());
  EXPECT_TRUE(LinearBuckets(1, 2, -3).empty());
  EXPECT_TRUE(ValidateBucketBoundaries(DefaultBuckets()).ok());
  EXPECT_TRUE(ValidateBucketBoundaries(ExponentialBuckets(1e-4, 2, 40)).ok());
  EXPECT_TRUE(ValidateBucketBoundaries(LinearBuckets(0.1, 0.1, 100)).ok());
}

TEST(BucketsTest, Validation) {
  EXPECT_TRUE(ValidateBucketBoundaries({}).ok());
  EXPECT_TRUE(ValidateBucketBoundaries({-1, 0, 1}).ok());
  EXPECT_EQ(ValidateBucketBoundaries({1, 1}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateBucketBoundaries({2, 1}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateBucketBoundaries({1, INFINITY}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateBucketBoundaries({std::nan(""), 1}).code(),
            absl::StatusCode::kInvalidArgument);
  // Nonsensical generator arguments yield layouts the validator rejects.
  EXPECT_FALSE(ValidateBucketBoundaries(ExponentialBuckets(1, 1, 3)).ok());
  EXPECT_FALSE(ValidateBucketBoundaries(ExponentialBuckets(0, 2, 3)).ok());
  EXPECT_FALSE(ValidateBucketBoundaries(ExponentialBuckets(-1, 2, 3)).ok());
  EXPECT_FALSE(ValidateBucketBoundaries(LinearBuckets(0, 0, 2)).ok());
  EXPECT_FALSE(ValidateBucketBoundaries(LinearBuckets(0, -1, 2)).ok());
}

TEST(NameValidationTest, MetricNames) {
  for (const char* good : {"a", "_", ":", "tandem_requests_total", "job:rate5m",
                           "A9_:z", "__internal"}) {
    EXPECT_TRUE(ValidateMetricName(good).ok()) << good;
  }
  for (const char* bad :
       {"", "9a", "a-b", "a b", "a.b", "caf\xc3\xa9", "a{b}", "a\n"}) {
    absl::Status status = ValidateMetricName(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(NameValidationTest, LabelNames) {
  for (const char* good : {"a", "_", "_x", "code", "A9_z"}) {
    EXPECT_TRUE(ValidateLabelName(good).ok()) << good;
  }
  for (const char* bad : {"", "9a", "a:b", ":", "a-b", "__name__", "__x"}) {
    EXPECT_EQ(ValidateLabelName(bad).code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_TRUE(ValidateLabels({{"a", "any \"value\" \xe2\x82\xac"}}).ok());
  EXPECT_FALSE(ValidateLabels({{"a", "\xff"}}).ok());
  EXPECT_FALSE(ValidateLabels({{"a", "\xc0\x80"}}).ok());  // Overlong.
  EXPECT_FALSE(ValidateLabels({{"a", "\xe2\x82"}}).ok());  // Truncated.
}

TEST(RegistryTest, RejectsBadFamilies) {
  Registry registry;
  absl::StatusOr<Family<Counter>*> bad_name =
      registry.AddCounterFamily("bad-name", "help");
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad_name.status().message(), "bad-name"));

  EXPECT_FALSE(BuildGauge().Name("").Help("x").Register(registry).ok());
  EXPECT_FALSE(BuildGauge()
                   .Name("g")
                   .Help("x")
                   .Labels({{"__reserved", "v"}})
                   .Register(registry)
                   .ok());
  EXPECT_FALSE(registry.AddGaugeFamily("g", "bad utf8 \xff").ok());

  absl::StatusOr<Family<Histogram>*> bad_buckets =
      BuildHistogram().Name("h").Help("x").Buckets({1, 0.5}).Register(registry);
  ASSERT_FALSE(bad_buckets.ok());
  EXPECT_EQ(bad_buckets.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(bad_buckets.status().message(), "strictly increasing"));
  EXPECT_FALSE(registry.AddHistogramFamily("h", "x", {1}, {{"le", "1"}}).ok());
  EXPECT_FALSE(
      registry.AddHistogramFamily("h", "x", ExponentialBuckets(1, 0.5, 3))
          .ok());

  // Nothing half-registered: all these names are still free.
  EXPECT_TRUE(registry.AddGaugeFamily("g", "x").ok());
  EXPECT_TRUE(registry.AddHistogramFamily("h", "x", {1}).ok());
}

TEST(RegistryTest, RejectsDuplicateSeriesNames) {
  Registry registry;
  ASSERT_TRUE(registry.AddCounterFamily("x_total", "x").ok());
  absl::StatusOr<Family<Gauge>*> duplicate =
      registry.AddGaugeFamily("x_total", "x");
  EXPECT_EQ(duplicate.status().code(), absl::StatusCode::kAlreadyExists);

  ASSERT_TRUE(registry.AddHistogramFamily("lat", "x", {1}).ok());
  EXPECT_EQ(registry.AddCounterFamily("lat_count", "x").status().code(),
            absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(registry.AddGaugeFamily("size_sum", "x").ok());
  EXPECT_EQ(registry.AddHistogramFamily("size", "x", {1}).status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(FamilyTest, AddReturnsStableChildPerLabelSet) {
  Registry registry;
  Family<Counter>* family = *registry.AddCounterFamily("c_total", "c");
  Counter& a = family->Add({{"k", "a"}});
  Counter& a_again = family->Add({{"k", "a"}});
  EXPECT_EQ(&a, &a_again);
  Counter& b = family->Add({{"k", "b"}});
  EXPECT_NE(&a, &b);
  EXPECT_TRUE(family->Has({{"k", "a"}}));
  EXPECT_FALSE(family->Has({{"k", "c"}}));
  for (int i = 0; i < 1000; ++i) family->Add({{"k", std::to_string(i)}});
  EXPECT_EQ(&family->Add({{"k", "a"}}), &a);
  a.Increment();
  EXPECT_EQ(family->Add({{"k", "a"}}).Value(), 1);
}

TEST(FamilyTest, GaugeAndHistogramConstructorArguments) {
  Registry registry;
  Family<Gauge>* gauges = *BuildGauge().Name("g").Help("g").Register(registry);
  EXPECT_EQ(gauges->Add({{"k", "v"}}, 7.5).Value(), 7.5);
  // An existing child ignores the arguments.
  EXPECT_EQ(gauges->Add({{"k", "v"}}, 1.0).Value(), 7.5);

  Family<Histogram>* histograms = *BuildHistogram()
                                       .Name("h_seconds")
                                       .Help("h")
                                       .Buckets({1, 2})
                                       .Register(registry);
  EXPECT_EQ(histograms->Add({}).bucket_boundaries(),
            (std::vector<double>{1, 2}));
  EXPECT_EQ(histograms->Add({{"k", "own"}}, Histogram::BucketBoundaries{3, 4})
                .bucket_boundaries(),
            (std::vector<double>{3, 4}));
  Family<Histogram>* defaults =
      *BuildHistogram().Name("d_seconds").Help("d").Register(registry);
  EXPECT_EQ(defaults->Add({}).bucket_boundaries(), DefaultBuckets());
}

TEST(FamilyTest, InvalidChildrenAreRejectedWithoutCrashing) {
  Registry registry;
  Family<Counter>* family =
      *registry.AddCounterFamily("c_total", "c", {{"service", "infer"}});
  for (const Labels& bad : std::vector<Labels>{{{"bad-name", "v"}},
                                               {{"__x", "v"}},
                                               {{"service", "again"}},
                                               {{"k", "\xff"}}}) {
    absl::StatusOr<Counter*> child = family->TryAdd(bad);
    EXPECT_EQ(child.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(child.status().message(), "c_total"));
  }

  // Add() hands out a detached child that is never exported.
  Counter& detached = family->Add({{"bad-name", "v"}});
  detached.Increment();
  EXPECT_EQ(&family->Add({{"__x", "v"}}), &detached);
  EXPECT_EQ(family->rejected_adds(), 2);
  EXPECT_TRUE(registry.Collect().empty());

  Family<Histogram>* histograms = *registry.AddHistogramFamily("h", "h", {1});
  EXPECT_FALSE(histograms->TryAdd({{"le", "1"}}).ok());
  EXPECT_FALSE(
      histograms->TryAdd({{"k", "v"}}, Histogram::BucketBoundaries{2, 1}).ok());
  histograms->Add({{"k", "v"}}, Histogram::BucketBoundaries{2, 1}).Observe(1);
  EXPECT_FALSE(histograms->Has({{"k", "v"}}));
  EXPECT_EQ(histograms->rejected_adds(), 1);
  EXPECT_TRUE(registry.Collect().empty());
}

TEST(TextSerializerTest, SmallRegistryExposition) {
  Registry registry;
  Family<Counter>* requests = *BuildCounter()
                                   .Name("tandem_requests_total")
                                   .Help("Requests served.")
                                   .Labels({{"service", "infer"}})
                                   .Register(registry);
  Family<Gauge>* queue = *BuildGauge()
                              .Name("tandem_queue_depth")
                              .Help("Requests waiting.")
                              .Register(registry);
  Family<Histogram>* latency = *BuildHistogram()
                                    .Name("tandem_latency_seconds")
                                    .Help("Latency.")
                                    .Buckets({0.25, 0.5, 1})
                                    .Register(registry);
  // Families without children are not exported.
  ASSERT_TRUE(registry.AddGaugeFamily("tandem_unused", "Unused.").ok());

  requests->Add({{"code", "UNAVAILABLE"}}).Increment();
  requests->Add({{"code", "OK"}}).Increment(3);
  queue->Add({}).Set(2.5);
  Histogram& m1 = latency->Add({{"model", "m1"}});
  for (double v : {0.25, 0.375, 0.5, 2.0}) m1.Observe(v);

  const std::string expected =
      "# HELP tandem_requests_total Requests served.\n"
      "# TYPE tandem_requests_total counter\n"
      "tandem_requests_total{code=\"OK\",service=\"infer\"} 3\n"
      "tandem_requests_total{code=\"UNAVAILABLE\",service=\"infer\"} 1\n"
      "# HELP tandem_queue_depth Requests waiting.\n"
      "# TYPE tandem_queue_depth gauge\n"
      "tandem_queue_depth 2.5\n"
      "# HELP tandem_latency_seconds Latency.\n"
      "# TYPE tandem_latency_seconds histogram\n"
      "tandem_latency_seconds_bucket{model=\"m1\",le=\"0.25\"} 1\n"
      "tandem_latency_seconds_bucket{model=\"m1\",le=\"0.5\"} 3\n"
      "tandem_latency_seconds_bucket{model=\"m1\",le=\"1\"} 3\n"
      "tandem_latency_seconds_bucket{model=\"m1\",le=\"+Inf\"} 4\n"
      "tandem_latency_seconds_sum{model=\"m1\"} 3.125\n"
      "tandem_latency_seconds_count{model=\"m1\"} 4\n";
  EXPECT_EQ(TextSerializer().Serialize(registry.Collect()), expected);
}

TEST(TextSerializerTest, HistogramWithoutLabels) {
  Registry registry;
  Family<Histogram>* sizes =
      *registry.AddHistogramFamily("size_bytes", "Sizes.", {1024});
  sizes->Add({}).Observe(100);
  EXPECT_EQ(TextSerializer().Serialize(registry.Collect()),
            "# HELP size_bytes Sizes.\n"
            "# TYPE size_bytes histogram\n"
            "size_bytes_bucket{le=\"1024\"} 1\n"
            "size_bytes_bucket{le=\"+Inf\"} 1\n"
            "size_bytes_sum 100\n"
            "size_bytes_count 1\n");
}

TEST(TextSerializerTest, EscapesHelpAndLabelValues) {
  Registry registry;
  Family<Gauge>* family = *registry.AddGaugeFamily(
      "escaped", "Line one\nback\\slash \"quotes\" stay");
  family->Add({{"path", "C:\\dir\\\"x\"\nend"}, {"plain", "caf\xc3\xa9"}})
      .Set(1);
  EXPECT_EQ(
      TextSerializer().Serialize(registry.Collect()),
      "# HELP escaped Line one\\nback\\\\slash \"quotes\" stay\n"
      "# TYPE escaped gauge\n"
      "escaped{path=\"C:\\\\dir\\\\\\\"x\\\"\\nend\",plain=\"caf\xc3\xa9\"}"
      " 1\n");
  EXPECT_EQ(TextSerializer::EscapeHelp("a\\b\nc\"d"), "a\\\\b\\nc\"d");
  EXPECT_EQ(TextSerializer::EscapeLabelValue("a\\b\nc\"d"), "a\\\\b\\nc\\\"d");
}

TEST(TextSerializerTest, FormatsSpecialValues) {
  EXPECT_EQ(TextSerializer::FormatValue(INFINITY), "+Inf");
  EXPECT_EQ(TextSerializer::FormatValue(-INFINITY), "-Inf");
  EXPECT_EQ(TextSerializer::FormatValue(std::nan("")), "NaN");
  EXPECT_EQ(TextSerializer::FormatValue(0), "0");
  EXPECT_EQ(TextSerializer::FormatValue(42), "42");
  EXPECT_EQ(TextSerializer::FormatValue(-0.5), "-0.5");
  EXPECT_EQ(TextSerializer::FormatValue(0.1), "0.1");
  EXPECT_EQ(TextSerializer::FormatValue(1e21), "1e+21");
  EXPECT_EQ(TextSerializer::FormatValue(123456789), "123456789");

  Registry registry;
  Family<Gauge>* gauges = *registry.AddGaugeFamily("special", "s");
  gauges->Add({{"v", "inf"}}).Set(INFINITY);
  gauges->Add({{"v", "nan"}}).Set(std::nan(""));
  gauges->Add({{"v", "ninf"}}).Set(-INFINITY);
  EXPECT_EQ(TextSerializer().Serialize(registry.Collect()),
            "# HELP special s\n"
            "# TYPE special gauge\n"
            "special{v=\"inf\"} +Inf\n"
            "special{v=\"nan\"} NaN\n"
            "special{v=\"ninf\"} -Inf\n");
}

TEST(TextSerializerTest, ValuesRoundTrip) {
  std::vector<double> values = {
      1.0 / 3,
      0.1 + 0.2,
      std::numeric_limits<double>::max(),
      std::numeric_limits<double>::lowest(),
      std::numeric_limits<double>::min(),
      std::numeric_limits<double>::denorm_min(),
      std::numeric_limits<double>::epsilon(),
      9007199254740993.0,
      -0.0,
  };
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::uint64_t> bits;
  while (values.size() < 5000) {
    const std::uint64_t b = bits(rng);
    double d;
    static_assert(sizeof(d) == sizeof(b));
    std::memcpy(&d, &b, sizeof(d));
    if (std::isfinite(d)) values.push_back(d);
  }
  for (double v : values) {
    const std::string text = TextSerializer::FormatValue(v);
    const double parsed = std::strtod(text.c_str(), nullptr);
    EXPECT_EQ(std::memcmp(&parsed, &v, sizeof(v)), 0) << text;
  }
}

TEST(HotPathTest, UpdatesDoNotAllocate) {
  Registry registry;
  Counter& counter = (*registry.AddCounterFamily("c_total", "c"))->Add({});
  Gauge& gauge = (*registry.AddGaugeFamily("g", "g"))->Add({});
  Histogram& histogram =
      (*registry.AddHistogramFamily("h", "h", ExponentialBuckets(1, 2, 20)))
          ->Add({});
  const std::int64_t before = allocations_on_this_thread;
  for (int i = 0; i < 1000; ++i) {
    counter.Increment();
    counter.Increment(2);
    gauge.Set(i);
    gauge.Increment();
    gauge.Decrement(0.5);
    histogram.Observe(i);
  }
  EXPECT_EQ(allocations_on_this_thread, before);
  // Sanity check that the counting hook is live (volatile: not elidable).
  void* volatile probe = ::operator new(16);
  ::operator delete(probe);
  EXPECT_GT(allocations_on_this_thread, before);
}

TEST(ConcurrencyTest, UpdatesDuringScrapesAreExact) {
  constexpr int kThreads = 4;
  constexpr int kIterations = 100000;
  Registry registry;
  Family<Counter>* counters = *registry.AddCounterFamily("ops_total", "Ops.");
  Family<Histogram>* histograms =
      *registry.AddHistogramFamily("value", "Values.", {0.5, 1, 1.5});
  Counter& shared_counter = counters->Add({{"thread", "all"}});
  Histogram& shared_histogram = histograms->Add({});

  std::atomic<bool> done{false};
  std::atomic<int> scrapes{0};
  std::thread scraper([&] {
    double last_count = 0;
    while (!done.load()) {
      const std::vector<MetricFamily> families = registry.Collect();
      const std::string text = TextSerializer().Serialize(families);
      ASSERT_FALSE(text.empty());
      for (const MetricFamily& family : families) {
        for (const ClientMetric& metric : family.metric) {
          if (family.name == "ops_total" &&
              metric.label.at("thread") == "all") {
            EXPECT_GE(metric.counter.value, last_count);
            last_count = metric.counter.value;
          }
          if (family.name == "value") {
            const ClientMetric::Histogram& h = metric.histogram;
            std::uint64_t previous = 0;
            for (const ClientMetric::Bucket& bucket : h.bucket) {
              EXPECT_GE(bucket.cumulative_count, previous);
              previous = bucket.cumulative_count;
            }
            EXPECT_GE(h.sample_count, previous);
          }
        }
      }
      scrapes.fetch_add(1);
    }
  });

  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      // Children are also created while scrapes run.
      Counter& own = counters->Add({{"thread", std::to_string(t)}});
      for (int i = 0; i < kIterations; ++i) {
        shared_counter.Increment();
        own.Increment(0.5);
        // 0, 0.5, 1, 1.5, 2: one per bucket, bounds included.
        shared_histogram.Observe((i % 5) * 0.5);
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  done.store(true);
  scraper.join();
  EXPECT_GT(scrapes.load(), 0);

  EXPECT_EQ(shared_counter.Value(), double{kThreads} * kIterations);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(counters->Add({{"thread", std::to_string(t)}}).Value(),
              kIterations * 0.5);
  }
  const ClientMetric::Histogram h = shared_histogram.Collect().histogram;
  constexpr std::uint64_t kTotal = std::uint64_t{kThreads} * kIterations;
  EXPECT_EQ(h.sample_count, kTotal);
  ASSERT_EQ(h.bucket.size(), 3u);
  EXPECT_EQ(h.bucket[0].cumulative_count, kTotal * 2 / 5);  // 0 and 0.5
  EXPECT_EQ(h.bucket[1].cumulative_count, kTotal * 3 / 5);
  EXPECT_EQ(h.bucket[2].cumulative_count, kTotal * 4 / 5);
  EXPECT_EQ(h.sample_sum, kTotal / 5 * (0 + 0.5 + 1 + 1.5 + 2));
}

}  // namespace
}  // namespace metrics
}  // namespace tandem
