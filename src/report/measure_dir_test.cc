#include "report/measure_dir.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/testing/fresh_dir.h"

namespace headroom::report {
namespace {

// A measure directory with no samples and no phases, `exit_code` as given (JSON text).
std::string MeasureDirWithExitCode(const std::string& name, const std::string& exit_code) {
  const std::string dir = core::testing::FreshDir(name);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/summary.json")
      << R"({"command": ["true"], "backend": "sim", "exit_code": )" << exit_code
      << R"(, "complete": true, "duration_s": 1.0, "inputs": {"interval": "100ms",
          "version": "0"}, "error": null, "gpus": [], "total": {"energy_j": 0, "avg_power_w": 0,
          "peak_power_sum_w": 0},
          "work": null, "phases": []})";
  std::ofstream(dir + "/series.csv") << "time_s,gpu,power_w\n";
  std::ofstream(dir + "/phases.csv") << "name,start_s,end_s\n";
  return dir;
}

// Issue 44, finding 9: 1e300 went through an undefined cast ("exited with -2147483648").
TEST(MeasureDirTest, AnExitCodeOutsideIntIsAnErrorNamingTheField) {
  auto ok = ReadMeasureDir(MeasureDirWithExitCode("ok", "-9"));
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(ok->exit_code, -9);
  for (const std::string bad : {"1e300", "2147483648", "1.5"}) {
    const std::string dir = MeasureDirWithExitCode("bad", bad);
    auto read = ReadMeasureDir(dir);
    ASSERT_FALSE(read) << bad << " read as " << read->exit_code;
    EXPECT_EQ(read.error().code(), core::Code::kInvalidArgument);
    EXPECT_NE(read.error().message().find(dir + "/summary.json: field 'exit_code' is "),
              std::string::npos)
        << read.error().message();
  }
}

// A report with every member set by name to its own value.
MeasureReport EveryFieldSet() {
  MeasureReport m;
  m.command = {"python", "train.py"};
  m.exit_code = -15;
  m.backend = "sim";
  m.error = "the sampler stopped";
  m.duration_s = 4.5;
  m.gpus = {{.index = 3,
             .uuid = "GPU-3",
             .name = "NVIDIA A100",
             .energy_j = 812.5,
             .energy_source = "counter",
             .energy_source_note = "a note",
             .counter_energy_j = 812.5,
             .integrated_energy_j = 810.25,
             .counter_vs_integration = 0.003,
             .counter_update_period_s = 0.1,
             .counter_update_period_is_upper_bound = true,
             .counter_resets = 2,
             .power_reading = "1s-average",
             .duration_s = 4.25,
             .avg_power_w = 203.5,
             .peak_power_w = 398.5,
             .capped_s = 1.5,
             .throttled_s = 0.5,
             .samples = 45,
             .driver_power_samples = 90}};
  m.energy_j = 812.5;
  m.avg_power_w = 180.5;
  m.peak_power_sum_w = 398.5;
  m.work = MeasureReport::Work{
      .units = 400, .unit = "tokens", .throughput_per_s = 88.5, .energy_per_unit_j = 2.03};
  m.phases = {{.name = "prefill",
               .duration_s = 1.5,
               .energy_j = 500.5,
               .avg_power_w = 333.5,
               .work = 100,
               .energy_per_unit_j = 5.005}};
  m.interval = "50ms";
  m.version = "9.9.9";

  return m;
}

