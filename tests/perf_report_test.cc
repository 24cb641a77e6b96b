// The reports of `headroom simulate`, `characterize` and `measure` (--report --out DIR), as a
// user makes them: each command on a small input, the files it writes, `headroom report DIR`
// rebuilding the identical page from the directory alone, and a damaged file refused with
// exit 2 and one line naming the file and what is wrong. The pages in a browser:
// report_browser_test.cc.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "headroom_command.h"

namespace {

using headroom::testing::CommandRun;
using headroom::testing::Contains;
using headroom::testing::Headroom;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// A fresh directory under the test's temporary directory.
std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// The data-plot names of the page's figures, in order.
std::vector<std::string> Figures(const std::string& html) {
  std::vector<std::string> names;
  const std::string key = "data-plot=\"";
  for (std::size_t at = html.find(key); at != std::string::npos; at = html.find(key, at + 1)) {
    const std::size_t start = at + key.size();
    names.push_back(html.substr(start, html.find('"', start) - start));
  }
  return names;
}

// The report exists, holds exactly `plots` (each drawn: an inline <svg>), and `headroom report
// DIR` rebuilds the same page from the directory alone.
void ExpectReportRebuilds(const std::string& dir, const std::vector<std::string>& plots) {
  const std::string report = dir + "/report.html";
  const std::string first = ReadAll(report);
  ASSERT_FALSE(first.empty()) << report;
  EXPECT_EQ(Figures(first), plots);
  EXPECT_FALSE(Contains(first, "Plot not drawn"));
  for (const std::string& name : plots) {
    EXPECT_TRUE(std::filesystem::exists(fmt::format("{}/plots/{}.svg", dir, name))) << name;
  }
  std::filesystem::remove_all(dir + "/plots");
  std::filesystem::remove(report);
  const CommandRun rebuilt = Headroom("report " + dir);
  ASSERT_EQ(rebuilt.exit_code, 0) << rebuilt.out;
  EXPECT_EQ(rebuilt.out, "report: " + report + "\n");
  EXPECT_TRUE(ReadAll(report) == first) << "report DIR wrote a different page";
}

// Replaces the first `from` in DIR/FILE with `to`, expects `headroom report DIR` to exit 2 with
// one line holding `says`, then restores the file.
void ExpectDamageNamed(const std::string& dir, const std::string& file, const std::string& from,
                       const std::string& to, const std::string& says) {
  const std::string path = dir + "/" + file;
  const std::string good = ReadAll(path);
  const std::size_t at = good.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in " << path;
  std::string bad = good;
  bad.replace(at, from.size(), to);
  WriteAll(path, bad);
  const CommandRun run = Headroom("report " + dir);
  EXPECT_EQ(run.exit_code, 2) << file << ": " << run.out;
  EXPECT_TRUE(Contains(run.out, says)) << "expected: " << says << "\ngot: " << run.out;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
  WriteAll(path, good);
}

TEST(PerfReportTest, SimulateReportWithTheUncappedRowBesideIt) {
  const std::string dir = FreshDir("headroom_simulate_report");
  const CommandRun run = Headroom(fmt::format(
      "simulate --config {} --policy polca --report --out {}", SMALL_ROW_SCENARIO, dir));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(Contains(run.out, "report: " + dir + "/report.html\n")) << run.out;
  for (const char* file : {"summary.json", "power.csv", "requests.csv", "uncapped-requests.csv"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + file)) << file;
  }
  const std::string page = ReadAll(dir + "/report.html");
  EXPECT_TRUE(Contains(page, "class=\"answer\">polca on 4 servers: peak ")) << page.substr(0, 3000);
  EXPECT_TRUE(Contains(page, " brakes</h1>") || Contains(page, " brake</h1>"));
  EXPECT_TRUE(Contains(page, " vs uncapped, ")) << "the answer compares with the uncapped row";
  ExpectReportRebuilds(dir, {"row-power", "latency-hp", "latency-lp", "ttft"});

  ExpectDamageNamed(dir, "requests.csv", "e2e_s\n", "e2e_s\n1,xp,0,10,10,0.1,0.1,1\n",
                    dir + "/requests.csv:2: column 'priority': 'xp' is neither hp nor lp");
  ExpectDamageNamed(dir, "power.csv", "time_s,row_w", "time_s,row_kw",
                    dir + "/power.csv:1: no column 'row_w'");
  ExpectDamageNamed(dir, "summary.json", "\"t1_frac\"", "\"t1\"",
                    dir + "/summary.json: field 'inputs.t1_frac' is missing");
  ExpectDamageNamed(dir, "uncapped-requests.csv", "e2e_s\n", "e2e_s\n1,2\n",
                    dir + "/uncapped-requests.csv:2: expected 8 fields, found 2");
}

TEST(PerfReportTest, SimulateWithoutReportIsRebuiltPerPriorityOnly) {
  const std::string dir = FreshDir("headroom_simulate_plain");
  const CommandRun run = Headroom(
      fmt::format("simulate --config {} --policy polca --json --out {}", SMALL_ROW_SCENARIO, dir));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/uncapped-requests.csv"));
  const CommandRun report = Headroom("report " + dir);
  ASSERT_EQ(report.exit_code, 0) << report.out;
  const std::string page = ReadAll(dir + "/report.html");
  EXPECT_EQ(Figures(page),
            (std::vector<std::string>{"row-power", "latency-hp", "latency-lp", "ttft"}));
  // The answer quotes absolute latencies: there is nothing to compare with.
  const std::size_t answer = page.find("class=\"answer\">");
  ASSERT_NE(answer, std::string::npos);
  const std::string headline = page.substr(answer, page.find("</h1>", answer) - answer);
  EXPECT_FALSE(Contains(headline, "vs uncapped")) << headline;
  EXPECT_TRUE(Contains(headline, "HP P50 ")) << headline;
}

