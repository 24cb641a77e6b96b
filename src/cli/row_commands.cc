// `headroom simulate` (one row simulation) and `headroom plan` (capacity planning): both read a
// scenario (built-in by name, or a YAML file), bind it to the catalog and run the row simulator.
#include <cstdio>
#include <iostream>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "app/simulate.h"
#include "catalog/inference_fits.h"
#include "catalog/model_catalog.h"
#include "cli/commands.h"
#include "console/progress.h"
#include "console/terminal.h"
#include "core/parse.h"
#include "policy/policy_factory.h"
#include "report/plan_dir.h"
#include "report/plan_report.h"
#include "report/result_dir.h"
#include "report/simulate_dir.h"
#include "report/simulation_report.h"
#include "sim/capacity_planner.h"
#include "sim/scenario.h"

namespace headroom::cli {
namespace {

struct RowOptions {
  std::string scenario = std::string(sim::kDefaultScenario);
  std::string trace;
  std::vector<std::string> set;      // policy constant overrides "key=value"
  std::vector<std::string> slo;      // SLO overrides "key=value"
  std::vector<std::string> serving;  // serving overrides "key=value"
  std::uint64_t seed = 0;
  bool seed_given = false;
  EngineOptions engine;
  bool json = false;
  std::string out;
};

struct SimulateOptions {
  RowOptions row;
  std::string policy = "polca";
  int servers = 0;
  std::string oversubscription;
  bool per_iteration = false;
  bool html = false;  // --report
  bool as_recorded = false;
};

struct PlanCliOptions {
  RowOptions row;
  std::string policies;
  int threads = 0;
  std::optional<int> weeks;         // --weeks
  std::optional<int> validate;      // --validate
  std::optional<int> risk_beyond;   // --risk-beyond
  std::vector<std::string> stress;  // --stress, repeated; "none" drops the scenario's
  bool calibrate = false;
  bool html = false;  // --report
};

void AddRowOptions(CLI::App* cmd, RowOptions* o) {
  cmd->add_option("--config,--scenario", o->scenario,
                  fmt::format("Scenario: a built-in name ({}) or a YAML file",
                              fmt::join(sim::ScenarioNames(), ", ")))
      ->capture_default_str();
  cmd->add_option("--trace", o->trace,
                  "Workload: synth-week, azure (both real 1-hour traces), azure-conv, azure-code "
                  "or a trace file (default: the scenario's)");
  cmd->add_option("--slo", o->slo,
                  "Override an SLO bound, e.g. --slo lp_p50_e2e_pct=10 (keys: hp_p50_e2e_pct, "
                  "hp_p99_e2e_pct, lp_p50_e2e_pct, max_brake_events)");
  cmd->add_option("--set", o->set,
                  "Override a policy constant, e.g. --set t1=0.82 (keys: docs/policies.md)");
  cmd->add_option("--serving", o->serving,
                  "Override a serving setting, e.g. --serving max_num_batched_tokens=2048, or "
                  "one vLLM server on one GPU: --serving tp=1 --serving instances_per_server=1 "
                  "(keys: docs/row-simulator.md)");
  cmd->add_option("--seed", o->seed, "Random seed (default: the scenario's)")
      ->each([o](const std::string&) { o->seed_given = true; });
  AddEngineOptions(cmd, &o->engine);
  cmd->add_flag("--json", o->json, "Print the summary as JSON");
}

core::Result<sim::ResolvedScenario> Bind(const GlobalOptions& global, const RowOptions& o) {
  HEADROOM_ASSIGN_OR_RETURN(sim::Scenario scenario, sim::LoadScenario(o.scenario));
  if (o.seed_given) scenario.seed = o.seed;
  for (const std::string& kv : o.slo) {
    HEADROOM_RETURN_IF_ERROR(sim::SetSlo(scenario.slo, kv));
  }
  for (const std::string& kv : o.serving) {
    HEADROOM_RETURN_IF_ERROR(sim::SetServing(scenario, kv));
  }
  for (const std::string& kv : o.set) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("--set {}: expected key=value, e.g. --set t1=0.82", kv)));
    }
    auto v = core::ParseDouble(kv.substr(eq + 1));
    if (!v) return core::Fail(v.error().WithContext("--set " + kv));
    scenario.policy_overrides.emplace_back(kv.substr(0, eq), *v);
  }
  HEADROOM_ASSIGN_OR_RETURN(catalog::HardwareCatalog hardware,
                            app::LoadCatalog(global.catalog_dir));
  HEADROOM_ASSIGN_OR_RETURN(catalog::ModelCatalog models, catalog::ModelCatalog::Embedded());
  HEADROOM_ASSIGN_OR_RETURN(EngineChoice engines, app::LoadEngines(o.engine, scenario.engine));
  scenario.engine = engines.engine;
  return sim::Resolve(scenario, {&hardware, &models, &engines.engines});
}

