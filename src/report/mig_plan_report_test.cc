#include "report/mig_plan_report.h"

#include <filesystem>
#include <functional>

#include <gtest/gtest.h>

#include "core/files.h"
#include "core/testing/fresh_dir.h"
#include "format/html.h"
#include "report/mig_plan_html.h"
#include "report/testing/every_field.h"
#include "report/testing/sample_mig.h"

namespace headroom::report {
namespace {

using core::testing::FreshDir;

TEST(MigPlanReportTest, TheAnswerComesFromThePlanAgainstTheWholeGpu) {
  MigPlanReport r = testing::SampleMigPlanReport();
  // 70 kJ against 100 kJ; 1e6 samples in 600 s against 900 s.
  EXPECT_EQ(MigPlanAnswer(r),
            "Layout 3g@0,2g@4,1g@6,1g@7 on the h200-141gb-sxm: 30.0% less energy, +50.0% "
            "throughput vs jobs one after another on the whole GPU");
  EXPECT_EQ(MigPlanQuestion(r),
            "Which MIG layout runs these 4 training jobs on one h200-141gb-sxm (power limit 700 "
            "W) with the least energy, all done within 900 s?");
  r.plan.energy_j = 120'000;
  EXPECT_NE(MigPlanAnswer(r).find("20.0% more energy"), std::string::npos) << MigPlanAnswer(r);
  r.plan = r.baselines.front();
  EXPECT_NE(MigPlanAnswer(r).find("MIG off on the h200-141gb-sxm"), std::string::npos);
  r.plan = r.layouts.front();
  EXPECT_NE(MigPlanAnswer(r).find("No option runs every job"), std::string::npos);
}

TEST(MigPlanReportTest, QueuesFollowStartTimes) {
  const MigOption o = testing::SampleMigPlanReport().baselines.front();  // one instance
  ASSERT_EQ(o.Queues().size(), 1u);
  EXPECT_EQ(o.Queues()[0],
            (std::vector<std::string>{"effnet", "gpt2 <small>", "resnet", "densenet"}));
}

TEST(MigPlanReportTest, WhatIsWrittenReadsBackTheSame) {
  const std::string dir = FreshDir("round_trip");
  const MigPlanReport written = testing::SampleMigPlanReport();
  ASSERT_TRUE(WriteMigPlanDir(dir, written));
  auto read = ReadMigPlanDir(dir);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(MigPlanJson(*read).dump(), MigPlanJson(written).dump());
  EXPECT_EQ(read->layouts.front().reason, written.layouts.front().reason);
  EXPECT_EQ(read->plan.instances[1].start, 4);
}

void ExpectSameOption(const MigOption& read, const MigOption& want, const MigOption* reference,
                      const std::string& at) {
  EXPECT_EQ(read.name, want.name) << at;
  EXPECT_EQ(read.layout, want.layout) << at;
  EXPECT_EQ(read.feasible, want.feasible) << at;
  EXPECT_EQ(read.reason, want.reason) << at;
  ASSERT_EQ(read.instances.size(), want.instances.size()) << at;
  for (std::size_t i = 0; i < want.instances.size(); ++i) {
    const MigInstance& got = read.instances[i];
    const MigInstance& w = want.instances[i];
    EXPECT_EQ(got.slice, w.slice) << at << i;
    EXPECT_EQ(got.profile, w.profile) << at << i;
    EXPECT_EQ(got.start, w.start) << at << i;
    EXPECT_EQ(got.memory_slices, w.memory_slices) << at << i;
    EXPECT_EQ(got.compute_slices, w.compute_slices) << at << i;
    EXPECT_EQ(got.sm_count, w.sm_count) << at << i;
    EXPECT_EQ(got.memory_gib, w.memory_gib) << at << i;
  }
  EXPECT_EQ(read.energy_j, want.energy_j) << at;
  EXPECT_EQ(read.makespan_s, want.makespan_s) << at;
  EXPECT_EQ(read.samples_per_s, want.samples_per_s) << at;
  EXPECT_EQ(read.samples_per_j, want.samples_per_j) << at;
  // Derived by the writer from the whole-GPU baseline.
  if (want.feasible) {
    EXPECT_EQ(read.energy_vs_whole_gpu, want.energy_j / reference->energy_j - 1) << at;
    EXPECT_EQ(read.throughput_vs_whole_gpu, want.samples_per_s / reference->samples_per_s - 1)
        << at;
  } else {
    EXPECT_FALSE(read.energy_vs_whole_gpu) << at;
    EXPECT_FALSE(read.throughput_vs_whole_gpu) << at;
  }
  EXPECT_EQ(read.meets_bound, want.meets_bound) << at;
  EXPECT_EQ(read.overrun_s, want.overrun_s) << at;
  EXPECT_EQ(read.unattributed_j, want.unattributed_j) << at;
  ASSERT_EQ(read.jobs.size(), want.jobs.size()) << at;
  for (std::size_t k = 0; k < want.jobs.size(); ++k) {
    const MigJobRun& got = read.jobs[k];
    const MigJobRun& w = want.jobs[k];
    EXPECT_EQ(got.job, w.job) << at << k;
    EXPECT_EQ(got.instance, w.instance) << at << k;
    EXPECT_EQ(got.slice, want.instances[w.instance].slice) << at << k;  // derived by the writer
    EXPECT_EQ(got.start_s, w.start_s) << at << k;
    EXPECT_EQ(got.end_s, w.end_s) << at << k;
    EXPECT_EQ(got.samples_per_s, w.samples_per_s) << at << k;
    EXPECT_EQ(got.energy_j, w.energy_j) << at << k;
    EXPECT_EQ(got.energy_sm_share_j, w.energy_sm_share_j) << at << k;
    EXPECT_EQ(got.meets_deadline, w.meets_deadline) << at << k;
    EXPECT_EQ(got.explanation, w.explanation) << at << k;
  }
}

// Issue 46: mig-plan.json's writer and reader share one field table. Every member is set to a
// value of its own (the sample's, a few changed from their defaults here) and compared by name
// after the round trip, so an entry dropped from the table fails this test.
TEST(MigPlanReportTest, EveryFieldReadsBack) {
  MigPlanReport want = testing::SampleMigPlanReport();
  want.plan.meets_bound = false;
  want.plan.overrun_s = 42;
  want.plan.unattributed_j = 1234;
  const std::string dir = FreshDir("every_field");
  ASSERT_TRUE(WriteMigPlanDir(dir, want));
  auto read = ReadMigPlanDir(dir);
  ASSERT_TRUE(read) << read.error().message();
  const MigPlanInputs& in = read->inputs;
  EXPECT_EQ(in.jobs_file, want.inputs.jobs_file);
  EXPECT_EQ(in.power_limit_w, want.inputs.power_limit_w);
  EXPECT_EQ(in.objective, want.inputs.objective);
  EXPECT_EQ(in.makespan_bound_s, want.inputs.makespan_bound_s);
  EXPECT_EQ(in.version, want.inputs.version);
  testing::ExpectSameGeometry(in.geometry, want.inputs.geometry);
  EXPECT_EQ(read->jobs, want.jobs);
  EXPECT_EQ(read->layouts_considered, want.layouts_considered);
  EXPECT_EQ(read->schedules_evaluated, want.schedules_evaluated);
  const MigOption* reference = want.Reference();
  ASSERT_NE(reference, nullptr);
  ExpectSameOption(read->plan, want.plan, reference, "plan");
  ASSERT_EQ(read->baselines.size(), want.baselines.size());
  for (std::size_t i = 0; i < want.baselines.size(); ++i) {
    ExpectSameOption(read->baselines[i], want.baselines[i], reference, "baselines");
  }
  ASSERT_EQ(read->layouts.size(), want.layouts.size());
  ExpectSameOption(read->layouts[0], want.layouts[0], reference, "layouts");
  EXPECT_EQ(read->why, want.why);

  // Repeated at the top for the file's other readers, never read back.
  const nlohmann::ordered_json j = MigPlanJson(want);
  EXPECT_EQ(j["gpu"], want.inputs.geometry.gpu);
  EXPECT_EQ(j["power_limit_w"], want.inputs.power_limit_w);
  EXPECT_EQ(j["objective"], want.inputs.objective);
  EXPECT_EQ(j["makespan_bound_s"], *want.inputs.makespan_bound_s);
}

// Writes the sample with one change made to its JSON and reads it back.
core::Result<MigPlanReport> ReadChanged(const std::string& dir,
                                        const std::function<void(nlohmann::ordered_json&)>& edit) {
  std::filesystem::create_directories(dir);
  nlohmann::ordered_json j = MigPlanJson(testing::SampleMigPlanReport());
  edit(j);
  EXPECT_TRUE(core::WriteFileAtomically(dir + "/mig-plan.json", j.dump()));
  return ReadMigPlanDir(dir);
}

TEST(MigPlanReportTest, ReadingIsStrictAndNamesTheFileAndField) {
  auto missing = ReadMigPlanDir("/nonexistent/mig-dir");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), core::Code::kNotFound);

