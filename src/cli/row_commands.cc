// `headroom simulate` (one row simulation) and `headroom plan` (capacity planning): both read a
// scenario (built-in by name, or a YAML file), bind it to the catalog and run the row simulator.
#include <cstdio>
#include <iostream>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/check_verdict.h"
#include "app/plan.h"
#include "app/simulate.h"
#include "app/training_row.h"
#include "cli/cluster_commands.h"
#include "cli/commands.h"
#include "console/progress.h"
#include "console/terminal.h"
#include "core/parse.h"
#include "format/table.h"
#include "report/plan_dir.h"
#include "report/plan_report.h"
#include "report/shed_report.h"
#include "report/simulation_report.h"
#include "report/training_row_report.h"

namespace headroom::cli {
namespace {

struct RowOptions {
  std::string scenario = std::string(app::kDefaultScenario);
  std::string trace;
  std::vector<std::string> set;           // policy constant overrides "key=value"
  std::vector<std::string> slo;           // SLO overrides "key=value"
  std::vector<std::string> serving;       // serving overrides "key=value"
  std::vector<std::string> energy_saver;  // "key=value"
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
  bool token_energy = false;
};

struct PlanCliOptions {
  RowOptions row;
  std::string policies;
  int threads = 0;
  std::optional<int> weeks;         // --weeks
  std::optional<int> validate;      // --validate
  std::string max_weekly_risk;      // --max-weekly-risk
  std::string confidence;           // --confidence
  std::optional<int> risk_beyond;   // --risk-beyond
  std::vector<std::string> stress;  // --stress, repeated; "none" drops the scenario's
  std::string shed;                 // --shed
  bool calibrate = false;
  bool html = false;  // --report
  app::ExecutorRequest executor;
};

struct CheckVerdictCliOptions {
  RowOptions row;
  std::string policies;
  std::string servers;  // FROM-TO
  int weeks = 10;
  bool no_stress = false;
  int threads = 0;
  double hot_share = sim::VerdictOptions{}.hot_share;
  std::string warmup = core::FormatDuration(sim::VerdictOptions{}.warmup);
  std::string tail = core::FormatDuration(sim::VerdictOptions{}.tail);
  double margin = sim::VerdictOptions{}.margin;
  std::string exact_from;
};

void AddRowOptions(CLI::App* cmd, RowOptions* o) {
  cmd->add_option("--config,--scenario", o->scenario,
                  fmt::format("Scenario: a built-in name ({}) or a YAML file",
                              fmt::join(app::ScenarioNames(), ", ")))
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
  cmd->add_option("--energy-saver", o->energy_saver,
                  "Run the energy saver on every server, e.g. --energy-saver itl_p50_slo=60ms "
                  "--energy-saver ttft_p99_slo=3s (keys: docs/policies.md#energy-saver)");
  cmd->add_option("--seed", o->seed, "Random seed (default: the scenario's)")
      ->each([o](const std::string&) { o->seed_given = true; });
  AddEngineOptions(cmd, &o->engine);
  cmd->add_flag("--json", o->json, "Print the summary as JSON");
}

app::ScenarioRequest ScenarioRequestOf(const GlobalOptions& global, const RowOptions& o) {
  return {.scenario = o.scenario,
          .catalog_dir = global.catalog_dir,
          .seed = o.seed_given ? std::optional(o.seed) : std::nullopt,
          .slo = o.slo,
          .serving = o.serving,
          .set = o.set,
          .energy_saver = o.energy_saver,
          .engine = o.engine};
}

// The inference row's flags that a training row would silently ignore; empty when none is given.
std::string InferenceOnlyFlag(const SimulateOptions& options) {
  const RowOptions& o = options.row;
  for (const auto& [given, flag] :
       {std::pair{!o.trace.empty(), "--trace"}, std::pair{!o.set.empty(), "--set"},
        std::pair{!o.slo.empty(), "--slo"}, std::pair{!o.serving.empty(), "--serving"},
        std::pair{!o.energy_saver.empty(), "--energy-saver"},
        std::pair{!o.engine.engine.empty() || !o.engine.engine_file.empty(), "--engine"},
        std::pair{options.policy != SimulateOptions{}.policy, "--policy"},
        std::pair{!options.oversubscription.empty(), "--oversubscription"},
        std::pair{options.per_iteration, "--per-iteration"},
        std::pair{options.as_recorded, "--as-recorded"},
        std::pair{options.token_energy, "--token-energy"}}) {
    if (given) return flag;
  }
  return "";
}

// A training-row scenario: every mitigation weighed against the grid's limits.
int RunTrainingRow(const GlobalOptions& global, const SimulateOptions& options) {
  const RowOptions& o = options.row;
  if (const std::string flag = InferenceOnlyFlag(options); !flag.empty()) {
    return ReportError(core::Error::InvalidArgument(fmt::format(
        "{} does not apply to a training row ({}): it takes --servers, --seed, --json, --out "
        "and --report",
        flag, o.scenario)));
  }
  auto run = app::SimulateTrainingRow({.scenario = o.scenario,
                                       .catalog_dir = global.catalog_dir,
                                       .servers = options.servers,
                                       .seed = o.seed_given ? std::optional(o.seed) : std::nullopt,
                                       .out = o.out,
                                       .report = options.html,
                                       .version = HEADROOM_VERSION,
                                       .on_warning = PrintWarning});
  if (!run) return ReportError(run.error());
  const std::string& out = run->out_dir;
  return PrintResult(
      {.json = o.json,
       .json_text = run->summary.dump(2),
       .text = report::TrainingRowText(run->verdict, StdoutStyle()),
       .wrote = out.empty() ? ""
                            : fmt::format("\nwrote {}/{{{},{}}}\n", out, report::kTrainingRowFile,
                                          report::kTrainingPowerFile),
       .report = run->report});
}

int RunSimulate(const GlobalOptions& global, const SimulateOptions& options) {
  const RowOptions& o = options.row;
  if (app::IsTrainingRowScenario(o.scenario)) return RunTrainingRow(global, options);
  InstallStopHandlers();
  ProgressBar bar("simulating", ProgressWanted());
  auto simulation = app::Simulate({.scenario = ScenarioRequestOf(global, o),
                                   .trace = o.trace,
                                   .policy = options.policy,
                                   .servers = options.servers,
                                   .oversubscription = options.oversubscription,
                                   .per_iteration = options.per_iteration,
                                   .as_recorded = options.as_recorded,
                                   .token_energy = options.token_energy,
                                   .out = o.out,
                                   .report = options.html,
                                   .version = HEADROOM_VERSION,
                                   .stop = &StopRequested(),
                                   .progress = [&bar](double f) { bar.Update(f); },
                                   .on_warning = PrintWarning});
  bar.Finish();
  if (!simulation) return ReportError(simulation.error());
  const std::string& out = simulation->out_dir;
  return PrintResult(
      {.json = o.json,
       .json_text = simulation->summary.dump(2),
       .text = report::SimulationText(simulation->result, StdoutStyle(),
                                      simulation->uncapped ? &*simulation->uncapped : nullptr),
       .wrote = out.empty()
                    ? ""
                    : fmt::format("\nwrote {}/{{summary.json,power.csv,requests.csv}}\n", out),
       .report = simulation->report});
}

app::PlanRequest PlanRequestOf(const GlobalOptions& global, const PlanCliOptions& cli) {
  const RowOptions& o = cli.row;
  return {.scenario = ScenarioRequestOf(global, o),
          .trace = o.trace,
          .policies = cli.policies,
          .threads = cli.threads,
          .weeks = cli.weeks,
          .validate = cli.validate,
          .max_weekly_risk = cli.max_weekly_risk,
          .confidence = cli.confidence,
          .risk_beyond = cli.risk_beyond,
          .stress = cli.stress,
          .shed = cli.shed,
          .out = o.out,
          .report = cli.html,
          .version = HEADROOM_VERSION,
          .executor = cli.executor,
          .stop = &StopRequested(),
          .on_warning = PrintWarning};
}

// The capacity search's flags, which a training row (one job, its mitigations weighed) has no
// use for; empty when none is given.
std::string CapacityOnlyFlag(const PlanCliOptions& cli) {
  for (const auto& [given, flag] :
       {std::pair{!cli.policies.empty(), "--policies"}, std::pair{cli.weeks.has_value(), "--weeks"},
        std::pair{cli.validate.has_value(), "--validate"},
        std::pair{!cli.max_weekly_risk.empty(), "--max-weekly-risk"},
        std::pair{!cli.confidence.empty(), "--confidence"},
        std::pair{cli.risk_beyond.has_value(), "--risk-beyond"},
        std::pair{!cli.stress.empty(), "--stress"}, std::pair{!cli.shed.empty(), "--shed"},
        std::pair{cli.calibrate, "--calibrate"},
        std::pair{!cli.executor.kind.empty(), "--executor"}}) {
    if (given) return flag;
  }
  return "";
}

int RunPlan(const GlobalOptions& global, const PlanCliOptions& cli) {
  // A training row's plan is the mitigation that keeps it within the grid's limits: what
  // `simulate` weighs on it.
  if (app::IsTrainingRowScenario(cli.row.scenario)) {
    if (const std::string flag = CapacityOnlyFlag(cli); !flag.empty()) {
      return ReportError(core::Error::InvalidArgument(
          fmt::format("{} does not apply to a training row ({}): its plan weighs the "
                      "mitigations, and takes --seed, --json, --out and --report",
                      flag, cli.row.scenario)));
    }
    SimulateOptions simulate;
    simulate.row = cli.row;
    simulate.html = cli.html;
    return RunTrainingRow(global, simulate);
  }
  const bool json = cli.row.json;
  app::PlanRequest request = PlanRequestOf(global, cli);
  InstallStopHandlers();
  ProgressBar bar(cli.calibrate ? "calibrating" : "planning", ProgressWanted());
  request.progress = [&bar](int done, int total) {
    bar.Update(static_cast<double>(done) / std::max(done + 1, total),
               fmt::format("{} simulations", done));
  };
  if (cli.calibrate) {
    auto c = app::CalibrateLoad(request);
    bar.Finish();
    if (!c) return ReportError(c.error());
    std::cout << (json ? report::CalibrationJson(c->calibration, c->scenario, c->target).dump(2) +
                             "\n"
                       : report::CalibrationText(c->calibration, c->scenario));
    return kExitOk;
  }
  auto plan = app::Plan(request);
  bar.Finish();
  if (!plan) return ReportError(plan.error());
  const std::string& out = plan->out_dir;
  return PrintResult(
      {.json = json,
       .json_text = report::PlanReportJson(plan->data).dump(2),
       .text =
           report::PlanText(plan->data.plan, plan->scenario, plan->data.inputs.engine, plan->ran_on,
                            StdoutStyle()) +
           (plan->data.shed ? report::ShedPlanText(plan->data.plan, *plan->data.shed, StdoutStyle())
                            : ""),
       .wrote = out.empty() ? "" : fmt::format("wrote {}/{}\n", out, report::kPlanFile),
       .report = plan->report});
}

// The cases per policy and count: how often the verdict agreed with the whole week.
std::string CheckVerdictText(const app::CheckVerdictResult& r) {
  format::TextTable t({{"policy", format::TextTable::Align::kLeft},
                       {"servers"},
                       {"weeks"},
                       {"exact events"},
                       {"verdict events"},
                       {"false safe"},
                       {"false unsafe"},
                       {"near budget"},
                       {"exact s/week"},
                       {"verdict s/week"}});
  std::map<std::pair<std::string, int>, std::vector<const app::VerdictCase*>> groups;
  for (const app::VerdictCase& c : r.cases) groups[{c.policy, c.servers}].push_back(&c);
  for (const auto& [key, cases] : groups) {
    int exact = 0, verdict = 0, fs = 0, fu = 0, whole = 0;
    double exact_s = 0, verdict_s = 0;
    for (const app::VerdictCase* c : cases) {
      exact += c->exact_event, verdict += c->verdict_event;
      fs += c->exact_event && !c->verdict_event, fu += !c->exact_event && c->verdict_event;
      exact_s += c->exact_cpu_s, verdict_s += c->verdict_cpu_s;
      whole += c->verdict.near_budget;
    }
    const double n = static_cast<double>(cases.size());
    t.AddRow({key.first, std::to_string(key.second), std::to_string(cases.size()),
              std::to_string(exact), std::to_string(verdict), std::to_string(fs),
              std::to_string(fu), std::to_string(whole), fmt::format("{:.2f}", exact_s / n),
              fmt::format("{:.3f}", verdict_s / n)});
  }
  const double n = static_cast<double>(r.cases.size());
  const int safe = static_cast<int>(r.cases.size()) - r.exact_events;
  return fmt::format(
      "{}\n{} cases on {}: {} with a power event in the exact week; the verdict called {} of "
      "them safe (false safe) and {} of the {} safe weeks unsafe (false unsafe, {:.1f}%); "
      "{:.2f} s a week exact, {:.3f} s the verdict (one core)\n{}",
      t.Render(StdoutStyle()), r.cases.size(), r.scenario, r.exact_events, r.false_safe,
      r.false_unsafe, safe, safe > 0 ? 100.0 * r.false_unsafe / safe : 0.0,
      n > 0 ? r.exact_cpu_s / n : 0, n > 0 ? r.verdict_cpu_s / n : 0,
      r.exact_read > 0
          ? fmt::format("{} of the exact weeks (and their CPU) read from --exact-from\n",
                        r.exact_read)
          : "");
}

nlohmann::json CheckVerdictJson(const app::CheckVerdictResult& r) {
  nlohmann::json cases = nlohmann::json::array();
  for (const app::VerdictCase& c : r.cases) {
    cases.push_back({{"policy", c.policy},
                     {"servers", c.servers},
                     {"seed", c.seed},
                     {"stress", c.stress},
                     {"exact_event", c.exact_event},
                     {"verdict_event", c.verdict_event},
                     {"exact_peak_frac", c.exact.peak_frac},
                     {"verdict_peak_frac", c.verdict.peak_frac},
                     {"verdict_simulated_s", c.verdict.simulated_s},
                     {"verdict_near_budget", c.verdict.near_budget},
                     {"exact_cpu_s", c.exact_cpu_s},
                     {"verdict_cpu_s", c.verdict_cpu_s}});
  }
  return {{"scenario", r.scenario},         {"cases", std::move(cases)},
          {"exact_events", r.exact_events}, {"false_safe", r.false_safe},
          {"false_unsafe", r.false_unsafe}, {"exact_read", r.exact_read},
          {"exact_cpu_s", r.exact_cpu_s},   {"verdict_cpu_s", r.verdict_cpu_s}};
}

int RunCheckVerdict(const GlobalOptions& global, const CheckVerdictCliOptions& cli) {
  app::CheckVerdictRequest request{.scenario = ScenarioRequestOf(global, cli.row),
                                   .policies = cli.policies,
                                   .weeks = cli.weeks,
                                   .stress = !cli.no_stress,
                                   .threads = cli.threads,
                                   .exact_from = cli.exact_from,
                                   .stop = &StopRequested()};
  request.verdict.hot_share = cli.hot_share;
  request.verdict.margin = cli.margin;
  for (const auto& [flag, text, to] : {std::tuple{"--warmup", &cli.warmup, &request.verdict.warmup},
                                       std::tuple{"--tail", &cli.tail, &request.verdict.tail}}) {
    auto d = core::ParseDuration(*text);
    if (!d || *d < core::Duration::zero()) {
      return ReportError(core::Error::InvalidArgument(
          fmt::format("{} '{}': expected a duration, e.g. 10m", flag, *text)));
    }
    *to = *d;
  }
  if (std::sscanf(cli.servers.c_str(), "%d-%d", &request.servers_from, &request.servers_to) != 2) {
    return ReportError(core::Error::InvalidArgument(
        fmt::format("--servers '{}': expected a range FROM-TO, e.g. 48-52", cli.servers)));
  }
  InstallStopHandlers();
  ProgressBar bar("checking", ProgressWanted());
  request.progress = [&bar](int done, int total) {
    bar.Update(static_cast<double>(done) / total, fmt::format("{} of {} cases", done, total));
  };
  auto result = app::CheckVerdict(request);
  bar.Finish();
  if (!result) return ReportError(result.error());
  return PrintResult({.json = cli.row.json,
                      .json_text = CheckVerdictJson(*result).dump(2),
                      .text = CheckVerdictText(*result)});
}

}  // namespace

void RegisterCheckVerdict(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  auto* cmd = app.add_subcommand(
      "check-verdict",
      "Check a plan's cheap power verdict on a week against the exact simulation of the week");
  auto* options = OptionsRunBy(cmd, run, global, RunCheckVerdict);
  AddRowOptions(cmd, &options->row);
  cmd->add_option("--policies", options->policies,
                  "Comma-separated policies (default: the scenario's plan.policies)");
  cmd->add_option("--servers", options->servers, "Server counts FROM-TO, e.g. 48-52")->required();
  cmd->add_option("--weeks", options->weeks,
                  "Unseen weeks (seeds from seed+1000), each also under the scenario's stress "
                  "cases")
      ->capture_default_str();
  cmd->add_flag("--no-stress", options->no_stress, "Leave the stress cases out");
  cmd->add_option("--threads", options->threads, "Cases in parallel (default: all cores)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--hot-share", options->hot_share,
                  "The verdict's hot windows: where the expected load reaches this share of the "
                  "weekday peak without bursts")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--warmup", options->warmup,
                  "The verdict's windows start this long before their hot stretch, the row empty")
      ->capture_default_str();
  cmd->add_option("--tail", options->tail, "And end this long after it")->capture_default_str();
  cmd->add_option("--margin", options->margin,
                  "A week whose windows come within this share of the budget is simulated whole")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--exact-from", options->exact_from,
                  "A previous check-verdict --json output of the same scenario and simulator: "
                  "take each case's exact week from it rather than simulate it again");
}

