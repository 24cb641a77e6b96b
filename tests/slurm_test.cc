// A plan's simulations through Slurm (headroom plan --executor slurm, app/plan_executor.h): on a
// real one-node Slurm cluster that scripts/slurm-local.sh brings up for each test (skipped, with
// its reason, where it cannot start), the same plan.json as through the local threads; and
// through a fake sbatch/squeue/scancel (tests/fake_slurm/) that misbehaves as a cluster can, the
// retries and the errors.
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "headroom_command.h"

namespace {

using headroom::testing::CommandRun;
using headroom::testing::Headroom;
using headroom::testing::Lines;
using headroom::testing::RunShell;

std::string Slurped(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh directory for this test.
std::string TestDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "headroom_slurm_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string SmallPlan(const std::string& out) {
  return fmt::format("plan --config {} --out {}", SMALL_SYNTH_ROW_SCENARIO, out);
}

// The plan through the local threads: what every executor must give, byte for byte.
std::string LocalPlanJson(const std::string& dir) {
  const CommandRun local = Headroom(SmallPlan(dir + "/local") + " --threads 2");
  EXPECT_EQ(local.exit_code, 0) << local.out;
  return Slurped(dir + "/local/plan.json");
}

// A real local Slurm cluster for one test: started in SetUp, stopped in TearDown.
class SlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const CommandRun check = RunShell(fmt::format("{} check 2>&1", kScript));
    if (check.exit_code != 0) GTEST_SKIP() << "no local Slurm: " << check.out;
    // Short: Slurm's step sockets live under the cluster's directory (slurm-local.sh).
    char dir[] = "/tmp/hsl.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    const CommandRun start = RunShell(fmt::format("{} start {}/cluster", kScript, dir_));
    ASSERT_EQ(start.exit_code, 0) << start.out;
    const std::string prefix = "export SLURM_CONF=";
    ASSERT_EQ(start.out.rfind(prefix, 0), 0u) << start.out;
    conf_ = start.out.substr(prefix.size());
    conf_.erase(conf_.find_last_not_of("\n ") + 1);
    started_ = true;
  }
  void TearDown() override {
    if (started_) RunShell(fmt::format("{} stop {}/cluster 2>&1", kScript, dir_));
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string Env() const { return "SLURM_CONF=" + conf_; }

  static constexpr const char* kScript = HEADROOM_SOURCE "/scripts/slurm-local.sh";
  std::string dir_;
  std::string conf_;
  bool started_ = false;
};

TEST_F(SlurmTest, APlanThroughSlurmIsThePlanThroughTheLocalThreads) {
  const std::string work = dir_ + "/work";
  std::filesystem::create_directories(work);
  const CommandRun slurm =
      Headroom(SmallPlan(dir_ + "/slurm") + " --executor slurm --work-dir " + work, Env());
  ASSERT_EQ(slurm.exit_code, 0) << slurm.out;
  EXPECT_NE(slurm.out.find("simulations through Slurm: "), std::string::npos) << slurm.out;
  EXPECT_EQ(Slurped(dir_ + "/slurm/plan.json"), LocalPlanJson(dir_));
  // A plan that ended well leaves nothing in the working directory.
  EXPECT_TRUE(std::filesystem::is_empty(work));
  // Slurm's own refusal, named.
  const CommandRun bad = Headroom(
      SmallPlan(dir_ + "/bad") + " --executor slurm --slurm-partition nosuch --work-dir " + work,
      Env());
  EXPECT_EQ(bad.exit_code, 1) << bad.out;  // the cluster's refusal, at run time
  EXPECT_NE(bad.out.find("invalid partition specified: nosuch"), std::string::npos) << bad.out;
}

// A study through Slurm: each of its plans as through the local threads, byte for byte.
TEST_F(SlurmTest, AStudyThroughSlurmIsTheStudyThroughTheLocalThreads) {
  const std::string work = dir_ + "/work";
  std::filesystem::create_directories(work);
  const CommandRun local = Headroom(fmt::format("study {} --out {}/local", SMALL_STUDY, dir_));
  ASSERT_EQ(local.exit_code, 0) << local.out;
  // Four plans of a few rounds each: longer than Headroom()'s minute where the machine is busy.
  const CommandRun slurm =
      RunShell(fmt::format("{} timeout 150 {} study {} --out {}/slurm --executor slurm "
                           "--work-dir {} 2>&1",
                           Env(), HEADROOM_BINARY, SMALL_STUDY, dir_, work));
  ASSERT_EQ(slurm.exit_code, 0) << slurm.out;
  EXPECT_NE(slurm.out.find("through Slurm"), std::string::npos) << slurm.out;
  int plans = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_ + "/local/plans")) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(Slurped(dir_ + "/slurm/plans/" + name + "/plan.json"),
              Slurped(entry.path().string() + "/plan.json"))
        << name;
    ++plans;
  }
  EXPECT_EQ(plans, 4);
}

