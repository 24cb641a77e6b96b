#include "report/simulation_report.h"

#include <string>

#include <gtest/gtest.h>

namespace headroom::report {
namespace {

sim::ServerTokenEnergy Server(bool split, bool fitted, std::string why) {
  sim::ServerTokenEnergy s;
  s.hp = true;
  s.why = std::move(why);
  s.prompt_tokens = 1000;
  s.generated_tokens = 2000;
  s.prompt_j = 300;
  s.generated_j = 4000;
  s.idle_w = 504;
  if (fitted) {
    s.fit = telemetry::TokenEnergy{
        .j_per_prompt_token = split ? 0.3 : 0, .j_per_generated_token = 2.0, .idle_w = 504};
    s.fit->split = split;
  }
  return s;
}

// issue 51: `simulate --token-energy` sets only the servers whose fit split the two costs beside
// the exact split, and says how many were left out and why; the JSON keeps an unsplit server's
// fit with its reason.
TEST(SimulationReportTest, TokenEnergyLeavesUnsplitServersOutOfTheMeansAndSaysWhy) {
  sim::RowResult r;
  r.servers = 3;
  r.hp_servers = 3;
  r.token_energy = {Server(true, true, ""), Server(false, true, "the mix never varied"),
                    Server(false, false, "fewer than 5 windows")};
  const std::string text = SimulationText(r);
  EXPECT_NE(text.find("1 of 3"), std::string::npos) << text;
  EXPECT_NE(text.find("1 server(s) with only the whole cost per generated token (unsplit), 1 "
                      "with no fit: the mix never varied"),
            std::string::npos)
      << text;
  const nlohmann::ordered_json j = SimulationJson(r);
  ASSERT_EQ(j["token_energy"].size(), 3u);
  EXPECT_EQ(j["token_energy"][1]["attributed"]["split"], false);
  EXPECT_EQ(j["token_energy"][1]["why"], "the mix never varied");
  EXPECT_TRUE(j["token_energy"][2]["attributed"].is_null());

  r.token_energy = {Server(true, true, "")};
  EXPECT_EQ(SimulationText(r).find("unsplit"), std::string::npos);
}

// Sequences preempted for want of KV cache are said in the text where there were any, and are
// always in the JSON per class.
TEST(SimulationReportTest, PreemptionsAreSaidWhereThereWereAny) {
  sim::RowResult r;
  r.servers = 1;
  r.hp_servers = 1;
  EXPECT_EQ(SimulationText(r).find("preempted"), std::string::npos);
  EXPECT_EQ(SimulationJson(r)["hp"]["preemptions"], 0);
  r.hp.preemptions = 3;
  r.lp.preemptions = 2;
  EXPECT_NE(
      SimulationText(r).find("KV cache full: 5 sequences preempted and prefilled again (HP 3, "
                             "LP 2)"),
      std::string::npos)
      << SimulationText(r);
  EXPECT_EQ(SimulationJson(r)["lp"]["preemptions"], 2);
  r.hp.preemptions = 0;
  r.lp.preemptions = 1;
  EXPECT_NE(SimulationText(r).find("1 sequence preempted"), std::string::npos) << SimulationText(r);
}

TEST(SimulationReportTest, ThePrefillBoostIsSaidWhereItRan) {
  sim::RowResult r;
  r.servers = 1;
  r.hp_servers = 1;
  r.energy_saver.emplace().clocks_mhz = {1410, 1335};
  r.energy_saver->server_seconds = {10, 90};
  EXPECT_EQ(SimulationText(r).find("prefill boost"), std::string::npos);
  EXPECT_TRUE(SimulationJson(r)["energy_saver"]["prefill_boost"].is_null());
  r.energy_saver->prefill_boost = true;
  r.energy_saver->boosts = 3;
  r.energy_saver->boosted_instance_seconds = 25;
  r.energy_saver->instance_seconds = 100;
  EXPECT_NE(SimulationText(r).find("prefill boost: 3 boosts (a waiting prompt lifting the "
                                   "saver's clock); the top clock 25.0% of instance time"),
            std::string::npos)
      << SimulationText(r);
  const auto boost = SimulationJson(r)["energy_saver"]["prefill_boost"];
  EXPECT_EQ(boost["boosts"], 3);
  EXPECT_DOUBLE_EQ(boost["boosted_share"].get<double>(), 0.25);
}

}  // namespace
}  // namespace headroom::report