  const std::string empty = FreshDir("empty");
  std::filesystem::create_directories(empty);
  auto no_file = ReadMigPlanDir(empty);
  ASSERT_FALSE(no_file);
  EXPECT_NE(no_file.error().message().find(empty + "/mig-plan.json: missing"), std::string::npos)
      << no_file.error().message();

  const std::string dir = FreshDir("bad");
  struct Case {
    std::function<void(nlohmann::ordered_json&)> edit;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {[](auto& j) { j["baselines"][1]["energy_j"] = "lots"; },
            "mig-plan.json: field 'baselines[1].energy_j' is of the wrong type"},
           {[](auto& j) { j["plan"]["jobs"][2].erase("end_s"); },
            "mig-plan.json: field 'plan.jobs[2].end_s' is missing"},
           {[](auto& j) { j["inputs"]["mig"].erase("memory_slices"); },
            "field 'inputs.mig.memory_slices' is missing"},
           {[](auto& j) { j["plan"]["instances"][3]["start"] = 8; },
            "field 'plan.instances[3].start' and 'memory_slices' place the instance outside"},
           {[](auto& j) { j["plan"]["jobs"][0]["instance"] = 9; },
            "field 'plan.jobs[0].instance' is 9, but the option has 4 instances"},
           {[](auto& j) { j.erase("layouts"); }, "field 'layouts' is missing"}}) {
    auto read = ReadChanged(dir, c.edit);
    ASSERT_FALSE(read) << c.message;
    EXPECT_EQ(read.error().code(), core::Code::kInvalidArgument);
    EXPECT_NE(read.error().message().find(c.message), std::string::npos) << read.error().message();
  }
  ASSERT_TRUE(core::WriteFileAtomically(dir + "/mig-plan.json", "[1, 2]"));
  auto not_object = ReadMigPlanDir(dir);
  ASSERT_FALSE(not_object);
  EXPECT_NE(not_object.error().message().find("not a JSON object"), std::string::npos);
}

