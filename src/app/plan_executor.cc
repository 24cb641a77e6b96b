#include "app/plan_executor.h"

#include <filesystem>
#include <random>
#include <tuple>

#include <fmt/format.h>
#include <unistd.h>

#include "format/json_fields.h"
#include "report/plan_work_files.h"

namespace headroom::app {
namespace {

constexpr const char* kTaskWriter = "headroom plan --executor slurm";

// A round of more runs than this groups them into this many tasks at most: a verdict is a
// fraction of a second of work, a task's launch about a second of the cluster's.
constexpr std::size_t kAutoTasks = 256;

// A path the tasks can open from their round's directory: absolute where it names a file here;
// anything else (a built-in name, empty) as it is.
std::string Absolute(const std::string& path) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return path;
  return std::filesystem::absolute(path, ec).lexically_normal().string();
}

std::string RandomId() {
  std::random_device device;
  return fmt::format("{:08x}{:08x}", device(), device());
}

// This very program, which the tasks run: the nodes see it where the working directory is (a
// shared installation, or the build beside the work).
std::string ThisProgram() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("headroom") : self.string();
}

// Each round of a plan as one job array (cluster::RunArrayRound).
class SlurmPlanExecutor final : public sim::BatchExecutor {
 public:
  SlurmPlanExecutor(cluster::SlurmOptions options, int runs_per_task, nlohmann::json request)
      : options_(std::move(options)),
        runs_per_task_(runs_per_task),
        request_(std::move(request)),
        plan_id_(RandomId()),
        dir_(fmt::format("{}/headroom-plan-{}", options_.work_dir, plan_id_)) {}

  ~SlurmPlanExecutor() override {
    // The units and results of a plan that ended well are of no more use; a failed plan's stay
    // to be read.
    std::error_code ec;
    if (ok_) std::filesystem::remove_all(dir_, ec);
  }

  core::Result<std::vector<sim::Outcome>> RunBatch(const std::vector<sim::Run>& runs,
                                                   const std::atomic<bool>* stop) override {
    const int k = rounds_++;
    const std::string dir = fmt::format("{}/round-{}", dir_, k);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::string unit_path = dir + "/unit.json";
    const report::WorkUnit unit{.plan_id = plan_id_,
                                .request = request_,
                                .runs = runs,
                                .runs_per_task = RunsPerTask(runs.size())};
    HEADROOM_RETURN_IF_ERROR(report::WriteWorkUnit(unit_path, unit));
    tasks_ += report::TaskCount(unit);
    std::vector<sim::Outcome> outcomes(runs.size());
    const cluster::ArrayRound round{
        .name = fmt::format("headroom-plan-{}-r{}", plan_id_.substr(0, 8), k),
        .dir = dir,
        .tasks = report::TaskCount(unit),
        .command = {ThisProgram(), "plan-task", unit_path, "--task", cluster::kTaskIndex},
        .check = [&](int task) { return Collect(unit, unit_path, task, &outcomes); }};
    ok_ = false;  // until this round has all its results: a failed round's files stay
    HEADROOM_RETURN_IF_ERROR(cluster::RunArrayRound(options_, round, stop));
    ok_ = true;
    return outcomes;
  }

  // Runs a task runs: as asked, else as many as keep a round within kAutoTasks tasks.
  int RunsPerTask(std::size_t runs) const {
    if (runs_per_task_ > 0) return runs_per_task_;
    return static_cast<int>(std::max<std::size_t>(1, (runs + kAutoTasks - 1) / kAutoTasks));
  }

  // Task `task`'s result into `outcomes`, if it is this round's and whole.
  core::Status Collect(const report::WorkUnit& unit, const std::string& unit_path, int task,
                       std::vector<sim::Outcome>* outcomes) const {
    const std::string path = PlanTaskResultPath(unit_path, task);
    HEADROOM_ASSIGN_OR_RETURN(report::WorkResult r, report::ReadWorkResult(path));
    const auto [first, end] = report::TaskRuns(unit, task);
    const std::vector<sim::Run> want(unit.runs.begin() + static_cast<std::ptrdiff_t>(first),
                                     unit.runs.begin() + static_cast<std::ptrdiff_t>(end));
    if (r.plan_id != plan_id_ || r.task != task || r.runs != want ||
        r.outcomes.size() != want.size()) {
      return core::Fail(core::Error::InvalidArgument(fmt::format(
          "{}: the result of plan {} task {} ({} runs, {} outcomes), not of this plan's ({}) task "
          "{} ({} runs)",
          path, r.plan_id, r.task, r.runs.size(), r.outcomes.size(), plan_id_, task, want.size())));
    }
    for (std::size_t i = first; i < end; ++i) (*outcomes)[i] = std::move(r.outcomes[i - first]);
    return core::Ok();
  }

  std::string Describe() const override {
    return fmt::format("through Slurm: {} job array{}, {} task{}", rounds_, rounds_ == 1 ? "" : "s",
                       tasks_, tasks_ == 1 ? "" : "s");
  }