TEST(PerfReportTest, CharacterizeReportShowsTheParetoFrontAndPhases) {
  const std::string dir = FreshDir("headroom_characterize_report");
  const CommandRun run = Headroom(
      "characterize --model llama2-70b --gpu a100-80gb --sm-clocks 1110,1260 --power-limits "
      "250,300 --prompts 256,2048 --batches 1 --slo 10% --report --out " +
      dir);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(Contains(run.out, "report: " + dir + "/report.html\n")) << run.out;
  const std::string page = ReadAll(dir + "/report.html");
  EXPECT_TRUE(Contains(page, "class=\"answer\">sm_clock=")) << page.substr(0, 3000);
  EXPECT_TRUE(Contains(page, "<h2>Prefill and decode</h2>"));
  ExpectReportRebuilds(dir, {"power-vs-clock", "latency-vs-clock", "power-vs-limit",
                             "latency-vs-limit", "pareto", "power-over-time", "phase-power"});
  // The default's trace is split at its prefill time: two series, prefill and decode.
  EXPECT_TRUE(Contains(ReadAll(dir + "/plots/power-over-time.dat"), "# default, prefill\n"));
  EXPECT_TRUE(Contains(ReadAll(dir + "/plots/power-over-time.dat"), "# default, decode\n"));

  ExpectDamageNamed(dir, "results.csv", "sm_clock=1110MHz", "sm_clock=fast",
                    "results.csv:4: column 'setting': 'sm_clock=fast' is not a setting");
  ExpectDamageNamed(dir, "power-trace.csv", "default,0.0", "default,zero",
                    dir + "/power-trace.csv:2: column 'time_s': 'zero");
  ExpectDamageNamed(dir, "summary.json", "\"interval\"", "\"period\"",
                    dir + "/summary.json: field 'inputs.interval' is missing");
  EXPECT_EQ(Headroom("characterize --report -- true").exit_code, 2);
}

TEST(PerfReportTest, MeasureReportColoursThePhasesTheProgramMarked) {
  const std::string dir = FreshDir("headroom_measure_report");
  const CommandRun run = Headroom(
      "measure --backend sim --sim-count 2 --sim-load inference --interval 50ms --work 100 "
      "--unit tokens --report --out " +
      dir +
      " -- bash -c 'echo \"phase prefill\" > $HEADROOM_MARKERS; sleep 0.4; "
      "echo \"phase decode\" > $HEADROOM_MARKERS; sleep 0.6'");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(Contains(run.out, "report: " + dir + "/report.html\n")) << run.out;
  const std::string phases = ReadAll(dir + "/phases.csv");
  EXPECT_EQ(phases.rfind("name,start_s,end_s\nprefill,", 0), 0u) << phases;
  EXPECT_TRUE(Contains(phases, "\ndecode,")) << phases;
  const std::string page = ReadAll(dir + "/report.html");
  EXPECT_TRUE(Contains(page, "<h2>Phases</h2>"));
  EXPECT_TRUE(Contains(page, "100 tokens at ")) << page.substr(0, 3000);
  ExpectReportRebuilds(dir, {"power", "phase-power"});
  // Two GPUs summed per round, coloured by phase.
  const std::string data = ReadAll(dir + "/plots/power.dat");
  EXPECT_TRUE(Contains(data, "# prefill\n")) << data.substr(0, 500);
  EXPECT_TRUE(Contains(data, "# decode\n")) << data.substr(0, 500);

  ExpectDamageNamed(dir, "series.csv", "time_s,gpu,power_w", "time_s,gpu,watts",
                    dir + "/series.csv:1: no column 'power_w'");
  ExpectDamageNamed(dir, "phases.csv", "prefill,", "prefill,soon",
                    dir + "/phases.csv:2: column 'start_s': 'soon");
  ExpectDamageNamed(dir, "summary.json", "\"total\"", "\"all\"",
                    dir + "/summary.json: field 'total' is missing");
  // --report needs a directory, not the series file.
  const CommandRun file = Headroom("measure --backend sim --report --out x.csv -- true");
  EXPECT_EQ(file.exit_code, 2) << file.out;
  EXPECT_TRUE(Contains(file.out, "--report needs --out DIR")) << file.out;
}

TEST(PerfReportTest, ReportOfADirectoryOfNoKnownCommandNamesWhatIsMissing) {
  const std::string dir = FreshDir("headroom_report_unknown");
  std::filesystem::create_directories(dir);
  WriteAll(dir + "/summary.json", "{}");
  const CommandRun run = Headroom("report " + dir);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  // summary.json alone marks no command (simulate and characterize both write one).
  EXPECT_TRUE(Contains(run.out, dir + ": holds none of study.json, plan.json, mig-plan.json, "
                                      "mig-characterize.json, requests.csv, results.csv, "
                                      "series.csv"))
      << run.out;
}

}  // namespace