core::Result<int> ParseOversubscription(const std::string& text, int servers) {
  auto pct = core::ParsePercent(text);
  if (!pct || *pct < 0 || *pct > 1000) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--oversubscription '{}': expected a percentage such as 30%", text)));
  }
  return static_cast<int>(std::lround(servers * (1 + *pct / 100)));
}

// Where `simulate --report` writes when no --out is given.
constexpr const char* kDefaultSimulateDir = "headroom-simulate";

report::SimulateInputs SimulateInputsOf(const sim::ResolvedScenario& resolved, const RowOptions& o,
                                        const std::string& policy, int servers) {
  const sim::Scenario& s = resolved.scenario;
  return {.scenario = s.name,
          .description = s.description,
          .scenario_source = s.source,
          .trace = o.trace,
          .seed = s.seed,
          .policy = policy,
          .servers = servers,
          .provisioned_servers = s.servers,
          .version = HEADROOM_VERSION,
          .overrides = o.set,
          .t1_frac = resolved.params.t1,
          .t2_frac = resolved.params.t2};
}

// --as-recorded: the one request log --trace names replayed as it is (scenario key
// workload.replay: as-recorded); refused, naming the flags, where --trace is not one log.
core::Status ReplayAsRecorded(const std::string& trace, sim::Scenario& scenario) {
  if (trace.empty() || trace == "scenario") {
    if (scenario.workload.replay == sim::WorkloadReplay::kAsRecorded) return core::Ok();
    return core::Fail(core::Error::InvalidArgument(
        "--as-recorded replays one request log: name it with --trace FILE"));
  }
  if (trace == "azure" || trace == "synth-week") {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--as-recorded replays one request log as it is, but --trace {} {}", trace,
                    trace == "azure" ? "is two traces scaled by service" : "synthesizes a week")));
  }
  scenario.workload.replay = sim::WorkloadReplay::kAsRecorded;
  scenario.workload.priority = sim::PriorityAssignment::kByTrace;
  return core::Ok();
}

int RunSimulate(const GlobalOptions& global, const SimulateOptions& options) {
  const RowOptions& o = options.row;
  const std::string& policy = options.policy;
  const bool html = options.html;
  auto resolved = Bind(global, o);
  if (!resolved) return ReportError(resolved.error());
  if (options.as_recorded) {
    if (auto st = ReplayAsRecorded(o.trace, resolved->scenario); !st) {
      return ReportError(st.error());
    }
  }
  int n = options.servers > 0 ? options.servers : resolved->scenario.servers;
  if (!options.oversubscription.empty()) {
    auto m = ParseOversubscription(options.oversubscription, resolved->scenario.servers);
    if (!m) return ReportError(m.error());
    n = *m;
  }
  resolved->row.macro_steps = !options.per_iteration;
  const std::string out = o.out.empty() && html ? kDefaultSimulateDir : o.out;
  InstallStopHandlers();
  ProgressBar bar("simulating", ProgressWanted());
  auto simulation =
      app::SimulateRow({.resolved = &*resolved,
                        .policy = policy,
                        .servers = n,
                        .trace = o.trace,
                        .out_dir = out,
                        .with_uncapped = html && policy != headroom::policy::kUncappedPolicy,
                        .inputs = SimulateInputsOf(*resolved, o, policy, n),
                        .stop = &StopRequested(),
                        .progress = [&bar](double f) { bar.Update(f); }});
  bar.Finish();
  if (!simulation) return ReportError(simulation.error());
  std::optional<std::string> written;
  if (html) {
    auto w = WriteReport(report::ResultKind::kSimulate, out);
    if (!w) return ReportError(w.error());
    written = *w;
  }
  return PrintResult(
      {.json = o.json,
       .json_text = simulation->summary.dump(2),
       .text = report::SimulationText(simulation->result, StdoutStyle()),
       .wrote = out.empty()
                    ? ""
                    : fmt::format("\nwrote {}/{{summary.json,power.csv,requests.csv}}\n", out),
       .report = written});
}

