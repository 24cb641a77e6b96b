// `headroom mig workloads | plan | characterize` as a user runs them: tables, JSON, files written,
// exit codes; and characterize on a "real" GPU through the fake libnvidia-ml.so.1 (MIG state in a
// file): one copy of the command per instance with its own MIG UUID, energy attributed, the
// original layout restored after the sweep, after a failure and after Ctrl-C.
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "headroom_command.h"

namespace {

using headroom::testing::CommandRun;
using headroom::testing::Contains;
using headroom::testing::Headroom;
namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class TempDir {
 public:
  TempDir() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() / fmt::format("headroom-{}-{}", test->name(), ::getpid());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(MigPlanCliTest, WorkloadsListsTheMeasuredWorkloadsAndTheirFit) {
  const CommandRun run = Headroom("mig workloads --gpu a100-80gb --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["gpu"], "a100-80gb-sxm");
  EXPECT_EQ(j["reference_gpu"], "h200-141gb-sxm");
  ASSERT_EQ(j["workloads"].size(), 18u);
  for (const auto& w : j["workloads"]) {
    EXPECT_GT(w["whole_gpu_samples_per_s"].get<double>(), 0) << w["workload"];
    EXPECT_GT(w["per_sample_s"].get<double>(), 0) << w["workload"];
  }
  const CommandRun table = Headroom("mig workloads");
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_TRUE(Contains(table.out, "gpt2-1.5b-pretrain")) << table.out;
  EXPECT_TRUE(Contains(table.out, "OOM")) << "1.5B pre-training cannot fit a 1g.18gb";
}

TEST(MigPlanCliTest, PlanPrintsThePlanBesideTheBaselinesAndExplainsEachJob) {
  const CommandRun run = Headroom("mig plan data/mig-jobs/mixed-small-medium-large.yaml");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  for (const char* part :
       {"MIG plan for 4 jobs on h200-141gb-sxm", "planned", "whole GPU, one after another",
        "balanced (3g.71gb@0,3g.71gb@4)", "7x1g", "Why (planned):", "effnet-finetune on "}) {
    EXPECT_TRUE(Contains(run.out, part)) << part << "\n" << run.out;
  }
}

TEST(MigPlanCliTest, PlanJsonNeverLosesToABaseline) {
  for (const char* objective : {"energy", "makespan"}) {
    const CommandRun run = Headroom(
        fmt::format("mig plan data/mig-jobs/mixed-small-medium-large.yaml --json --objective {} "
                    "--layout 4g.71gb@0,3g.71gb@4",
                    objective));
    ASSERT_EQ(run.exit_code, 0) << run.out;
    const auto j = nlohmann::json::parse(run.out);
    const auto& plan = j["plan"];
    ASSERT_TRUE(plan["feasible"].get<bool>());
    const std::string key = std::string(objective) == "energy" ? "energy_j" : "makespan_s";
    ASSERT_EQ(j["baselines"].size(), 3u);
    ASSERT_EQ(j["layouts"].size(), 1u);
    for (const auto* list : {&j["baselines"], &j["layouts"]}) {
      for (const auto& b : *list) {
        if (!b["feasible"].get<bool>()) continue;
        EXPECT_LE(plan[key].get<double>(), b[key].get<double>() * (1 + 1e-9)) << b["name"];
      }
    }
    EXPECT_EQ(plan["jobs"].size(), 4u);
    for (const auto& job : plan["jobs"])
      EXPECT_FALSE(job["explanation"].get<std::string>().empty());
  }
}

TEST(MigPlanCliTest, PlanRejectsBadInputNamingWhere) {
  TempDir dir;
  const fs::path file = dir.path() / "jobs.yaml";
  std::ofstream(file) << "gpu: h200\njobs:\n  - {workload: resnet50-finetune, samples: 1e6}\n"
                         "  - {workload: bert-large, samples: 10}\n";
  const CommandRun run = Headroom("mig plan " + file.string());
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_TRUE(Contains(run.out, "jobs.yaml:4")) << run.out;
  EXPECT_TRUE(Contains(run.out, "bert-large")) << run.out;
  const CommandRun bound = Headroom(
      "mig plan data/mig-jobs/mixed-small-medium-large.yaml "
      "--makespan-bound soon");
  EXPECT_EQ(bound.exit_code, 2) << bound.out;
  EXPECT_TRUE(Contains(bound.out, "--makespan-bound")) << bound.out;
  const CommandRun layout = Headroom(
      "mig plan data/mig-jobs/mixed-small-medium-large.yaml "
      "--layout 4g.71gb@0,4g.71gb@4");
  EXPECT_NE(layout.exit_code, 0) << layout.out;
}

TEST(MigPlanCliTest, CharacterizeSweepsTheModelIntoACsvAndPlots) {
  TempDir dir;
  const CommandRun run = Headroom(fmt::format(
      "mig characterize --gpu a100-80gb --workloads resnet50-finetune,gpt2-1.5b-pretrain "
      "--out {} --json",
      dir.path().string()));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out.substr(run.out.find('{')));
  EXPECT_EQ(j["workloads"].size(), 2u);
  const std::string csv = ReadAll(dir.path() / "results.csv");
  EXPECT_TRUE(csv.starts_with("layout,workload,batch,instance,slice,")) << csv.substr(0, 200);
  EXPECT_TRUE(Contains(csv, "\"MIG off\",resnet50-finetune")) << csv.substr(0, 400);
  // 1.5B pre-training does not fit a 1g.10gb: those rows say so (fits = 0).
  EXPECT_TRUE(Contains(csv, ",gpt2-1.5b-pretrain,4,0,1g.10gb@0,14,9.50,0,")) << csv;
  EXPECT_TRUE(fs::exists(dir.path() / "mig-throughput.dat"));
  EXPECT_TRUE(fs::exists(dir.path() / "mig-energy.gp"));
  const CommandRun bad = Headroom("mig characterize --workloads bert --out " + dir.path().string());
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_TRUE(Contains(bad.out, "--workloads")) << bad.out;
}

// Replaces the first `from` in the file at `path` with `to`.
void ReplaceInFile(const fs::path& path, const std::string& from, const std::string& to) {
  std::string text = ReadAll(path);
  const std::size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  std::ofstream(path, std::ios::trunc) << text;
}

// `headroom report DIR` rebuilds report.html from the directory alone, byte for byte.
void ExpectReportRebuilds(const fs::path& dir) {
  const std::string first = ReadAll(dir / "report.html");
  ASSERT_FALSE(first.empty());
  fs::remove_all(dir / "plots");
  fs::remove(dir / "report.html");
  const CommandRun rebuilt = Headroom("report " + dir.string());
  ASSERT_EQ(rebuilt.exit_code, 0) << rebuilt.out;
  EXPECT_EQ(rebuilt.out, "report: " + (dir / "report.html").string() + "\n");
  EXPECT_TRUE(ReadAll(dir / "report.html") == first) << "report DIR wrote a different page";
}

TEST(MigPlanCliTest, PlanReportWritesThePlanAndAPageThatReportDirRebuilds) {
  TempDir dir;
  const fs::path out = dir.path() / "plan";
  const std::string jobs = "data/mig-jobs/mixed-small-medium-large.yaml";
  const CommandRun run = Headroom(fmt::format("mig plan {} --report --out {}", jobs, out.string()));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(Contains(run.out, "report: " + (out / "report.html").string())) << run.out;
  // mig-plan.json is what --json prints: the plan, baselines, layouts, and the inputs.
  const CommandRun json = Headroom(fmt::format("mig plan {} --json", jobs));
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const auto printed = nlohmann::json::parse(json.out);
  const auto file = nlohmann::json::parse(ReadAll(out / "mig-plan.json"));
  EXPECT_EQ(file, printed);
  EXPECT_EQ(file["inputs"]["jobs_file"], jobs);
  EXPECT_EQ(file["inputs"]["objective"], "energy");
  EXPECT_EQ(file["inputs"]["mig"]["gpu"], file["gpu"]);
  EXPECT_FALSE(file["inputs"]["version"].get<std::string>().empty());
  // The page's answer is the plan's, against the whole-GPU baseline.
  const auto& plan = file["plan"];
  const double energy = plan["energy_vs_whole_gpu"].get<double>();
  const std::string answer =
      fmt::format("on the {}: {:.1f}% {} energy", file["gpu"].get<std::string>(),
                  std::abs(energy) * 100, energy <= 0 ? "less" : "more");
  const std::string page = ReadAll(out / "report.html");
  EXPECT_TRUE(Contains(page, answer)) << answer;
  for (const char* plot : {"energy-makespan", "timeline"}) {
    EXPECT_TRUE(fs::exists(out / "plots" / fmt::format("{}.svg", plot))) << plot;
  }
  const std::size_t options = 1 + file["baselines"].size() + file["layouts"].size();
  EXPECT_TRUE(Contains(page, fmt::format("data-plot=\"slots-{}\"", options - 1)));
  EXPECT_FALSE(Contains(page, fmt::format("data-plot=\"slots-{}\"", options)));
  ExpectReportRebuilds(out);

  // A corrupt file: exit 2, naming the file and the field.
  ReplaceInFile(out / "mig-plan.json", "\"energy_j\": ", "\"energy_j\": \"x\", \"was\": ");
  const CommandRun bad = Headroom("report " + out.string());
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_TRUE(Contains(
      bad.out, (out / "mig-plan.json").string() + ": field 'plan.energy_j' is of the wrong type"))
      << bad.out;
}

TEST(MigPlanCliTest, CharacterizeReportDrawsASmallSweepAndReportDirRebuildsIt) {
  TempDir dir;
  const fs::path out = dir.path() / "characterize";
  const CommandRun run = Headroom(fmt::format(
      "mig characterize --workloads resnet50-finetune,gpt2-1.5b-pretrain --profiles 3g,7g "
      "--report --out {}",
      out.string()));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(Contains(run.out, "report: " + (out / "report.html").string())) << run.out;
  const auto inputs = nlohmann::json::parse(ReadAll(out / "mig-characterize.json"))["inputs"];
  EXPECT_EQ(inputs["workloads"].size(), 2u);
  const std::size_t layouts = inputs["layouts"].size();
  EXPECT_GE(layouts, 3u) << "MIG off, 7g and two 3g at least";
  const std::string page = ReadAll(out / "report.html");
  for (std::size_t k = 0; k < layouts; ++k) {
    EXPECT_TRUE(Contains(page, fmt::format("data-plot=\"slots-{}\"", k))) << k;
  }
  for (const char* plot : {"throughput", "energy", "power"}) {
    EXPECT_TRUE(fs::exists(out / "plots" / fmt::format("{}.svg", plot))) << plot;
  }
  // Per instance, both attribution methods; and the rows of instances a workload does not fit.
  EXPECT_TRUE(Contains(page, "J/sample (activity)</th><th>J/sample (SM share)"));
  ExpectReportRebuilds(out);

  ReplaceInFile(out / "results.csv", ",resnet50-finetune,", ",resnet50-finetune,big,");
  const CommandRun bad = Headroom("report " + out.string());
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_TRUE(Contains(bad.out, (out / "results.csv").string() + ":2: ")) << bad.out;

  const CommandRun device = Headroom("mig characterize --report --backend sim -- true");
  EXPECT_EQ(device.exit_code, 2) << device.out;
  EXPECT_TRUE(Contains(device.out, "--report")) << device.out;
}

// characterize with a command, through the fake NVML: one A100 in MIG mode, state in a file.
class MigCharacterizeDeviceTest : public ::testing::Test {
 protected:
  std::string Env(const std::string& extra = "") const {
    return fmt::format(
        "HEADROOM_NVML_LIBRARY={} HEADROOM_FAKE_NVML_COUNT=1 HEADROOM_FAKE_NVML_MIG_STATE={} {}",
        FAKE_NVML, (dir_.path() / "mig.state").string(), extra);
  }
  std::string ShownLayout(const std::string& extra_env = "") const {
    const CommandRun run = Headroom("mig show --backend nvml --json", Env(extra_env));
    auto j = nlohmann::json::parse(run.out, nullptr, false);
    if (j.is_discarded()) return "unparsed: " + run.out;
    return j["gpus"][0].value("layout", "none: " + run.out);
  }
  TempDir dir_;
};

TEST_F(MigCharacterizeDeviceTest, RunsOneCopyPerInstanceAndRestoresTheLayout) {
  const fs::path seen = dir_.path() / "seen";
  const std::string command = fmt::format(
      "sh -c 'echo \"$HEADROOM_MIG_SLICE $CUDA_VISIBLE_DEVICES\" >> {}; sleep 0.3'", seen.string());
  const CommandRun run =
      Headroom(fmt::format("mig characterize --backend nvml --layout 3g.40gb@0,3g.40gb@4 --layout "
                           "7g.80gb@0 --idle 0.2 --samples 100 --out {} --json -- {}",
                           dir_.path().string(), command),
               Env("HEADROOM_FAKE_NVML_MIG=1 HEADROOM_FAKE_NVML_MIG_LAYOUT=1g.10gb@6,2g.20gb@4"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out.substr(run.out.find("{\n")));
  EXPECT_EQ(j["original_layout"], "2g.20gb@4,1g.10gb@6");
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][0]["instances"].size(), 2u);
  EXPECT_EQ(j["runs"][1]["instances"].size(), 1u);
  for (const auto& r : j["runs"]) {
    double attributed = 0;
    for (const auto& in : r["instances"]) {
      EXPECT_EQ(in["exit_code"], 0);
      EXPECT_GE(in["seconds"].get<double>(), 0.25);
      attributed += in["energy_activity_j"].get<double>();
    }
    EXPECT_GT(r["gpu_energy_j"].get<double>(), 0);
    EXPECT_NEAR(attributed, r["gpu_energy_j"].get<double>(), 1e-6 + 1e-6 * attributed);
  }
  // Each copy saw its own instance's slice and MIG device UUID (the two copies of the first
  // layout ran side by side, so their UUIDs differ).
  std::set<std::string> slices, first_layout_uuids;
  std::ifstream in(seen);
  std::string slice, uuid;
  int lines = 0;
  while (in >> slice >> uuid) {
    ++lines;
    EXPECT_TRUE(uuid.starts_with("MIG-")) << uuid;
    slices.insert(slice);
    if (slice.starts_with("3g.40gb@")) first_layout_uuids.insert(uuid);
  }
  EXPECT_EQ(lines, 3);
  EXPECT_EQ(slices, (std::set<std::string>{"3g.40gb@0", "3g.40gb@4", "7g.80gb@0"}));
  EXPECT_EQ(first_layout_uuids.size(), 2u);
  EXPECT_TRUE(Contains(ReadAll(dir_.path() / "results.csv"), "3g.40gb@4"));
  EXPECT_EQ(ShownLayout(), "2g.20gb@4,1g.10gb@6");
}

TEST_F(MigCharacterizeDeviceTest, AFailingCommandIsReportedAndTheLayoutStillRestored) {
  const CommandRun run =
      Headroom("mig characterize --backend nvml --layout 3g.40gb@0 --idle 0.1 --out " +
                   dir_.path().string() + " -- sh -c 'exit 3'",
               Env("HEADROOM_FAKE_NVML_MIG=1 HEADROOM_FAKE_NVML_MIG_LAYOUT=7g.80gb@0"));
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_TRUE(Contains(run.out, "Original layout '7g.80gb@0' restored")) << run.out;
  EXPECT_EQ(ShownLayout(), "7g.80gb@0");
}

TEST_F(MigCharacterizeDeviceTest, RefusesWithMigModeOffAndChangesNothing) {
  const CommandRun run = Headroom("mig characterize --backend nvml --idle 0.1 -- true", Env());
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_TRUE(Contains(run.out, "MIG mode is disabled")) << run.out;
  EXPECT_TRUE(Contains(run.out, "--enable-mig")) << run.out;
}

TEST_F(MigCharacterizeDeviceTest, EnableMigTurnsItOnForTheSweepAndOffAfter) {
  const CommandRun run = Headroom(
      "mig characterize --backend nvml --enable-mig --layout 3g.40gb@0,3g.40gb@4 --idle 0.1 "
      "--json --out " +
          dir_.path().string() + " -- true",
      Env());
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out.substr(run.out.find("{\n")));
  EXPECT_EQ(j["runs"][0]["instances"].size(), 2u);
  const CommandRun show = Headroom("mig show --backend nvml --json", Env());
  const auto shown = nlohmann::json::parse(show.out, nullptr, false);
  ASSERT_FALSE(shown.is_discarded()) << show.out;
  EXPECT_EQ(shown["gpus"][0]["mig"]["current"], false) << show.out;
}

