#include "telemetry/token_energy.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace headroom::telemetry {
namespace {

// Windows of 10 s whose mix of prefill and decode varies, their energy made from known costs
// (0.25 J a prompt token, 2.0 J a generated token, 400 W idle) plus noise of `noise_j`.
std::vector<EnergyWindowSample> Windows(int n, double noise_j, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> prompt(0, 20000), generated(200, 3000);
  std::normal_distribution<double> noise(0, noise_j);
  std::vector<EnergyWindowSample> out;
  for (int k = 0; k < n; ++k) {
    EnergyWindowSample w{
        .seconds = 10, .prompt_tokens = prompt(rng), .generated_tokens = generated(rng)};
    if (k % 3 == 0) w.seconds = 5;
    w.energy_j = 400 * w.seconds + 0.25 * w.prompt_tokens + 2.0 * w.generated_tokens + noise(rng);
    out.push_back(w);
  }
  return out;
}

TEST(TokenEnergyTest, RecoversTheCostsOfPromptAndGeneratedTokensWithTheirErrors) {
  TokenEnergyFit exact(64);
  for (const EnergyWindowSample& w : Windows(20, 0, 1)) exact.Add(w);
  const auto e = exact.Fit();
  ASSERT_TRUE(e.has_value()) << exact.why();
  EXPECT_NEAR(e->j_per_prompt_token, 0.25, 1e-9);
  EXPECT_NEAR(e->j_per_generated_token, 2.0, 1e-9);
  EXPECT_NEAR(e->idle_w, 400, 1e-6);
  EXPECT_EQ(e->windows, 20);

  TokenEnergyFit noisy(64);
  for (const EnergyWindowSample& w : Windows(60, 200, 2)) noisy.Add(w);
  const auto n = noisy.Fit();
  ASSERT_TRUE(n.has_value()) << noisy.why();
  EXPECT_GT(n->j_per_generated_token_se, 0);
  // Within three standard errors of the truth, and the errors say how well it is known.
  EXPECT_NEAR(n->j_per_prompt_token, 0.25, 3 * n->j_per_prompt_token_se);
  EXPECT_NEAR(n->j_per_generated_token, 2.0, 3 * n->j_per_generated_token_se);
  EXPECT_LT(n->j_per_generated_token_se, 0.2);
  // Only the last 64 windows are kept.
  for (const EnergyWindowSample& w : Windows(100, 200, 3)) noisy.Add(w);
  EXPECT_EQ(noisy.windows(), 64u);
}

TEST(TokenEnergyTest, WindowsThatCannotTellTheCostsApartGiveNoFitAndSayWhy) {
  TokenEnergyFit few(64);
  for (const EnergyWindowSample& w : Windows(4, 0, 1)) few.Add(w);
  EXPECT_FALSE(few.Fit().has_value());
  EXPECT_EQ(few.why(), "fewer than 5 windows");
  // Prefill always a fixed proportion of decode: the two costs cannot be told apart.
  TokenEnergyFit same_mix(64);
  for (int k = 0; k < 10; ++k) {
    const double g = 100.0 * (k + 1);
    same_mix.Add({.seconds = 10.0 + k,
                  .energy_j = 4000 + 2.5 * g,
                  .prompt_tokens = 5 * g,
                  .generated_tokens = g});
  }
  EXPECT_FALSE(same_mix.Fit().has_value());
  EXPECT_NE(same_mix.why().find("do not tell the two costs apart"), std::string::npos);
  // A window it cannot trust (a counter reset gives negative tokens; a zero length) is not kept.
  TokenEnergyFit guarded(64);
  guarded.Add({.seconds = 10, .energy_j = 100, .prompt_tokens = -5, .generated_tokens = 10});
  guarded.Add({.seconds = 0, .energy_j = 100, .prompt_tokens = 5, .generated_tokens = 10});
  guarded.Add({.seconds = 10, .energy_j = NAN, .prompt_tokens = 5, .generated_tokens = 10});
  EXPECT_EQ(guarded.windows(), 0u);
}

// An engine held at one load (a benchmark at saturation): its mix never varies, so prompt and
// generated tokens cannot be told apart; with the idle power known, the whole energy above it
// per generated token (the prompts' share included) is still given, marked unsplit, with why.
TEST(TokenEnergyTest, AnEngineAtOneLoadGetsItsWholeCostPerGeneratedTokenUnsplit) {
  TokenEnergyFit saturated(64, /*rated_idle_w=*/400.0);
  double above_j = 0;
  double generated = 0;
  for (int k = 0; k < 10; ++k) {
    const double g = 1000.0 + 10 * (k % 3);
    const EnergyWindowSample w{.seconds = 10,
                               .energy_j = 4000 + 0.3 * 5 * g + 2.0 * g + (k % 2 ? 50 : -50),
                               .prompt_tokens = 5 * g,
                               .generated_tokens = g,
                               .iterations = g / 64};
    saturated.Add(w);
    above_j += w.energy_j - 4000;
    generated += g;
  }
  const auto e = saturated.Fit();
  ASSERT_TRUE(e.has_value()) << saturated.why();
  EXPECT_FALSE(e->split);
  EXPECT_NEAR(e->j_per_generated_token, above_j / generated, 1e-12);
  EXPECT_NEAR(e->j_per_generated_token, 0.3 * 5 + 2.0, 0.01);
  // The windows' ratios spread by +-0.05 J (50 J over about 1,000 tokens): the error of their
  // mean over 10 windows, 0.05 x sqrt(10 / 9) / sqrt(10).
  EXPECT_NEAR(e->j_per_generated_token_se, 0.05 / 3, 0.001);
  EXPECT_EQ(e->j_per_prompt_token, 0);
  EXPECT_EQ(e->idle_from, "rated");
  EXPECT_NE(saturated.why().find("do not tell the costs apart"), std::string::npos);
  // All in: the windows' whole energy, idle included, over their generated tokens.
  EXPECT_NEAR(e->AllIn(), (above_j + 4000 * 10) / generated, 1e-12);
  const nlohmann::ordered_json j = TokenEnergyJson(*e);
  EXPECT_EQ(j["all_in_j_per_generated_token"].get<double>(), e->AllIn());
  EXPECT_EQ(j["split"], false);
  EXPECT_TRUE(j["j_per_prompt_token"].is_null());
  EXPECT_TRUE(j["j_per_prompt_token_stderr"].is_null());
  // A fit that splits says so.
  TokenEnergyFit varied(64, 400.0);
  for (const EnergyWindowSample& w : Windows(20, 0, 1)) varied.Add(w);
  EXPECT_TRUE(varied.Fit()->split);
  EXPECT_EQ(TokenEnergyJson(*varied.Fit())["split"], true);
}

TEST(TokenEnergyTest, IdlePowerComesFromTokenFreeWindowsThenTheRatingBeforeTheFit) {
  // A busy engine's per-step cost grows with time busy: 300 W whenever tokens flow, which a free
  // intercept would take for idle power.
  std::vector<EnergyWindowSample> busy = Windows(30, 0, 4);
  for (EnergyWindowSample& w : busy) w.energy_j += 300 * w.seconds;
  TokenEnergyFit free_intercept(64);
  TokenEnergyFit rated(64, 400.0);
  for (const EnergyWindowSample& w : busy) {
    free_intercept.Add(w);
    rated.Add(w);
  }
  EXPECT_EQ(free_intercept.Fit()->idle_from, "fitted");
  EXPECT_NEAR(free_intercept.Fit()->idle_w, 700, 1e-6);
  const auto r = rated.Fit();
  ASSERT_TRUE(r.has_value()) << rated.why();
  EXPECT_EQ(r->idle_from, "rated");
  EXPECT_DOUBLE_EQ(r->idle_w, 400);
  // The busy share goes to the tokens: more than their marginal costs.
  EXPECT_GT(r->j_per_generated_token, 2.0);
  // Five windows without a token measure the idle power, over the rating.
  TokenEnergyFit measured(64, 350.0);
  for (const EnergyWindowSample& w : Windows(20, 0, 5)) measured.Add(w);
  for (int k = 0; k < 5; ++k) {
    measured.Add({.seconds = 10, .energy_j = 4000, .prompt_tokens = 0, .generated_tokens = 0});
  }
  const auto m = measured.Fit();
  ASSERT_TRUE(m.has_value()) << measured.why();
  EXPECT_EQ(m->idle_from, "token-free windows");
  EXPECT_DOUBLE_EQ(m->idle_w, 400);
  EXPECT_NEAR(m->j_per_prompt_token, 0.25, 1e-9);
  EXPECT_NEAR(m->j_per_generated_token, 2.0, 1e-9);
}

TEST(TokenEnergyTest, TheEnginesIterationsAreATermOfTheirOwnSpreadOverTheGeneratedTokens) {
  // Each iteration costs 40 J of its own (the weights read once for its batch); windows with more
  // prefill hold fewer iterations. Counted, the prompt's cost is recovered, and the iterations'
  // cost goes to the generated tokens, which every iteration makes.
  std::vector<EnergyWindowSample> windows = Windows(30, 0, 6);
  double generated = 0;
  double iterations = 0;
  for (EnergyWindowSample& w : windows) {
    w.iterations = 250 - w.prompt_tokens / 200;
    w.energy_j += 40 * w.iterations;
    generated += w.generated_tokens;
    iterations += w.iterations;
  }
  TokenEnergyFit counted(64, 400.0);
  TokenEnergyFit uncounted(64, 400.0);
  for (EnergyWindowSample w : windows) {
    counted.Add(w);
    w.iterations = 0;
    uncounted.Add(w);
  }
  const auto c = counted.Fit();
  ASSERT_TRUE(c.has_value()) << counted.why();
  EXPECT_NEAR(c->j_per_prompt_token, 0.25, 1e-9);
  EXPECT_NEAR(c->j_per_generated_token, 2.0 + 40 * iterations / generated, 1e-9);
  const auto u = uncounted.Fit();
  ASSERT_TRUE(u.has_value()) << uncounted.why();
  EXPECT_GT(std::abs(u->j_per_prompt_token - 0.25), 0.1)
      << "without the term the iterations' cost lands on the tokens as it happens to correlate";
}

}  // namespace
}  // namespace headroom::telemetry