void RegisterSimulate(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  auto* cmd = app.add_subcommand(
      "simulate", "Simulate a row of inference servers under a power budget and a policy");
  auto* options = OptionsRunBy(cmd, run, global, RunSimulate);
  AddRowOptions(cmd, &options->row);
  cmd->add_option("--policy", options->policy,
                  fmt::format("Row policy: {}", fmt::join(app::PolicyNames(), ", ")))
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
                            app::kDefaultSimulateDir));
  cmd->add_flag("--token-energy", options->token_energy,
                "Attribute each server's GPU energy to prompt tokens, generated tokens and idle "
                "power from its engine windows, as the agent does live, and check it against the "
                "simulator's exact split");
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
                  "Unseen weeks (seeds from seed+1000), each judged on its power alone (a brake "
                  "or time over budget, from the windows where the row nears its budget): a "
                  "count fits only if its weekly risk, bounded from them, meets "
                  "--max-weekly-risk; 0: no risk bound (default: the scenario's "
                  "plan.validate_weeks, else as many as the target needs: 59 for 5% at 95%)");
  cmd->add_option("--max-weekly-risk", options->max_weekly_risk,
                  "The chance of a power event in a week a count may carry, e.g. 5% or 1% "
                  "(default: the scenario's plan.max_weekly_risk, 5%)");
  cmd->add_option("--confidence", options->confidence,
                  "The confidence of the bound on the weekly risk, e.g. 95% (default: the "
                  "scenario's plan.confidence, 95%)");
  cmd->add_option("--risk-beyond", options->risk_beyond,
                  "Also judge every count within N servers of each policy's answer, and the "
                  "chosen answer, on every unseen week, for the risk table and curve (0: the "
                  "answers only; default: the scenario's plan.risk_beyond)");
  cmd->add_option("--stress", options->stress,
                  "A stress case every kept count must also pass, on planning week 1's seed, "
                  "e.g. growth:load=1.1 or bursts:burst_size=3,bursts_per_day=24 (keys: load, "
                  "hp_load, lp_load, bursts_per_day, burst_size, burst_length, peak_to_trough); "
                  "repeat for more; 'none': no stress case (default: the scenario's plan.stress)");
  cmd->add_option("--shed", options->shed,
                  "Demand response: can each policy's answer give up SHED% of the budget within "
                  "COMPLY_WITHIN (60 s by default) and hold it for DURATION, on every planning "
                  "week with the event at its peak, and what is the largest shed it holds; e.g. "
                  "25%:3h or 30%:1h:30s (default: the scenario's plan.demand_response)");
  cmd->add_option("--out", options->row.out,
                  "Write plan.json and row-power.csv here (the chosen policy's row power at its "
                  "capacity, on the planning week where it peaked highest)");
  cmd->add_flag("--report", options->html,
                fmt::format("Also write report.html (self-contained HTML, plots inline) into --out "
                            "(default {}/) and print its path",
                            app::kDefaultPlanDir));
  cmd->add_flag("--calibrate", options->calibrate,
                "Find the per-server load at which the uncapped row peaks at the scenario's "
                "target_baseline_peak, and print it");
  AddExecutorOptions(cmd, &options->executor);
}

}  // namespace headroom::cli