// Where `plan --report` writes when no --out is given.
constexpr const char* kDefaultPlanDir = "headroom-plan";

report::PlanInputs PlanInputsOf(const sim::ResolvedScenario& resolved, const RowOptions& o) {
  const sim::Scenario& s = resolved.scenario;
  report::PlanInputs in{.scenario = s.name,
                        .description = s.description,
                        .scenario_source = s.source,
                        .trace = o.trace,
                        .engine = resolved.row.engine.Label(),
                        .seed = s.seed,
                        .version = HEADROOM_VERSION,
                        .overrides = o.set,
                        .slo = s.slo,
                        .t1_frac = resolved.params.t1,
                        .t2_frac = resolved.params.t2};
  return in;
}

core::Result<sim::PlanOptions> PlanOptionsOf(const PlanCliOptions& cli) {
  const RowOptions& o = cli.row;
  const int threads = cli.threads;
  const std::string& policies = cli.policies;
  sim::PlanOptions options;
  options.trace = o.trace;
  options.weeks = cli.weeks;
  options.validate_weeks = cli.validate;
  options.risk_beyond = cli.risk_beyond;
  if (!cli.row.out.empty() || cli.html) options.power_windows = report::kPlanPowerWindows;
  if (!cli.stress.empty()) {
    options.stress.emplace();
    for (const std::string& spec : cli.stress) {
      if (spec == "none") continue;
      HEADROOM_ASSIGN_OR_RETURN(sim::StressCase c, sim::ParseStressCase(spec));
      options.stress->push_back(std::move(c));
    }
  }
  options.threads = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  for (std::string_view p : core::Split(policies, ',')) {
    if (!core::Trim(p).empty()) options.policies.emplace_back(core::Trim(p));
  }
  if (options.policies == std::vector<std::string>{"all"}) options.policies = policy::PolicyNames();
  options.stop = &StopRequested();
  return options;
}

int RunCalibrate(const sim::ResolvedScenario& resolved, const sim::PlanOptions& options, bool json,
                 ProgressBar& bar) {
  const sim::Scenario& s = resolved.scenario;
  const double target =
      s.workload.target_baseline_peak > 0 ? s.workload.target_baseline_peak : 0.79;
  auto c = sim::CalibrateLoad(resolved, target, 0.002, options);
  bar.Finish();
  if (!c) return ReportError(c.error());
  std::cout << (json ? report::CalibrationJson(*c, s, target).dump(2) + "\n"
                     : report::CalibrationText(*c, s));
  return kExitOk;
}

// --out DIR: plan.json, the chosen policy's row power, and with --report the page.
core::Result<std::optional<std::string>> WritePlanOut(const std::string& out, bool html,
                                                      report::PlanReport& data) {
  // The chosen policy's row power on the planning week where it peaked highest, as the plan ran
  // it.
  if (const sim::PolicyPlan* chosen = sim::ChosenPolicy(data.plan)) {
    data.power = report::PlanRunPowerTrace(chosen->at_max);
  }
  HEADROOM_RETURN_IF_ERROR(report::WritePlanDir(out, data));
  if (!html) return std::optional<std::string>();
  HEADROOM_ASSIGN_OR_RETURN(std::string path, WriteReport(report::ResultKind::kPlan, out));
  return std::optional<std::string>(path);
}

int RunPlan(const GlobalOptions& global, const PlanCliOptions& cli) {
  const RowOptions& o = cli.row;
  const bool calibrate = cli.calibrate;
  const bool html = cli.html;
  auto resolved = Bind(global, o);
  if (!resolved) return ReportError(resolved.error());
  auto options = PlanOptionsOf(cli);
  if (!options) return ReportError(options.error());
  InstallStopHandlers();
  ProgressBar bar(calibrate ? "calibrating" : "planning", ProgressWanted());
  options->progress = [&bar](int done, int total) {
    bar.Update(static_cast<double>(done) / std::max(done + 1, total),
               fmt::format("{} simulations", done));
  };
  if (calibrate) return RunCalibrate(*resolved, *options, o.json, bar);
  auto plan = sim::PlanCapacity(*resolved, *options);
  bar.Finish();
  if (!plan) return ReportError(plan.error());
  report::PlanReport data{.plan = std::move(*plan), .inputs = PlanInputsOf(*resolved, o)};
  const std::string out = o.out.empty() && html ? kDefaultPlanDir : o.out;
  std::optional<std::string> written;
  if (!out.empty()) {
    auto w = WritePlanOut(out, html, data);
    if (!w) return ReportError(w.error());
    written = *w;
  }
  return PrintResult(
      {.json = o.json,
       .json_text = report::PlanReportJson(data).dump(2),
       .text = report::PlanText(data.plan, resolved->scenario, data.inputs.engine, options->threads,
                                StdoutStyle()),
       .wrote = out.empty() ? "" : fmt::format("wrote {}/{}\n", out, report::kPlanFile),
       .report = written});
}

}  // namespace

