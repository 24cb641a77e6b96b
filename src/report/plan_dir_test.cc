#include "report/plan_dir.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/files.h"
#include "core/testing/fresh_dir.h"
#include "report/testing/sample_plan.h"

namespace headroom::report {
namespace {

using core::testing::FreshDir;

TEST(PlanDirTest, WhatIsWrittenReadsBackTheSame) {
  const std::string dir = FreshDir("round_trip");
  const PlanReport written = testing::SamplePlanReport();
  ASSERT_TRUE(WritePlanDir(dir, written));
  auto read = ReadPlanDir(dir);
  ASSERT_TRUE(read) << read.error().message();
  // The same report, so the same JSON (every field of every struct is in it).
  EXPECT_EQ(PlanReportJson(*read).dump(), PlanReportJson(written).dump());
  ASSERT_TRUE(read->power);
  EXPECT_EQ(read->power->windows.size(), 10u);
  EXPECT_DOUBLE_EQ(read->power->windows[9].max_w, 198'000);
  EXPECT_EQ(read->inputs.description, written.inputs.description);
}

TEST(PlanDirTest, WithoutPowerTraceThereIsNoCsv) {
  const std::string dir = FreshDir("no_power");
  PlanReport written = testing::SamplePlanReport();
  written.power.reset();
  ASSERT_TRUE(WritePlanDir(dir, written));
  EXPECT_FALSE(std::filesystem::exists(dir + "/row-power.csv"));
  auto read = ReadPlanDir(dir);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_FALSE(read->power);
}

TEST(PlanDirTest, ErrorsNameTheDirectoryFileAndField) {
  auto missing = ReadPlanDir("/nonexistent/plan-dir");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), core::Code::kNotFound);
  EXPECT_NE(missing.error().message().find("/nonexistent/plan-dir: no such directory"),
            std::string::npos)
      << missing.error().message();

  const std::string empty = FreshDir("empty");
  std::filesystem::create_directories(empty);
  auto no_plan = ReadPlanDir(empty);
  ASSERT_FALSE(no_plan);
  EXPECT_EQ(no_plan.error().code(), core::Code::kNotFound);
  EXPECT_NE(no_plan.error().message().find(empty + "/plan.json: missing"), std::string::npos)
      << no_plan.error().message();

  const std::string dir = FreshDir("bad_field");
  ASSERT_TRUE(WritePlanDir(dir, testing::SamplePlanReport()));
  auto json = PlanReportJson(testing::SamplePlanReport());
  json["policies"][1]["max_servers"] = "many";
  ASSERT_TRUE(core::WriteFileAtomically(dir + "/plan.json", json.dump()));
  auto bad = ReadPlanDir(dir);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), core::Code::kInvalidArgument);
  EXPECT_NE(bad.error().message().find(dir + "/plan.json: field 'policies[1].max_servers' is of "
                                             "the wrong type"),
            std::string::npos)
      << bad.error().message();

  // Issue 44, finding 9: a count past int's range was cast and wrapped (2^31 -> -2^31).
  json = PlanReportJson(testing::SamplePlanReport());
  json["policies"][1]["max_servers"] = 2147483648u;
  ASSERT_TRUE(core::WriteFileAtomically(dir + "/plan.json", json.dump()));
  auto wrapped = ReadPlanDir(dir);
  ASSERT_FALSE(wrapped) << wrapped->plan.policies[1].max_servers;
  EXPECT_NE(wrapped.error().message().find(dir + "/plan.json: field 'policies[1].max_servers' is "
                                                 "2147483648 (expected a count from 0 to "
                                                 "2147483647"),
            std::string::npos)
      << wrapped.error().message();

  json = PlanReportJson(testing::SamplePlanReport());
  json["week_seeds"] = {7};
  ASSERT_TRUE(core::WriteFileAtomically(dir + "/plan.json", json.dump()));
  auto seeds = ReadPlanDir(dir);
  ASSERT_FALSE(seeds);
  EXPECT_EQ(seeds.error().message(),
            dir +
                "/plan.json: week_seeds lists 1 for 1 planning weeks, 0 stress cases and 2 "
                "unseen weeks");

  ASSERT_TRUE(core::WriteFileAtomically(dir + "/plan.json", "{not json"));
  auto garbled = ReadPlanDir(dir);
  ASSERT_FALSE(garbled);
  EXPECT_NE(garbled.error().message().find("plan.json: not a JSON object"), std::string::npos);

  ASSERT_TRUE(WritePlanDir(dir, testing::SamplePlanReport()));
  std::ofstream(dir + "/row-power.csv", std::ios::app) << "1,2\n";
  auto bad_csv = ReadPlanDir(dir);
  ASSERT_FALSE(bad_csv);
  EXPECT_NE(bad_csv.error().message().find("row-power.csv:12: expected three numbers"),
            std::string::npos)
      << bad_csv.error().message();
}

}  // namespace
}  // namespace headroom::report