// Every member of one GPU's entry, compared by name.
void ExpectSameGpu(const MeasureReport::Gpu& g, const MeasureReport::Gpu& w) {
  EXPECT_EQ(g.index, w.index);
  EXPECT_EQ(g.uuid, w.uuid);
  EXPECT_EQ(g.name, w.name);
  EXPECT_EQ(g.energy_j, w.energy_j);
  EXPECT_EQ(g.energy_source, w.energy_source);
  EXPECT_EQ(g.energy_source_note, w.energy_source_note);
  EXPECT_EQ(g.counter_energy_j, w.counter_energy_j);
  EXPECT_EQ(g.integrated_energy_j, w.integrated_energy_j);
  EXPECT_EQ(g.counter_vs_integration, w.counter_vs_integration);
  EXPECT_EQ(g.counter_update_period_s, w.counter_update_period_s);
  EXPECT_EQ(g.counter_update_period_is_upper_bound, w.counter_update_period_is_upper_bound);
  EXPECT_EQ(g.counter_resets, w.counter_resets);
  EXPECT_EQ(g.power_reading, w.power_reading);
  EXPECT_EQ(g.duration_s, w.duration_s);
  EXPECT_EQ(g.avg_power_w, w.avg_power_w);
  EXPECT_EQ(g.peak_power_w, w.peak_power_w);
  EXPECT_EQ(g.capped_s, w.capped_s);
  EXPECT_EQ(g.throttled_s, w.throttled_s);
  EXPECT_EQ(g.samples, w.samples);
  EXPECT_EQ(g.driver_power_samples, w.driver_power_samples);
}

// Issue 46: summary.json's writer (MeasureJson) and reader share one field table. Every member
// is set by name to its own value and compared by name after the round trip, so an entry dropped
// from the table fails this test.
TEST(MeasureDirTest, EveryFieldReadsBack) {
  const MeasureReport m = EveryFieldSet();
  const std::string dir = core::testing::FreshDir("every_field");
  std::filesystem::create_directories(dir);
  nlohmann::ordered_json j = MeasureReportJson(m);
  j.update(MeasureInputsJson(m.interval, m.version));  // as `measure --out` adds
  std::ofstream(dir + "/summary.json") << j.dump(2);
  std::ofstream(dir + "/series.csv") << "time_s,gpu,power_w\n0,3,100\n";
  std::ofstream(dir + "/phases.csv") << "name,start_s,end_s\nprefill,0,1.5\n";
  auto read = ReadMeasureDir(dir);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(read->command, m.command);
  EXPECT_EQ(read->exit_code, m.exit_code);
  EXPECT_EQ(read->backend, m.backend);
  EXPECT_EQ(read->error, m.error);
  EXPECT_EQ(read->duration_s, m.duration_s);
  ASSERT_EQ(read->gpus.size(), 1u);
  ExpectSameGpu(read->gpus[0], m.gpus[0]);
  EXPECT_EQ(read->energy_j, m.energy_j);
  EXPECT_EQ(read->avg_power_w, m.avg_power_w);
  EXPECT_EQ(read->peak_power_sum_w, m.peak_power_sum_w);
  ASSERT_TRUE(read->work);
  EXPECT_EQ(read->work->units, m.work->units);
  EXPECT_EQ(read->work->unit, m.work->unit);
  EXPECT_EQ(read->work->throughput_per_s, m.work->throughput_per_s);
  EXPECT_EQ(read->work->energy_per_unit_j, m.work->energy_per_unit_j);
  ASSERT_EQ(read->phases.size(), 1u);
  EXPECT_EQ(read->phases[0].name, m.phases[0].name);
  EXPECT_EQ(read->phases[0].duration_s, m.phases[0].duration_s);
  EXPECT_EQ(read->phases[0].energy_j, m.phases[0].energy_j);
  EXPECT_EQ(read->phases[0].avg_power_w, m.phases[0].avg_power_w);
  EXPECT_EQ(read->phases[0].work, m.phases[0].work);
  EXPECT_EQ(read->phases[0].energy_per_unit_j, m.phases[0].energy_per_unit_j);
  EXPECT_EQ(read->interval, m.interval);
  EXPECT_EQ(read->version, m.version);
  EXPECT_FALSE(j["complete"]);  // written for the file's other readers, derived from the error
}

}  // namespace
}  // namespace headroom::report
