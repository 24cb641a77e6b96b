#include "policy/rise_predictor.h"

#include <gtest/gtest.h>

namespace headroom::policy {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(RisePredictorTest, SteadyPowerPredictsItself) {
  RisePredictor predictor(seconds(20), seconds(40));
  for (int t = 0; t < 100; ++t) EXPECT_DOUBLE_EQ(predictor.Update(0.7, seconds(t)), 0.7);
}

TEST(RisePredictorTest, RampIsProjectedAlongItsSlope) {
  RisePredictor predictor(seconds(20), seconds(40));
  double predicted = 0;
  double p = 0;
  for (int t = 0; t <= 200; ++t) {
    p = 0.5 + 0.001 * t;  // 0.1% of the budget per second
    predicted = predictor.Update(p, seconds(t));
  }
  EXPECT_NEAR(predictor.slope_per_s(), 0.001, 0.0001);
  EXPECT_NEAR(predicted, p + 0.04, 0.004);
}

TEST(RisePredictorTest, FallingPowerPredictsItself) {
  RisePredictor predictor(seconds(20), seconds(40));
  double p = 0;
  double predicted = 0;
  for (int t = 0; t <= 100; ++t) {
    p = 0.9 - 0.002 * t;
    predicted = predictor.Update(p, seconds(t));
  }
  EXPECT_LT(predictor.slope_per_s(), 0);
  EXPECT_DOUBLE_EQ(predicted, p);
}

TEST(RisePredictorTest, IgnoresSubSecondNoise) {
  RisePredictor predictor(seconds(20), seconds(40));
  double worst = 0;
  for (int i = 0; i < 3000; ++i) {  // 300 s of +-2% swings every 100 ms
    const double p = 0.78 + (i % 2 == 0 ? 0.02 : -0.02);
    worst = std::max(worst, predictor.Update(p, milliseconds(100 * i)) - p);
  }
  EXPECT_LT(worst, 0.01);
}

TEST(RisePredictorTest, ZeroHorizonTurnsPredictionOff) {
  RisePredictor predictor(seconds(20), seconds(0));
  double p = 0;
  for (int t = 0; t < 100; ++t) {
    p = 0.5 + 0.003 * t;
    EXPECT_DOUBLE_EQ(predictor.Update(p, seconds(t)), p);
  }
}

}  // namespace
}  // namespace headroom::policy
