#include "policy/policy_factory.h"

#include <gtest/gtest.h>

namespace headroom::policy {
namespace {

TEST(PolicyFactoryTest, MakesEveryNamedPolicy) {
  const std::vector<std::string> names = PolicyNames();
  EXPECT_EQ(names, (std::vector<std::string>{"none", "brake-only", "polca", "uniform", "power-cap",
                                             "polca-ladder", "mix-aware"}));
  for (const std::string& name : names) {
    auto policy = MakePolicy(name, PolicyParams{});
    ASSERT_TRUE(policy.has_value()) << name << ": " << policy.error().message();
    EXPECT_EQ((*policy)->name(), name);
  }
}

TEST(PolicyFactoryTest, StatesOfEachPolicy) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> want = {
      {"none", {"normal"}},
      {"brake-only", {"normal", "brake"}},
      {"polca", {"normal", "t1", "t2", "t2-hp", "brake"}},
      {"uniform", {"normal", "t1", "t2", "brake"}},
      {"power-cap", {"normal", "t1", "t2", "brake"}},
      {"polca-ladder", {"normal", "lp1", "lp2", "lp3", "lp4", "hp", "brake"}},
      {"mix-aware", {"normal", "lp", "burst", "hp", "brake"}},
  };
  for (const auto& [name, states] : want) {
    EXPECT_EQ((*MakePolicy(name, PolicyParams{}))->states(), states) << name;
  }
}

TEST(PolicyFactoryTest, InstancesAreIndependent) {
  auto a = *MakePolicy("polca", PolicyParams{});
  auto b = *MakePolicy("polca", PolicyParams{});
  Observation obs;
  obs.budget = core::Watts(100);
  obs.row_power = core::Watts(95);
  EXPECT_EQ(a->Step(obs).state, "t2");
  obs.row_power = core::Watts(50);
  EXPECT_EQ(b->Step(obs).state, "normal");
}

TEST(PolicyFactoryTest, UnknownNameListsTheValidOnes) {
  auto policy = MakePolicy("polka", PolicyParams{});
  ASSERT_FALSE(policy.has_value());
  EXPECT_EQ(policy.error().code(), core::Code::kNotFound);
  EXPECT_EQ(policy.error().message(),
            "unknown policy 'polka' (valid: none, brake-only, polca, uniform, power-cap, "
            "polca-ladder, mix-aware)");
}

TEST(PolicyFactoryTest, InvalidParamsNameTheField) {
  PolicyParams params;
  params.t2 = 0.75;
  auto policy = MakePolicy("polca", params);
  ASSERT_FALSE(policy.has_value());
  EXPECT_EQ(policy.error().code(), core::Code::kInvalidArgument);
  EXPECT_EQ(policy.error().message(), "policy polca: t2: 0.75 must be > t1 (0.8)");
}

}  // namespace
}  // namespace headroom::policy
