// Pins what `headroom simulate` prints: a real-trace hour and a synthesized day, each under two
// policies (and the hour under today's default engine with chunked prefill and its server time),
// compared field by field with the golden summaries in tests/testdata/golden/. Any change of a
// count, quantile, energy or peak fails here, so a speed-up that claims identical output is
// checked, not asserted by hand. After a change that is meant to move the output, regenerate
// them (the diff is then reviewed like code):
//
//   HEADROOM_UPDATE_GOLDEN=1 ctest --test-dir build -R SimulateGolden
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "headroom_command.h"

namespace headroom::testing {
namespace {

struct GoldenCase {
  const char* name;
  const char* args;
};

// Names the case in ctest's list.
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

constexpr const char* kDay = "--config tests/testdata/golden/synth-day-row.yaml";

const std::vector<GoldenCase>& Cases() {
  static const std::vector<GoldenCase> cases = {
      {"azure-hour-polca", "--trace azure --servers 46 --policy polca"},
      {"azure-hour-none", "--trace azure --servers 46 --policy none"},
      {"azure-hour-vllm-server", "--trace azure --servers 46 --policy polca --engine vllm-server"},
      {"synth-day-polca", "--policy polca"},
      {"synth-day-brake-only", "--policy brake-only"},
  };
  return cases;
}

std::string GoldenPath(const std::string& name) {
  return std::string(HEADROOM_SOURCE) + "/tests/testdata/golden/" + name + ".json";
}

// Numbers as printed may differ in the last bits between builds (sanitizers, clang): equal within
// a part in 10^9. Everything else exactly.
void Compare(const nlohmann::json& golden, const nlohmann::json& now, const std::string& at,
             std::vector<std::string>* moved) {
  if (golden.is_number() && now.is_number()) {
    const double a = golden.get<double>();
    const double b = now.get<double>();
    if (std::abs(a - b) > 1e-9 * std::max(std::abs(a), std::abs(b)) + 1e-12) {
      moved->push_back(at + ": " + golden.dump() + " -> " + now.dump());
    }
    return;
  }
  if (golden.type() != now.type()) {
    moved->push_back(at + ": " + golden.dump() + " -> " + now.dump());
    return;
  }
  if (golden.is_object()) {
    for (const auto& [key, value] : golden.items()) {
      if (!now.contains(key)) {
        moved->push_back(at + "." + key + ": gone");
      } else {
        Compare(value, now[key], at + "." + key, moved);
      }
    }
    for (const auto& [key, value] : now.items()) {
      if (!golden.contains(key)) moved->push_back(at + "." + key + ": new");
    }
  } else if (golden.is_array()) {
    if (golden.size() != now.size()) {
      moved->push_back(at + ": " + std::to_string(golden.size()) + " items -> " +
                       std::to_string(now.size()));
      return;
    }
    for (std::size_t i = 0; i < golden.size(); ++i) {
      Compare(golden[i], now[i], at + "[" + std::to_string(i) + "]", moved);
    }
  } else if (golden != now) {
    moved->push_back(at + ": " + golden.dump() + " -> " + now.dump());
  }
}

class SimulateGoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(SimulateGoldenTest, OutputIsWhatItWas) {
  const GoldenCase& c = GetParam();
  const std::string name(c.name);
  const std::string config = name.starts_with("synth-day") ? std::string(kDay) + " " : "";
  const CommandRun run = Headroom("simulate " + config + c.args + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  nlohmann::json now = nlohmann::json::parse(run.out);
  // Not results: how many events the simulator needed (a faster equivalent needs fewer) and
  // headroom's version.
  now.erase("events_processed");
  now["inputs"].erase("version");
  const std::string path = GoldenPath(name);
  if (std::getenv("HEADROOM_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << now.dump(2) << "\n";
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " is missing: regenerate with HEADROOM_UPDATE_GOLDEN=1";
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> moved;
  Compare(nlohmann::json::parse(text.str()), now, name, &moved);
  std::string all;
  for (const std::string& m : moved) all += "\n  " + m;
  EXPECT_TRUE(moved.empty()) << moved.size() << " fields moved against " << path << ":" << all;
}

// A field moved in a golden copy is caught: the comparison is not vacuous.
TEST(SimulateGoldenCompare, AMovedQuantileOrAMissingFieldIsCaught) {
  const nlohmann::json golden = {{"hp", {{"ttft_p99_s", 0.675}, {"requests", 26661}}}};
  std::vector<std::string> moved;
  Compare(golden, golden, "x", &moved);
  EXPECT_TRUE(moved.empty());
  nlohmann::json now = golden;
  now["hp"]["ttft_p99_s"] = 0.676;
  now["hp"].erase("requests");
  Compare(golden, now, "x", &moved);
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(moved[0], "x.hp.requests: gone");
  EXPECT_EQ(moved[1], "x.hp.ttft_p99_s: 0.675 -> 0.676");
}

INSTANTIATE_TEST_SUITE_P(Runs, SimulateGoldenTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (ch == '-') ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace headroom::testing