 private:
  const cluster::SlurmOptions options_;
  const int runs_per_task_;  // 0: RunsPerTask's choice
  const nlohmann::json request_;
  const std::string plan_id_;
  const std::string dir_;
  int rounds_ = 0;
  int tasks_ = 0;
  bool ok_ = false;  // every round so far gave all its results, the last one included
};

// What a task rebuilds the plan from (PlanTaskRequestJson): the request's flags and the row
// power the plan keeps. One field table writes and reads it.
struct TaskRequest {
  PlanRequest plan = {};
  int power_windows = 0;
};

constexpr auto kEngineFields =
    std::tuple{format::Field("engine", &EngineOptions::engine),
               format::Field("engine_file", &EngineOptions::engine_file)};

constexpr auto kScenarioRequestFields =
    std::tuple{format::Field("scenario", &ScenarioRequest::scenario),
               format::Field("catalog_dir", &ScenarioRequest::catalog_dir),
               format::Field("seed", &ScenarioRequest::seed),
               format::Field("slo", &ScenarioRequest::slo),
               format::Field("serving", &ScenarioRequest::serving),
               format::Field("set", &ScenarioRequest::set),
               format::Field("engine", &ScenarioRequest::engine, kEngineFields)};

constexpr auto kPlanRequestFields =
    std::tuple{format::Field("scenario", &PlanRequest::scenario, kScenarioRequestFields),
               format::Field("trace", &PlanRequest::trace),
               format::Field("policies", &PlanRequest::policies),
               format::Field("weeks", &PlanRequest::weeks),
               format::Field("validate", &PlanRequest::validate),
               format::Field("max_weekly_risk", &PlanRequest::max_weekly_risk),
               format::Field("confidence", &PlanRequest::confidence),
               format::Field("risk_beyond", &PlanRequest::risk_beyond),
               format::Field("stress", &PlanRequest::stress)};

constexpr auto kTaskRequestFields =
    std::tuple{format::Field("plan", &TaskRequest::plan, kPlanRequestFields),
               format::Field("power_windows", &TaskRequest::power_windows)};

}  // namespace

core::Result<std::unique_ptr<sim::BatchExecutor>> MakePlanExecutor(const ExecutorRequest& e,
                                                                   nlohmann::json request) {
  if (e.kind.empty() || e.kind == "local") return std::unique_ptr<sim::BatchExecutor>();
  if (e.kind != "slurm") {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--executor '{}': expected local or slurm", e.kind)));
  }
  HEADROOM_RETURN_IF_ERROR(cluster::CheckSlurm(e.slurm));
  if (e.runs_per_task < 0) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "--slurm-runs-per-task {}: expected >= 0 (0: as many as keep a round within {} tasks)",
        e.runs_per_task, kAutoTasks)));
  }
  return std::unique_ptr<sim::BatchExecutor>(
      std::make_unique<SlurmPlanExecutor>(e.slurm, e.runs_per_task, std::move(request)));
}

nlohmann::json PlanTaskRequestJson(const PlanRequest& r, int power_windows) {
  TaskRequest task{.plan = r, .power_windows = power_windows};
  ScenarioRequest& s = task.plan.scenario;
  for (std::string* path : {&s.scenario, &s.catalog_dir, &s.engine.engine_file, &task.plan.trace}) {
    *path = Absolute(*path);
  }
  return format::TableJson<nlohmann::json>(task, kTaskRequestFields);
}

std::string PlanTaskResultPath(const std::string& unit, int task) {
  return fmt::format("{}/result-{}.json", std::filesystem::path(unit).parent_path().string(), task);
}

core::Result<std::string> RunPlanTask(const PlanTaskRequest& t) {
  HEADROOM_ASSIGN_OR_RETURN(const report::WorkUnit unit, report::ReadWorkUnit(t.unit));
  if (t.task < 0 || t.task >= report::TaskCount(unit)) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "--task {}: the unit {} has tasks 0 to {}", t.task, t.unit, report::TaskCount(unit) - 1)));
  }
  format::FieldReader reader(t.unit, kTaskWriter);
  TaskRequest request;
  format::ReadFields(reader, unit.request, "request.", request, kTaskRequestFields);
  if (reader.error()) return core::Fail(*reader.error());
  HEADROOM_ASSIGN_OR_RETURN(const sim::ResolvedScenario resolved,
                            ResolveScenario(request.plan.scenario));
  HEADROOM_ASSIGN_OR_RETURN(sim::PlanOptions options, PlanOptionsOf(request.plan));
  options.power_windows = request.power_windows;
  options.stop = t.stop;
  report::WorkResult result{.plan_id = unit.plan_id, .task = t.task};
  const auto [first, end] = report::TaskRuns(unit, t.task);
  for (std::size_t i = first; i < end; ++i) {
    HEADROOM_ASSIGN_OR_RETURN(sim::Outcome outcome,
                              sim::RunPlanWork(resolved, options, unit.runs[i]));
    result.runs.push_back(unit.runs[i]);
    result.outcomes.push_back(std::move(outcome));
  }
  const std::string path = PlanTaskResultPath(t.unit, t.task);
  HEADROOM_RETURN_IF_ERROR(report::WriteWorkResult(path, result));
  return path;
}

}  // namespace headroom::app
