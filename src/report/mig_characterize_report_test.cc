#include "report/mig_characterize_report.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/files.h"
#include "core/testing/fresh_dir.h"
#include "format/html.h"
#include "report/mig_characterize_html.h"
#include "report/testing/every_field.h"
#include "report/testing/sample_mig.h"

namespace headroom::report {
namespace {

using core::testing::FreshDir;

TEST(MigCharacterizeReportTest, WhatIsWrittenReadsBackTheSame) {
  const std::string dir = FreshDir("round_trip");
  const MigCharacterizeReport written = testing::SampleMigCharacterizeReport();
  ASSERT_TRUE(WriteMigCharacterizeDir(dir, written));
  auto read = ReadMigCharacterizeDir(dir);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(MigResultsCsv(read->results), MigResultsCsv(written.results));
  EXPECT_EQ(read->inputs.layouts, written.inputs.layouts);
  EXPECT_EQ(read->inputs.workloads, written.inputs.workloads);
  ASSERT_EQ(read->results.size(), 4u);
  EXPECT_EQ(read->results[3].instances, 2);
  EXPECT_FALSE(read->results[3].per_instance[1].fits);
}

TEST(MigCharacterizeReportTest, TheAnswerComesFromTheBestLayouts) {
  const MigCharacterizeReport r = testing::SampleMigCharacterizeReport();
  const auto best = BestPerWorkload(r.results);
  ASSERT_EQ(best.size(), 2u);
  // resnet: two halves run 2 x 600 samples/s against 1000 at the same 500 W.
  EXPECT_EQ(best[0].fastest->layout, "3g.71gb@0,3g.71gb@4");
  EXPECT_EQ(best[0].leanest->layout, "3g.71gb@0,3g.71gb@4");
  // gpt2-1.5b fits one half only: MIG off wins on both.
  EXPECT_EQ(best[1].fastest->layout, "MIG off");
  EXPECT_EQ(MigCharacterizeAnswer(r),
            "Least energy per sample: 3g x2 for 1 of 2 workloads (-16.7% vs MIG off); most "
            "throughput: 3g x2 for 1 of 2 workloads (+20.0% vs MIG off)");
}

// Issue 46: mig-characterize.json's writer and reader share one field table. Every member is
// set to a value of its own and compared by name after the round trip, so an entry dropped from
// the table fails this test. results.csv is read by its header's column names.
TEST(MigCharacterizeReportTest, EveryFieldReadsBack) {
  const MigCharacterizeReport want = testing::SampleMigCharacterizeReport();
  const std::string dir = FreshDir("every_field");
  ASSERT_TRUE(WriteMigCharacterizeDir(dir, want));
  auto read = ReadMigCharacterizeDir(dir);
  ASSERT_TRUE(read) << read.error().message();
  const MigCharacterizeInputs& in = read->inputs;
  EXPECT_EQ(in.power_limit_w, want.inputs.power_limit_w);
  EXPECT_EQ(in.version, want.inputs.version);
  EXPECT_EQ(in.workloads, want.inputs.workloads);
  EXPECT_EQ(in.layouts, want.inputs.layouts);
  testing::ExpectSameGeometry(in.geometry, want.inputs.geometry);
  ASSERT_EQ(read->results.size(), want.results.size());
  const mig::LayoutResult& r = read->results[3];
  const mig::LayoutResult& w = want.results[3];
  EXPECT_EQ(r.layout, w.layout);  // quoted in the CSV: it holds commas
  EXPECT_EQ(r.workload, w.workload);
  EXPECT_EQ(r.batch, w.batch);
  EXPECT_EQ(r.instances, w.instances);
  EXPECT_EQ(r.power_limited, w.power_limited);
  EXPECT_EQ(r.per_instance[1].fits, w.per_instance[1].fits);
  EXPECT_EQ(r.per_instance[0].slice, w.per_instance[0].slice);
  const auto j = nlohmann::json::parse(*core::ReadFile(dir + "/mig-characterize.json"));
  EXPECT_EQ(j["results"], "results.csv");  // where the results are, for the file's readers
}

TEST(MigCharacterizeReportTest, ReadingIsStrictAndNamesTheFileAndLine) {
  const std::string dir = FreshDir("bad");
  ASSERT_TRUE(WriteMigCharacterizeDir(dir, testing::SampleMigCharacterizeReport()));
  const std::string csv = *core::ReadFile(dir + "/results.csv");

  std::string bad_number = csv;
  bad_number.replace(bad_number.find(",1980,"), 6, ",fast,");
  ASSERT_TRUE(core::WriteFileAtomically(dir + "/results.csv", bad_number));
  auto read = ReadMigCharacterizeDir(dir);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message().find(dir + "/results.csv:2: column 'clock_mhz': 'fast' is not a "
                                              "number"),
            std::string::npos)
      << read.error().message();

