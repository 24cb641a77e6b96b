#include "sim/trace_stats.h"

#include <gtest/gtest.h>

#include "sim/named_traces.h"
#include "sim/trace_reader.h"

namespace headroom::sim {
namespace {

// A handmade trace: nine requests, prompts 100..900, outputs a tenth of that.
std::vector<TraceRequest> Tiny() {
  const double times[] = {0, 0.2, 0.5, 0.9, 1.0, 2.5, 61, 3'700, 86'410};
  const Priority priorities[] = {Priority::kHigh, Priority::kLow, Priority::kHigh};
  std::vector<TraceRequest> requests;
  for (int i = 0; i < 9; ++i) {
    requests.push_back({.arrival_s = times[i],
                        .prompt_tokens = 100 * (i + 1),
                        .output_tokens = 10 * (i + 1),
                        .priority = i < 3 ? priorities[i] : Priority::kUnspecified});
  }
  return requests;
}

// A source whose clock starts at 23:00 UTC.
class LateSource final : public RequestSource {
 public:
  explicit LateSource(std::vector<TraceRequest> r) : inner_(std::move(r)) {}
  core::Result<std::optional<TraceRequest>> Next() override { return inner_.Next(); }
  std::optional<core::Duration> start_time() const override {
    return *ParseAzureTimestamp("2023-11-13 23:00:00");
  }

 private:
  VectorSource inner_;
};

TEST(TraceStatsTest, ExactOnAHandmadeTrace) {
  VectorSource source(Tiny());
  auto stats = ComputeTraceStats(source);
  ASSERT_TRUE(stats) << stats.error().message();
  EXPECT_EQ(stats->count, 9);
  EXPECT_DOUBLE_EQ(stats->duration_s, 86'410);
  EXPECT_DOUBLE_EQ(stats->mean_rate_per_s, 9.0 / 86'410);
  EXPECT_DOUBLE_EQ(stats->peak_rate_1s_per_s, 4);          // 0.2, 0.5, 0.9, 1.0 in (0, 1]
  EXPECT_DOUBLE_EQ(stats->peak_rate_60s_per_s, 6.0 / 60);  // 0 .. 2.5
  EXPECT_DOUBLE_EQ(stats->prompt_tokens.mean, 500);
  EXPECT_EQ(stats->prompt_tokens.min, 100);
  EXPECT_EQ(stats->prompt_tokens.p50, 500);  // rank round(0.5 x 8) = 4
  EXPECT_EQ(stats->prompt_tokens.p90, 800);  // rank round(7.2) = 7
  EXPECT_EQ(stats->prompt_tokens.p99, 900);  // rank round(7.92) = 8
  EXPECT_EQ(stats->prompt_tokens.max, 900);
  EXPECT_DOUBLE_EQ(stats->output_tokens.mean, 50);
  EXPECT_EQ(stats->output_tokens.p90, 80);
  EXPECT_EQ(stats->high_priority, 2);
  EXPECT_EQ(stats->low_priority, 1);
  EXPECT_FALSE(stats->start_time);
  std::array<std::int64_t, 24> hours = {};
  hours[0] = 8;
  hours[1] = 1;
  EXPECT_EQ(stats->per_hour_of_day, hours);
  EXPECT_EQ(stats->per_day, (std::vector<std::int64_t>{8, 1}));
}

TEST(TraceStatsTest, HoursAndDaysFollowTheSourceClock) {
  LateSource source(Tiny());
  auto stats = ComputeTraceStats(source);
  ASSERT_TRUE(stats);
  ASSERT_TRUE(stats->start_time);
  std::array<std::int64_t, 24> hours = {};
  hours[23] = 8;  // 23:00:00 .. 23:01:01 and 86'410 s later (23:00:10 the next day)
  hours[0] = 1;   // 3'700 s: 00:01:40
  EXPECT_EQ(stats->per_hour_of_day, hours);
  EXPECT_EQ(stats->per_day, (std::vector<std::int64_t>{7, 2}));
}

TEST(TraceStatsTest, EmptyAndBadTraces) {
  VectorSource empty(std::vector<TraceRequest>{});
  auto stats = ComputeTraceStats(empty);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->count, 0);
  EXPECT_EQ(stats->mean_rate_per_s, 0);
  EXPECT_TRUE(stats->per_day.empty());

  VectorSource milliseconds(std::vector<TraceRequest>{{.arrival_s = 0}, {.arrival_s = 1e12}});
  auto bad = ComputeTraceStats(milliseconds);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("in seconds?"), std::string::npos);

  // One arrival at 1e16 s, where t - 1 s == t: the peak window emptied and then read its front.
  VectorSource far(
      std::vector<TraceRequest>{{.arrival_s = 1e16, .prompt_tokens = 1, .output_tokens = 1}});
  auto far_stats = ComputeTraceStats(far);
  ASSERT_FALSE(far_stats);
  EXPECT_NE(far_stats.error().message().find("in seconds?"), std::string::npos);
}

TEST(TraceStatsTest, AzureConvMatchesTheDataReadme) {
  auto source = OpenTrace("azure-conv");
  ASSERT_TRUE(source);
  auto stats = ComputeTraceStats(**source);
  ASSERT_TRUE(stats);
  // data/traces/README.md: 19,366 rows over 3,501.7 s, 5.53 req/s, prompt 2 / 1020 / 1154.7 /
  // 4142 / 14050 (min / p50 / mean / p99 / max), output 7 / 129 / 211.1 / 601 / 1000.
  EXPECT_EQ(stats->count, 19'366);
  EXPECT_NEAR(stats->duration_s, 3'501.7, 0.1);
  EXPECT_NEAR(stats->mean_rate_per_s, 5.53, 0.005);
  EXPECT_EQ(stats->prompt_tokens.min, 2);
  EXPECT_EQ(stats->prompt_tokens.p50, 1020);
  EXPECT_NEAR(stats->prompt_tokens.mean, 1154.7, 0.05);
  EXPECT_EQ(stats->prompt_tokens.p99, 4142);
  EXPECT_EQ(stats->prompt_tokens.max, 14050);
  EXPECT_EQ(stats->output_tokens.p50, 129);
  EXPECT_NEAR(stats->output_tokens.mean, 211.1, 0.05);
  EXPECT_EQ(stats->output_tokens.max, 1000);
  // Arrivals per minute: max 502 (README), so the busiest 60 s window has at least that many.
  EXPECT_GE(stats->peak_rate_60s_per_s * 60, 502);
  EXPECT_EQ(stats->per_hour_of_day[18] + stats->per_hour_of_day[19], 19'366);  // 18:15 to 19:14
}

}  // namespace
}  // namespace headroom::sim