// Ctrl-C stops the plan and cancels its jobs: nothing of it is left pending or running.
TEST_F(SlurmTest, CtrlCCancelsThePlansJobs) {
  const std::string work = dir_ + "/work";
  std::filesystem::create_directories(work);
  const CommandRun run = RunShell(fmt::format(
      "export {env}; {bin} plan --executor slurm --work-dir {work} > {dir}/out 2>&1 & pid=$!; "
      "for i in $(seq 150); do squeue -h -t RUNNING | grep -q . && break; sleep 0.2; done; "
      "squeue -h -t RUNNING | grep -q . || echo 'never running'; "
      "kill -INT $pid; wait $pid; echo \"exit $?\"; sleep 1; "
      "squeue -h -t PENDING,RUNNING,COMPLETING -o '%i %T'",
      fmt::arg("env", Env()), fmt::arg("bin", HEADROOM_BINARY), fmt::arg("work", work),
      fmt::arg("dir", dir_)));
  EXPECT_EQ(run.out, "exit 1\n") << run.out << Slurped(dir_ + "/out");
  EXPECT_NE(Slurped(dir_ + "/out").find("stopped"), std::string::npos) << Slurped(dir_ + "/out");
}

// The fake cluster: its commands first on the PATH, its state in a directory of the test's.
class FakeSlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TestDir(std::string("fake_") +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ + "/state");
    std::filesystem::create_directories(dir_ + "/work");
  }
  CommandRun Plan(const std::string& mode, const std::string& flags = "") const {
    return Headroom(
        SmallPlan(dir_ + "/plan") + " --executor slurm --work-dir " + dir_ + "/work " + flags,
        fmt::format("PATH={}/tests/fake_slurm:$PATH FAKE_SLURM_DIR={}/state "
                    "FAKE_SLURM_MODE={}",
                    HEADROOM_SOURCE, dir_, mode));
  }
  std::string dir_;
};

// A task that failed, or that Slurm holds pending after a failed launch (whose job is then
// cancelled), is tried again, and a controller that does not answer for a moment is asked
// again: the plan is the plan.
TEST_F(FakeSlurmTest, ATaskThatFailedOrIsHeldIsSubmittedAgain) {
  const std::string local = LocalPlanJson(dir_);
  for (const std::string mode : {"fail-first", "held-first", "squeue-flaky"}) {
    std::filesystem::remove_all(dir_ + "/plan");
    std::filesystem::remove(dir_ + "/state/cancelled");
    const CommandRun run = Plan(mode);
    ASSERT_EQ(run.exit_code, 0) << mode << "\n" << run.out;
    EXPECT_EQ(Slurped(dir_ + "/plan/plan.json"), local) << mode;
    EXPECT_EQ(Slurped(dir_ + "/state/cancelled") != "", mode == "held-first") << mode;
  }
}

// Runs grouped several to a task (--slurm-runs-per-task) give the same plan in fewer tasks.
TEST_F(FakeSlurmTest, RunsGroupedIntoTasksGiveTheSamePlan) {
  const CommandRun one = Plan("", "--slurm-runs-per-task 1");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  const CommandRun three = Plan("", "--slurm-runs-per-task 3");
  ASSERT_EQ(three.exit_code, 0) << three.out;
  EXPECT_EQ(Slurped(dir_ + "/plan/plan.json"), LocalPlanJson(dir_));
  const auto tasks = [](const std::string& out) {
    const std::size_t at = out.find(" tasks\n");
    return std::stoi(out.substr(out.rfind(' ', at - 1) + 1));
  };
  EXPECT_LT(tasks(three.out), tasks(one.out)) << one.out << three.out;
}

