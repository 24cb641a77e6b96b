#include "sim/training_verdict.h"

#include <gtest/gtest.h>

namespace headroom::sim {
namespace {

MitigationOutcome Outcome(const std::string& name, double iterations_per_hour, double energy_j,
                          double ramp_kw_per_s, double low_amplitude_kw) {
  MitigationOutcome o{.mitigation = {.name = name}};
  o.run.iterations = static_cast<long>(iterations_per_hour);
  o.run.busy_s = 3600;
  o.run.energy_j = energy_j * o.run.iterations;
  o.run.ramp_up_window_w_per_s = ramp_kw_per_s * 1e3;
  o.run.low_band.amplitude_w = low_amplitude_kw * 1e3;
  return o;
}

TEST(TrainingVerdictTest, TheCheapestWithinEveryLimitIsChosen) {
  TrainingRowVerdict v;
  v.scenario.limits = {.max_ramp_w_per_s = 100e3, .max_low_band_amplitude_w = 50e3};
  v.outcomes = {Outcome("none", 1000, 10, 500, 400), Outcome("lock", 800, 9, 90, 40),
                Outcome("smooth", 990, 11, 80, 30), Outcome("smooth-cheap", 990, 10.5, 70, 20),
                Outcome("ramps-only", 1000, 10, 90, 60)};
  Judge(v);
  ASSERT_TRUE(v.chosen);
  EXPECT_EQ(v.outcomes[*v.chosen].mitigation.name, "smooth-cheap");
  EXPECT_NEAR(v.outcomes[1].throughput_change, -0.2, 1e-9);
  EXPECT_NEAR(v.outcomes[3].energy_change, 0.05, 1e-9);
  EXPECT_EQ(v.outcomes[0].broken.size(), 2u);
  ASSERT_EQ(v.outcomes[4].broken.size(), 1u);
  EXPECT_EQ(v.outcomes[4].broken[0].limit, "0.1-2 Hz amplitude");
  EXPECT_EQ(v.outcomes[4].broken[0].text, "0.1-2 Hz amplitude 60.0 kW > 50.0 kW");
}

TEST(TrainingVerdictTest, WhenNoneFitsItNamesTheLimitsNoneMeets) {
  TrainingRowVerdict v;
  v.scenario.limits = {.max_ramp_w_per_s = 100e3, .max_low_band_amplitude_w = 50e3};
  v.outcomes = {Outcome("none", 1000, 10, 500, 400), Outcome("lock", 800, 9, 200, 40)};
  Judge(v);
  EXPECT_FALSE(v.chosen);
  EXPECT_EQ(v.unmet, std::vector<std::string>{"ramp"});
}

}  // namespace
}  // namespace headroom::sim
