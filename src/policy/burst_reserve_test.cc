#include "policy/burst_reserve.h"

#include <cmath>

#include <gtest/gtest.h>

namespace headroom::policy {
namespace {

BurstReserveParams Params() {
  return {.level_window = std::chrono::seconds(20),
          .horizon = std::chrono::seconds(40),
          .memory = std::chrono::hours(1),
          .floor = 0.05};
}

TEST(BurstReserveTest, AQuietRowKeepsTheFloor) {
  BurstReserve reserve(Params());
  EXPECT_DOUBLE_EQ(reserve.reserve(), 0.05);
  for (int t = 0; t < 600; ++t) reserve.Update(0.80 + (t % 2 ? 0.01 : -0.01), core::FromSeconds(t));
  EXPECT_DOUBLE_EQ(reserve.reserve(), 0.05);
  EXPECT_NEAR(reserve.level(), 0.80, 0.01);
}

TEST(BurstReserveTest, ARiseWithinTheHorizonIsMeasuredFromTheLowestLevel) {
  BurstReserve reserve(Params());
  for (int t = 0; t < 300; ++t) reserve.Update(0.80, core::FromSeconds(t));
  // A burst: 0.12 up within the horizon; the level has not caught up, the lowest level is 0.80.
  for (int t = 300; t < 330; ++t) reserve.Update(0.92, core::FromSeconds(t));
  EXPECT_NEAR(reserve.reserve(), 0.12, 1e-9);
  // Long after, the level is 0.92 and the rise is over: the reserve stays, decaying slowly.
  for (int t = 330; t < 900; ++t) reserve.Update(0.92, core::FromSeconds(t));
  EXPECT_GT(reserve.reserve(), 0.05 + 0.07 * 0.85);
  EXPECT_LT(reserve.reserve(), 0.12);
}

TEST(BurstReserveTest, TheReserveDecaysToTheFloorWithItsMemory) {
  BurstReserve reserve(Params());
  reserve.Update(0.80, core::FromSeconds(0));
  reserve.Update(0.95, core::FromSeconds(1));  // 0.15 over the level
  EXPECT_NEAR(reserve.reserve(), 0.15, 1e-9);
  for (int t = 2; t <= 3601; ++t) reserve.Update(0.80, core::FromSeconds(t));
  // One memory time constant: the excess over the floor is down to about 1/e.
  EXPECT_NEAR(reserve.reserve(), 0.05 + 0.10 / std::exp(1.0), 1e-3);
}

TEST(BurstReserveTest, ASlowRiseIsNotABurst) {
  BurstReserve reserve(Params());
  // 0.20 over an hour: within any 40 s the row rises 0.0022, far under the floor.
  for (int t = 0; t <= 3600; ++t) reserve.Update(0.70 + 0.20 * t / 3600, core::FromSeconds(t));
  EXPECT_DOUBLE_EQ(reserve.reserve(), 0.05);
}

}  // namespace
}  // namespace headroom::policy