void RegisterSimulate(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  auto* cmd = app.add_subcommand(
      "simulate", "Simulate a row of inference servers under a power budget and a policy");
  auto* options = OptionsRunBy(cmd, run, global, RunSimulate);
  AddRowOptions(cmd, &options->row);
  cmd->add_option("--policy", options->policy,
                  fmt::format("Row policy: {}", fmt::join(policy::PolicyNames(), ", ")))
      ->capture_default_str();
  auto* s =
      cmd->add_option("--servers", options->servers, "Servers in the row (default: the scenario's)")
          ->check(CLI::Range(1, 100000));
  cmd->add_option("--oversubscription", options->oversubscription,
                  "Servers beyond the provisioned row, e.g. 30% (exclusive with --servers)")
      ->excludes(s);
  cmd->add_option("--out", options->row.out, "Write summary.json, power.csv and requests.csv here");
  cmd->add_flag("--report", options->html,
                fmt::format("Also simulate the uncapped row beside it (in parallel) and write "
                            "report.html (self-contained HTML, plots inline) into --out "
                            "(default {}/); print its path",
                            kDefaultSimulateDir));
  cmd->add_flag("--per-iteration", options->per_iteration,
                "One event per decode iteration (slow; the reference for the macro steps)");
  cmd->add_flag("--as-recorded", options->as_recorded,
                "Replay the --trace FILE request log as recorded: each request at its arrival with "
                "its prompt, output and cached tokens (a cached_tokens column), not scaled to the "
                "scenario's per-server rates; priorities from its priority column, low where it "
                "has none. One vLLM server on one GPU replaying a log: --trace log.csv "
                "--as-recorded --servers 1 --serving tp=1 --serving instances_per_server=1");
}

void RegisterPlan(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  auto* cmd = app.add_subcommand(
      "plan", "How many servers fit in a row's power budget, per policy, keeping the SLO");
  auto* options = OptionsRunBy(cmd, run, global, RunPlan);
  AddRowOptions(cmd, &options->row);
  cmd->add_option("--policies", options->policies,
                  "Comma-separated policies to plan for, or 'all' (default: the scenario's)");
  cmd->add_option("--threads", options->threads, "Simulations in parallel (default: all cores)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--weeks", options->weeks,
                  "Planning weeks (seeds seed, seed+1, ...): a count fits only if it keeps the SLO "
                  "on every one (default: the scenario's plan.weeks)");
  cmd->add_option("--validate", options->validate,
                  "Unseen weeks (seeds from seed+1000) each answer is checked on and lowered until "
                  "it holds on all; 0: none (default: the scenario's plan.validate_weeks)");
  cmd->add_option("--risk-beyond", options->risk_beyond,
                  "Also run every count up to N servers beyond each policy's answer on every "
                  "planning week and stress case, each run stopped at its first power event, for "
                  "the risk curve (0: the counts the search ran; default: the scenario's "
                  "plan.risk_beyond)");
  cmd->add_option("--stress", options->stress,
                  "A stress case every kept count must also pass, on planning week 1's seed, "
                  "e.g. growth:load=1.1 or bursts:burst_size=3,bursts_per_day=24 (keys: load, "
                  "hp_load, lp_load, bursts_per_day, burst_size, burst_length, peak_to_trough); "
                  "repeat for more; 'none': no stress case (default: the scenario's plan.stress)");
  cmd->add_option("--out", options->row.out,
                  "Write plan.json and row-power.csv here (the chosen policy's row power at its "
                  "capacity, on the planning week where it peaked highest)");
  cmd->add_flag("--report", options->html,
                fmt::format("Also write report.html (self-contained HTML, plots inline) into --out "
                            "(default {}/) and print its path",
                            kDefaultPlanDir));
  cmd->add_flag("--calibrate", options->calibrate,
                "Find the per-server load at which the uncapped row peaks at the scenario's "
                "target_baseline_peak, and print it");
}

}  // namespace headroom::cli