TEST_F(FakeSlurmTest, EachFailureIsOneErrorNamingWhatAndWhere) {
  struct Case {
    std::string mode, flags, says;
    int exit_code;  // 1: the cluster's failure, at run time; 2: a bad flag
  };
  for (const Case& c :
       {Case{"other-plan", "", "the result of plan 0000000000000000 task 0", 1},
        Case{"hide-unit", "", "unit.json: missing'); is " + dir_ + "/work shared with the nodes",
             1},
        Case{"", "--slurm-partition nosuch", "invalid partition specified: nosuch", 1},
        Case{"", "--slurm-retries -1", "--slurm-retries -1: expected >= 0", 2},
        Case{"", "--slurm-runs-per-task -1", "--slurm-runs-per-task -1: expected >= 0", 2}}) {
    std::filesystem::remove(dir_ + "/state/cancelled");
    const CommandRun run = Plan(c.mode, c.flags);
    EXPECT_EQ(run.exit_code, c.exit_code) << c.mode << " " << c.flags << "\n" << run.out;
    EXPECT_NE(run.out.find(c.says), std::string::npos) << c.mode << "\n" << run.out;
    EXPECT_EQ(Lines(run.out).size(), 1u) << run.out;
    if (c.mode == "other-plan" || c.mode == "hide-unit") {
      EXPECT_NE(Slurped(dir_ + "/state/cancelled"), "") << c.mode << ": its jobs cancelled";
      EXPECT_NE(run.out.find("in 3 tries"), std::string::npos) << run.out;
    }
  }
}

// A scenario's plan.executor runs its plans through Slurm without a flag; --executor local
// keeps them here; its mistakes are named by its key.
TEST_F(FakeSlurmTest, AScenarioNamesItsOwnExecutor) {
  std::string text = Slurped(SMALL_SYNTH_ROW_SCENARIO);
  const std::string with = "plan:\n  executor: {kind: slurm, work_dir: " + dir_ + "/work}\n";
  text.replace(text.find("plan:\n"), 6, with);
  const std::string scenario = dir_ + "/row.yaml";
  std::ofstream(scenario) << text;
  const std::string env =
      fmt::format("PATH={}/tests/fake_slurm:$PATH FAKE_SLURM_DIR={}/state", HEADROOM_SOURCE, dir_);
  const CommandRun slurm = Headroom("plan --config " + scenario + " --out " + dir_ + "/plan", env);
  ASSERT_EQ(slurm.exit_code, 0) << slurm.out;
  EXPECT_NE(slurm.out.find("simulations through Slurm"), std::string::npos) << slurm.out;
  const CommandRun local =
      Headroom("plan --config " + scenario + " --executor local --out " + dir_ + "/local", env);
  EXPECT_NE(local.out.find("simulations on "), std::string::npos) << local.out;
  EXPECT_EQ(Slurped(dir_ + "/plan/plan.json"), Slurped(dir_ + "/local/plan.json"));
  std::string bad = text;
  bad.replace(bad.find("work_dir: "), 10, "work_dir: relative");
  std::ofstream(scenario) << bad;
  const CommandRun refused = Headroom("plan --config " + scenario, env);
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.out.find(scenario + ": plan.executor: --work-dir 'relative"), std::string::npos)
      << refused.out;
}

TEST(SlurmFlagsTest, BadExecutorFlagsAreOneErrorNamingTheFlag) {
  const std::string plan = SmallPlan(TestDir("flags") + "/plan");
  for (const auto& [flags, says] : std::vector<std::pair<std::string, std::string>>{
           {"--executor slurm", "--work-dir '': expected an existing, writable directory"},
           {"--executor slurm --work-dir relative/dir", "--work-dir 'relative/dir'"},
           {"--executor slurm --work-dir /nonexistent/dir", "--work-dir '/nonexistent/dir'"},
           {"--executor cloud", "--executor: cloud not in {local,slurm}"}}) {
    const CommandRun run =
        Headroom(plan + " " + flags, "PATH=" HEADROOM_SOURCE "/tests/fake_slurm:$PATH");
    EXPECT_EQ(run.exit_code, 2) << flags << "\n" << run.out;
    EXPECT_NE(run.out.find(says), std::string::npos) << flags << "\n" << run.out;
  }
  // Without Slurm's commands on the PATH (only what runs headroom there).
  const std::string bare = TestDir("bare_path");
  std::filesystem::create_symlink("/usr/bin/timeout", bare + "/timeout");
  const CommandRun none = Headroom(plan + " --executor slurm --work-dir /tmp", "PATH=" + bare);
  EXPECT_EQ(none.exit_code, 1) << none.out;
  EXPECT_NE(none.out.find("sbatch: not found on the PATH"), std::string::npos) << none.out;
}

}  // namespace
