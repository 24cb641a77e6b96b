#include "report/device_report.h"

#include <sstream>

#include <gtest/gtest.h>

namespace headroom::report {
namespace {

MonitorRow Row(double t, bool with_power) {
  MonitorRow row;
  row.time_s = t;
  row.gpu = 1;
  if (with_power) row.snapshot.power_instant = core::Watts(251.5);
  row.snapshot.sm_clock = core::Megahertz(1410);
  row.snapshot.throttle_reasons = gpu::kThrottleSwPowerCap;
  row.energy_since_start = core::Joules(12.5);
  return row;
}

TEST(MonitorWriterTest, CsvHasOneHeaderAndEmptyCellsForMissingValues) {
  std::ostringstream out;
  MonitorWriter writer(MonitorFormat::kCsv, out);
  writer.Write(Row(0.1, true));
  writer.Write(Row(0.2, false));
  std::istringstream lines(out.str());
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header.rfind("time_s,gpu,power_w,power_avg_w,energy_j,sm_clock_mhz", 0), 0u) << header;
  EXPECT_EQ(first.rfind("0.1,1,251.5,,12.5,1410.0", 0), 0u) << first;
  EXPECT_EQ(second.rfind("0.2,1,,,12.5", 0), 0u) << second;
  EXPECT_NE(first.find("power_cap"), std::string::npos);
}

TEST(MonitorWriterTest, JsonlRowsParse) {
  std::ostringstream out;
  MonitorWriter writer(MonitorFormat::kJsonl, out);
  writer.Write(Row(0.5, true));
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_DOUBLE_EQ(j["power_w"].get<double>(), 251.5);
  EXPECT_TRUE(j["temperature_c"].is_null());
  EXPECT_EQ(j["throttle"], "power_cap");
}

TEST(MonitorWriterTest, TableShowsDashForMissing) {
  std::ostringstream out;
  MonitorWriter writer(MonitorFormat::kTable, out);
  writer.Write(Row(1.0, false));
  EXPECT_NE(out.str().find("POWER W"), std::string::npos);
  EXPECT_NE(out.str().find(" -"), std::string::npos);
}

TEST(MonitorFormatTest, ParsesKnownNamesOnly) {
  EXPECT_EQ(*ParseMonitorFormat("csv"), MonitorFormat::kCsv);
  auto bad = ParseMonitorFormat("xml");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("'xml'"), std::string::npos);
}

TEST(GpuListingTest, JsonHasCatalogFields) {
  gpu::GpuListing g;
  g.info.index = 0;
  g.info.name = "NVIDIA A100-SXM4-80GB";
  g.info.memory_total_bytes = 80ULL << 30;
  g.info.sm_clock_max = core::Megahertz(1410);
  g.snapshot.power_limits = gpu::PowerLimitState{
      core::Watts(100), core::Watts(400), core::Watts(400), core::Watts(300), core::Watts(300)};
  const auto j = GpuListingJson(g);
  EXPECT_EQ(j["tdp_w"], 400.0);
  EXPECT_EQ(j["power_limit_w"], 300.0);
  EXPECT_EQ(j["sm_clock_max_mhz"], 1410.0);
  EXPECT_EQ(j["memory_total_bytes"], 80ULL << 30);
  EXPECT_TRUE(j["sm_clock_lock"].is_null());
  EXPECT_NE(GpuListingTable({g}).find("NVIDIA A100-SXM4-80GB"), std::string::npos);
}

}  // namespace
}  // namespace headroom::report
