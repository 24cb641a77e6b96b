#include "telemetry/prometheus_text.h"

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

namespace headroom::telemetry {
namespace {

// A strict reader of the text exposition format: HELP/TYPE before samples, valid metric and
// label syntax, numeric values. Returns the samples as "name{labels}" -> value.
std::map<std::string, double> ParseExposition(const std::string& text) {
  static const std::regex kHelp(R"(^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+$)");
  static const std::regex kType(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (gauge|counter)$)");
  static const std::regex kSample(
      R"re(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")*\})? (\S+)$)re");
  std::set<std::string> typed;
  std::map<std::string, double> samples;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, kHelp)) continue;
    if (std::regex_match(line, m, kType)) {
      EXPECT_TRUE(typed.insert(m[1]).second) << "TYPE twice: " << line;
      continue;
    }
    EXPECT_TRUE(std::regex_match(line, m, kSample)) << "bad line: " << line;
    if (m.empty()) continue;
    EXPECT_TRUE(typed.contains(m[1])) << "sample before its TYPE: " << line;
    size_t used = 0;
    const std::string value = m[m.size() - 1];
    const double v = std::stod(value, &used);
    EXPECT_EQ(used, value.size()) << line;
    const std::string key = line.substr(0, line.rfind(' '));
    EXPECT_TRUE(samples.emplace(key, v).second) << "duplicate series: " << line;
  }
  return samples;
}

gpu::GpuListing Gpu(int index, const char* name) {
  gpu::GpuListing g;
  g.info.index = index;
  g.info.uuid = "GPU-" + std::to_string(index);
  g.info.name = name;
  g.snapshot.power_instant = core::Watts(251.5);
  g.snapshot.energy_counter = core::Joules(12345.678);
  g.snapshot.sm_clock = core::Megahertz(1410);
  g.snapshot.power_limits = gpu::PowerLimitState{
      core::Watts(100), core::Watts(400), core::Watts(400), core::Watts(300), core::Watts(300)};
  g.snapshot.throttle_reasons = gpu::kThrottleSwPowerCap;
  return g;
}

TEST(PrometheusTextTest, ParsesWithBaseUnitsAndLabels) {
  const std::string text = GpuMetricsText({Gpu(0, "NVIDIA A100-SXM4-80GB"), Gpu(1, "B")});
  const auto samples = ParseExposition(text);
  const std::string labels0 = R"({gpu="0",uuid="GPU-0",name="NVIDIA A100-SXM4-80GB"})";
  EXPECT_DOUBLE_EQ(samples.at("headroom_gpu_power_watts" + labels0), 251.5);
  EXPECT_DOUBLE_EQ(samples.at("headroom_gpu_energy_joules_total" + labels0), 12345.678);
  EXPECT_DOUBLE_EQ(samples.at("headroom_gpu_sm_clock_hertz" + labels0), 1.41e9);
  EXPECT_DOUBLE_EQ(samples.at("headroom_gpu_power_limit_watts" + labels0), 300);
  EXPECT_DOUBLE_EQ(
      samples.at(
          R"(headroom_gpu_throttle_reason{gpu="1",uuid="GPU-1",name="B",reason="power_cap"})"),
      1);
  EXPECT_DOUBLE_EQ(
      samples.at(R"(headroom_gpu_throttle_reason{gpu="1",uuid="GPU-1",name="B",reason="idle"})"),
      0);
  // Absent readings are left out, never reported as zero.
  EXPECT_EQ(text.find("headroom_gpu_temperature_celsius"), std::string::npos);
  EXPECT_NE(text.find("# TYPE headroom_gpu_energy_joules_total counter"), std::string::npos);
}

TEST(PrometheusTextTest, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  const auto samples = ParseExposition(GpuMetricsText({Gpu(0, "odd \"name\"\\")}));
  EXPECT_FALSE(samples.empty());
}

// The writer the agent and the controller build their /metrics with: HELP and TYPE once, before
// the first sample, none for a family without samples; label values escaped.
TEST(PrometheusTextTest, WriterWritesFamiliesOnceAndOnlyWithSamples) {
  PrometheusWriter out;
  out.Family("headroom_row_power_watts", "gauge", "Row power.");
  out.Sample(15600.5);
  out.Family("headroom_row_server_sm_clock_cap_hertz", "gauge", "Caps (capped servers only).");
  out.Family("headroom_row_agent_up", "gauge", "1 when the agent answered.");
  out.Sample(1, {{"server", "s0"}});
  out.Sample(0, {{"server", "row \"7\"\n"}});
  const std::string text = out.text();
  const auto samples = ParseExposition(text);
  EXPECT_DOUBLE_EQ(samples.at("headroom_row_power_watts"), 15600.5);
  EXPECT_DOUBLE_EQ(samples.at(R"(headroom_row_agent_up{server="s0"})"), 1);
  EXPECT_DOUBLE_EQ(samples.at(R"(headroom_row_agent_up{server="row \"7\"\n"})"), 0);
  EXPECT_EQ(text.find("headroom_row_server_sm_clock_cap_hertz"), std::string::npos);
  EXPECT_EQ(text.find("# TYPE headroom_row_agent_up gauge"),
            text.rfind("# TYPE headroom_row_agent_up gauge"));
}

}  // namespace
}  // namespace headroom::telemetry