TEST_F(MigCharacterizeDeviceTest, EnableMigRefusesWhenTheGpuWouldNeedAReset) {
  const CommandRun run = Headroom("mig characterize --backend nvml --enable-mig --idle 0.1 -- true",
                                  Env("HEADROOM_FAKE_NVML_MIG_NEEDS_RESET=1"));
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_TRUE(Contains(run.out, "needs a reset")) << run.out;
  EXPECT_TRUE(Contains(run.out, "never resets GPUs")) << run.out;
}

TEST_F(MigCharacterizeDeviceTest, CtrlCStopsTheCopiesAndRestoresTheLayout) {
  // Run in the background, interrupt it while the copies sleep, then read the layout back.
  const fs::path out = dir_.path() / "out.txt";
  const std::string mig =
      "HEADROOM_FAKE_NVML_MIG=1 HEADROOM_FAKE_NVML_MIG_LAYOUT=4g.40gb@0,3g.40gb@4";
  // The state file first: otherwise a poll below (which sets no MIG variables) can start before
  // the background process and create the file with MIG off, which that process then reads.
  ASSERT_EQ(ShownLayout(mig), "4g.40gb@0,3g.40gb@4");
  const std::string line = fmt::format(
      "{} {} mig characterize --backend nvml --layout 1g.10gb@0,1g.10gb@1 --idle 0.1 --out {} "
      "-- sleep 30 > {} 2>&1 & echo $!",
      Env(mig), HEADROOM_BINARY, dir_.path().string(), out.string());
  FILE* pipe = popen(line.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  int pid = 0;
  ASSERT_EQ(fscanf(pipe, "%d", &pid), 1);
  pclose(pipe);
  // Wait until the copies run (the layout changed), at most 20 s.
  bool applied = false;
  for (int i = 0; i < 200 && !applied; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    applied = ShownLayout() == "1g.10gb@0,1g.10gb@1";
  }
  ASSERT_TRUE(applied) << ReadAll(out);
  ::kill(pid, SIGINT);
  bool ended = false;
  for (int i = 0; i < 200 && !ended; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ended = ::kill(pid, 0) != 0;
  }
  ASSERT_TRUE(ended) << ReadAll(out);
  EXPECT_TRUE(Contains(ReadAll(out), "interrupted")) << ReadAll(out);
  EXPECT_EQ(ShownLayout(), "4g.40gb@0,3g.40gb@4");
}

}  // namespace
