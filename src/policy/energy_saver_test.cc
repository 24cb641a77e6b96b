#include "policy/energy_saver.h"

#include <gtest/gtest.h>

namespace headroom::policy {
namespace {

using std::chrono::seconds;

EnergySaverSettings Settings() {
  return {.clocks = {core::Megahertz(1410), core::Megahertz(1275), core::Megahertz(1110),
                     core::Megahertz(960)},
          .itl_p50_slo_s = 0.050,
          .ttft_p99_slo_s = 2.0,
          .margin = 0.1,
          .stale_after = seconds(30),
          .settle = seconds(30),
          .breach_memory = seconds(600)};
}

EnergySaver Saver() {
  auto saver = EnergySaver::Make(Settings());
  EXPECT_TRUE(saver.has_value()) << saver.error().message();
  return std::move(*saver);
}

LatencyWindow At(int t_s, double itl_s, double ttft_s) {
  return {.at = seconds(t_s), .itl_p50_s = itl_s, .ttft_p99_s = ttft_s};
}

TEST(EnergySaverTest, LowersOneClockPerSettleWhileTheLatenciesHaveSlack) {
  EnergySaver saver = Saver();
  std::vector<double> clocks;
  for (int t = 0; t <= 150; t += 10) {
    clocks.push_back(saver.Step(seconds(t), At(t, 0.040, 1.0), std::nullopt).saver.value());
  }
  // Down a notch at 0, 30 and 60 s, then at the lowest clock.
  EXPECT_EQ(clocks.front(), 1275);
  EXPECT_EQ(clocks[3], 1110);
  EXPECT_EQ(clocks[6], 960);
  EXPECT_EQ(clocks.back(), 960);
  // Within the SLO but inside the margin (0.046 > 0.9 x 0.050): held, not lowered.
  EnergySaver held = Saver();
  const ClockChoice c = held.Step(seconds(0), At(0, 0.046, 1.0), std::nullopt);
  EXPECT_EQ(c.saver.value(), 1410);
  EXPECT_FALSE(c.changed);
  EXPECT_EQ(c.reason, "holding");
}

TEST(EnergySaverTest, RaisesAtOnceOnABreachAndKeepsAboveTheClockThatBrokeIt) {
  EnergySaver saver = Saver();
  for (int t = 0; t <= 30; t += 30) saver.Step(seconds(t), At(t, 0.040, 1.0), std::nullopt);
  ASSERT_EQ(saver.clock().value(), 1110);
  const ClockChoice breach = saver.Step(seconds(70), At(70, 0.055, 1.0), std::nullopt);
  EXPECT_EQ(breach.saver.value(), 1410);
  EXPECT_TRUE(breach.changed);
  EXPECT_NE(breach.reason.find("ITL P50 55.0 ms above its SLO 50.0 ms"), std::string::npos)
      << breach.reason;
  const ClockChoice ttft = Saver().Step(seconds(0), At(0, 0.010, 2.5), std::nullopt);
  EXPECT_NE(ttft.reason.find("TTFT P99 2500 ms above its SLO 2000 ms"), std::string::npos);
  // Slack again: down to 1275 only, not to 1110 which broke it, until the memory has passed.
  for (int t = 100; t <= 400; t += 30) saver.Step(seconds(t), At(t, 0.030, 1.0), std::nullopt);
  EXPECT_EQ(saver.clock().value(), 1275);
  for (int t = 700; t <= 800; t += 30) saver.Step(seconds(t), At(t, 0.030, 1.0), std::nullopt);
  EXPECT_EQ(saver.clock().value(), 960);
}

TEST(EnergySaverTest, AStaleMissingOrInvalidSignalReturnsToTheHighestClockAndSaysWhy) {
  for (const auto& [window, says] :
       std::vector<std::pair<std::optional<LatencyWindow>, std::string>>{
           {std::nullopt, "no engine metrics yet"},
           {At(0, 0.030, 1.0), "engine metrics stale: the last window ended 100s ago"},
           {LatencyWindow{.at = seconds(100), .invalid = "counter reset"},
            "engine metrics unusable: counter reset"}}) {
    EnergySaver saver = Saver();
    for (int t = 0; t <= 90; t += 30) saver.Step(seconds(t), At(t, 0.030, 1.0), std::nullopt);
    ASSERT_EQ(saver.clock().value(), 960);
    const ClockChoice c = saver.Step(seconds(100), window, std::nullopt);
    EXPECT_EQ(c.saver.value(), 1410) << says;
    EXPECT_NE(c.reason.find(says), std::string::npos) << c.reason;
    // Never lowered on it either.
    EXPECT_EQ(saver.Step(seconds(200), window, std::nullopt).saver.value(), 1410);
  }
  // An idle window (no token generated) says nothing about a lower clock: held.
  EnergySaver idle = Saver();
  const ClockChoice c =
      idle.Step(seconds(0), LatencyWindow{.at = seconds(0), .ttft_p99_s = 0.5}, std::nullopt);
  EXPECT_EQ(c.saver.value(), 1410);
  EXPECT_EQ(c.reason, "holding");
}

TEST(EnergySaverTest, TheRowsCapAlwaysWins) {
  EnergySaver saver = Saver();
  ClockChoice c = saver.Step(seconds(0), At(0, 0.040, 1.0), core::Megahertz(1110));
  EXPECT_EQ(c.saver.value(), 1275);
  EXPECT_EQ(c.applied.value(), 1110);
  EXPECT_TRUE(c.row_cap_wins);
  // A breach raises the saver's clock, never above the row's cap.
  c = saver.Step(seconds(10), At(10, 0.090, 1.0), core::Megahertz(1110));
  EXPECT_EQ(c.saver.value(), 1410);
  EXPECT_EQ(c.applied.value(), 1110);
  // Above the saver's clock the cap is not in the way.
  EnergySaver low = Saver();
  for (int t = 0; t <= 30; t += 30) low.Step(seconds(t), At(t, 0.030, 1.0), std::nullopt);
  c = low.Step(seconds(40), At(40, 0.030, 1.0), core::Megahertz(1305));
  EXPECT_EQ(c.saver.value(), 1110);
  EXPECT_EQ(c.applied.value(), 1110);
  EXPECT_FALSE(c.row_cap_wins);
}

TEST(EnergySaverTest, ItsClocksStepDownTheGpusGridToTheFloor) {
  model::GpuSpec spec;
  spec.sm_clock_min = core::Megahertz(210);
  spec.sm_clock_max = core::Megahertz(1410);
  spec.sm_clock_step = core::Megahertz(15);
  const std::vector<core::Megahertz> clocks = EnergySaverClocks(spec, 0.5, 0.05);
  ASSERT_FALSE(clocks.empty());
  EXPECT_EQ(clocks.front().value(), 1410);
  EXPECT_EQ(clocks.back().value(), 705);  // 50% of 1410, on the 15 MHz grid
  EXPECT_EQ(clocks.size(), 11u);
  for (std::size_t k = 1; k < clocks.size(); ++k) EXPECT_LT(clocks[k], clocks[k - 1]);
  EXPECT_TRUE(EnergySaver::Make({.clocks = clocks, .itl_p50_slo_s = 0.05, .ttft_p99_slo_s = 1})
                  .has_value());
}

TEST(EnergySaverTest, BadSettingsAreRefusedNamingTheSetting) {
  const auto refused = [](EnergySaverSettings s, const std::string& says) {
    auto made = EnergySaver::Make(std::move(s));
    ASSERT_FALSE(made.has_value()) << says;
    EXPECT_NE(made.error().message().find(says), std::string::npos) << made.error().message();
  };
  EnergySaverSettings s = Settings();
  s.clocks.clear();
  refused(s, "clocks: give at least one");
  s = Settings();
  s.clocks = {core::Megahertz(1110), core::Megahertz(1410)};
  refused(s, "highest first");
  s = Settings();
  s.itl_p50_slo_s = 0;
  refused(s, "itl_p50_slo");
  s = Settings();
  s.margin = 1;
  refused(s, "margin");
  s = Settings();
  s.settle = seconds(-1);
  refused(s, "settle");
}

}  // namespace
}  // namespace headroom::policy
