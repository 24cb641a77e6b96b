#include "core/time.h"

#include <gtest/gtest.h>

namespace headroom::core {
namespace {

TEST(FakeClockTest, AdvancesOnlyWhenTold) {
  FakeClock clock;
  const TimePoint t0 = clock.Now();
  EXPECT_EQ(clock.Now(), t0);
  clock.Advance(std::chrono::milliseconds(250));
  EXPECT_EQ(clock.Now() - t0, std::chrono::milliseconds(250));
}

TEST(FakeClockTest, SleepUntilJumpsForwardNeverBack) {
  FakeClock clock;
  const TimePoint t0 = clock.Now();
  clock.SleepUntil(t0 + std::chrono::seconds(5), nullptr);
  EXPECT_EQ(clock.Now() - t0, std::chrono::seconds(5));
  clock.SleepUntil(t0 + std::chrono::seconds(1), nullptr);
  EXPECT_EQ(clock.Now() - t0, std::chrono::seconds(5));
}

TEST(SystemClockTest, StopFlagEndsSleepAtOnce) {
  SystemClock clock;
  std::atomic<bool> stop{true};
  const TimePoint start = clock.Now();
  clock.SleepUntil(start + std::chrono::hours(1), &stop);
  EXPECT_LT(clock.Now() - start, std::chrono::minutes(1));
}

TEST(SecondsTest, Conversions) {
  EXPECT_DOUBLE_EQ(ToSeconds(std::chrono::milliseconds(1500)), 1.5);
  EXPECT_EQ(FromSeconds(0.25), std::chrono::milliseconds(250));
}

}  // namespace
}  // namespace headroom::core