TEST(MigPlanReportTest, PageHoldsTheAnswerEveryLayoutAndThePlots) {
  const std::string dir = FreshDir("page");
  const MigPlanReport r = testing::SampleMigPlanReport();
  ASSERT_TRUE(WriteMigPlanDir(dir, r));
  auto written = WriteMigPlanReport(dir);
  ASSERT_TRUE(written) << written.error().message();
  auto html = core::ReadFile(written->path);
  ASSERT_TRUE(html);
  EXPECT_NE(html->find(format::HtmlEscape(MigPlanAnswer(r))), std::string::npos);
  // One slot drawing per option, then the two gnuplot plots.
  for (const char* name :
       {"slots-0", "slots-1", "slots-2", "slots-3", "energy-makespan", "timeline"}) {
    EXPECT_NE(html->find(fmt::format("data-plot=\"{}\"", name)), std::string::npos) << name;
  }
  EXPECT_EQ(html->find("data-plot=\"slots-4\""), std::string::npos);
  // A job's name is text, never markup.
  EXPECT_EQ(html->find("<small>"), std::string::npos);
  EXPECT_NE(html->find("gpt2 &lt;small&gt;"), std::string::npos);
  // The timeline's data: one block per job, start and end on its instance's row.
  if (written->warnings.empty()) {
    auto dat = core::ReadFile(dir + "/plots/timeline.dat");
    ASSERT_TRUE(dat);
    EXPECT_NE(dat->find("# effnet\n0 0\n300 0\n"), std::string::npos) << *dat;
  }
}

TEST(MigPlanReportTest, TheTableListsEveryOptionAgainstTheWholeGpu) {
  MigPlanReport r = testing::SampleMigPlanReport();
  r.layouts.push_back(r.baselines.back());
  r.layouts.back().meets_bound = false;
  r.layouts.back().overrun_s = 42;
  const std::string text = MigPlanText(r, format::TextStyle());
  EXPECT_TRUE(
      text.starts_with("MIG plan for 4 jobs on h200-141gb-sxm (power limit 700 W): least "
                       "energy, makespan at most 900 s\nOPTION"))
      << text;
  EXPECT_NE(text.find(format::FormatChange(70'000.0 / 100'000 - 1)), std::string::npos) << text;
  EXPECT_NE(text.find("infeasible: densenet: needs 30.0 GiB"), std::string::npos) << text;
  EXPECT_NE(text.find("misses the bound or a deadline by 42 s"), std::string::npos) << text;
  EXPECT_NE(text.find("\nWhy (planned):\n  effnet on "), std::string::npos) << text;
  EXPECT_TRUE(
      text.ends_with("\n15 partitions searched, 321 schedules evaluated. Energy per job: "
                     "idle power by SM share, dynamic power by activity; 1.0 kJ of idle "
                     "power falls on instances with no job left.\n"))
      << text;
}

TEST(MigPlanReportTest, WithoutAFeasibleWholeGpuThereIsNoChangeToShow) {
  MigPlanReport r = testing::SampleMigPlanReport();
  r.baselines.front().feasible = false;
  r.baselines.front().reason = "too big";
  r.inputs.objective = "makespan";
  r.inputs.makespan_bound_s.reset();
  const std::string text = MigPlanText(r, format::TextStyle());
  EXPECT_NE(text.find("): shortest makespan\n"), std::string::npos) << text;
  EXPECT_EQ(text.find('%'), std::string::npos) << text;
  EXPECT_NE(text.find("infeasible: too big"), std::string::npos) << text;
  const std::string colour = MigPlanText(r, format::TextStyle(true));
  EXPECT_TRUE(colour.starts_with("\x1b[1m")) << colour;
  EXPECT_NE(colour.find("\x1b[32m"), std::string::npos) << colour;  // the plan's row
}

}  // namespace
}  // namespace headroom::report