  // Issue 44, finding 9: a whole-number cell went through a double and a cast to int, undefined
  // for 1e300 and wrapping at 2^31; nan and inf are not numbers.
  const std::size_t row2 = csv.find('\n') + 1;
  const std::size_t workload_at = csv.find("\",", row2) + 2;  // after the quoted layout
  const std::size_t batch_at = csv.find(',', workload_at) + 1;
  const std::size_t batch_end = csv.find(',', batch_at);
  for (const std::string cell : {"1e300", "2147483648", "2.0"}) {
    std::string bad_integer = csv;
    bad_integer.replace(batch_at, batch_end - batch_at, cell);
    ASSERT_TRUE(core::WriteFileAtomically(dir + "/results.csv", bad_integer));
    read = ReadMigCharacterizeDir(dir);
    ASSERT_FALSE(read) << cell;
    EXPECT_NE(read.error().message().find("results.csv:2: column 'batch': '" + cell +
                                          "' is not a whole number in int's range"),
              std::string::npos)
        << read.error().message();
  }
  for (const std::string cell : {"nan", "inf", "-inf"}) {
    std::string not_finite = csv;
    not_finite.replace(not_finite.find(",1980,"), 6, "," + cell + ",");
    ASSERT_TRUE(core::WriteFileAtomically(dir + "/results.csv", not_finite));
    read = ReadMigCharacterizeDir(dir);
    ASSERT_FALSE(read) << cell;
    EXPECT_NE(read.error().message().find("results.csv:2: column 'clock_mhz': '" + cell +
                                          "' is not a number"),
              std::string::npos)
        << read.error().message();
  }

  ASSERT_TRUE(core::WriteFileAtomically(dir + "/results.csv", csv + "\"MIG off\",x,1\n"));
  read = ReadMigCharacterizeDir(dir);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message().find("results.csv:8: expected 19 fields, found 3"),
            std::string::npos)
      << read.error().message();

  std::string bad_layout = csv;
  for (std::size_t at; (at = bad_layout.find("3g.71gb@0,3g.71gb@4")) != std::string::npos;) {
    bad_layout.replace(at, 19, "3g.71gb@0,9g.99gb@4");
  }
  ASSERT_TRUE(core::WriteFileAtomically(dir + "/results.csv", bad_layout));
  read = ReadMigCharacterizeDir(dir);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message().find("9g.99gb"), std::string::npos) << read.error().message();

  ASSERT_TRUE(core::WriteFileAtomically(dir + "/results.csv", csv));
  ASSERT_TRUE(core::WriteFileAtomically(dir + "/mig-characterize.json",
                                        R"({"inputs": {"power_limit_w": "700"}})"));
  read = ReadMigCharacterizeDir(dir);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message().find(
                "mig-characterize.json: field 'inputs.power_limit_w' is of the wrong type"),
            std::string::npos)
      << read.error().message();

  std::filesystem::remove(dir + "/mig-characterize.json");
  read = ReadMigCharacterizeDir(dir);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), core::Code::kNotFound);
}

TEST(MigCharacterizeReportTest, PageHoldsEveryLayoutAndThePlots) {
  const std::string dir = FreshDir("page");
  const MigCharacterizeReport r = testing::SampleMigCharacterizeReport();
  ASSERT_TRUE(WriteMigCharacterizeDir(dir, r));
  auto written = WriteMigCharacterizeReport(dir);
  ASSERT_TRUE(written) << written.error().message();
  auto html = core::ReadFile(written->path);
  ASSERT_TRUE(html);
  EXPECT_NE(html->find(format::HtmlEscape(MigCharacterizeAnswer(r))), std::string::npos);
  for (const char* name : {"slots-0", "slots-1", "throughput", "energy", "power"}) {
    EXPECT_NE(html->find(fmt::format("data-plot=\"{}\"", name)), std::string::npos) << name;
  }
  EXPECT_NE(html->find("does not fit"), std::string::npos);
  // Both attribution methods, per instance.
  EXPECT_NE(html->find("<td>250.5</td><td>240.2</td>"), std::string::npos);
}

}  // namespace
}  // namespace headroom::report
