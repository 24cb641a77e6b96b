#include "sim/plan_runs.h"

#include <cmath>

#include "policy/policy_factory.h"
#include "sim/power_verdict.h"
#include "sim/scenario_run.h"
#include "sim/workload.h"

namespace headroom::sim {
namespace {

// One job's run: replayed from the week's recording when there is one, else on a fresh stream
// that is recorded as it is read.
core::Result<RowResult> RunJob(const ResolvedScenario& scenario, const Job& job,
                               const PlanOptions& options, const RunOptions& run,
                               WeekRecordings& recordings) {
  if (std::shared_ptr<const RecordedRequests> recorded = recordings.Find(job)) {
    ReplaySource replay(std::move(recorded));
    return RunScenarioOn(scenario, job.policy, job.servers, replay, run);
  }
  if (!recordings.enabled()) {
    return RunScenario(scenario, job.policy, job.servers, options.trace, run);
  }
  HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<RequestSource> source,
                            MakeWorkload(scenario.scenario, options.trace, job.servers,
                                         HpServers(job.servers, scenario.row.hp_server_fraction),
                                         scenario.scenario.seed));
  RecordingSource recording(*source);
  auto result = RunScenarioOn(scenario, job.policy, job.servers, recording, run);
  if (result && recording.complete()) recordings.Keep(job, recording.Take());
  return result;
}

}  // namespace

std::vector<Job> Interleaved(const std::vector<Job>& jobs) {
  std::vector<std::vector<Job>> groups;
  for (const Job& j : jobs) {
    const auto same = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return g.front().week == j.week && g.front().servers == j.servers;
    });
    if (same == groups.end()) {
      groups.push_back({j});
    } else {
      same->push_back(j);
    }
  }
  std::vector<Job> out;
  for (std::size_t round = 0; out.size() < jobs.size(); ++round) {
    for (const auto& g : groups) {
      if (round < g.size()) out.push_back(g[round]);
    }
  }
  return out;
}

core::Result<Outcome> RunOne(const ResolvedScenario& scenario, const Run& job,
                             const PlanOptions& options, WeekRecordings& recordings,
                             const std::vector<std::string>& shadows,
                             const std::atomic<bool>* stop) {
  RunOptions run;
  run.stop = stop;
  run.keep_power_series = false;
  const double period_s = core::ToSeconds(scenario.row.power.telemetry_period);
  run.expected_duration_s = ExpectedDuration(scenario.scenario, options.trace);
  if (options.power_windows > 0 && period_s > 0) {
    run.power_window_periods = std::max(
        1, static_cast<int>(std::ceil(run.expected_duration_s / period_s / options.power_windows)));
  }
  if (job.stops) run.stop_after_power_events = scenario.scenario.slo.max_brake_events;
  std::vector<std::unique_ptr<policy::RowPolicy>> shadowing;
  if (job.job.policy == policy::kUncappedPolicy) {
    HEADROOM_RETURN_IF_ERROR(AddShadows(scenario, shadows, &shadowing, &run));
  }
  HEADROOM_ASSIGN_OR_RETURN(RowResult result, RunJob(scenario, job.job, options, run, recordings));
  Outcome out;
  for (std::size_t k = 0; k < result.quiet_shadows.size(); ++k) {
    if (result.quiet_shadows[k]) out.quiet.push_back(shadows[k]);
  }
  out.summary = Summarize(result);
  out.summary.week = job.job.week;
  out.summary.power_window_s = run.power_window_periods * period_s;
  return out;
}

core::Result<Outcome> JudgeOne(const ResolvedScenario& scenario, const Job& job,
                               const PlanOptions& options, const std::vector<std::string>& shadows,
                               const std::atomic<bool>* stop) {
  const bool uncapped = job.policy == policy::kUncappedPolicy;
  HEADROOM_ASSIGN_OR_RETURN(
      PowerVerdict verdict,
      JudgePower(scenario, job.policy, job.servers, options.trace, options.verdict,
                 uncapped ? shadows : std::vector<std::string>{}, stop));
  Outcome out{.summary = std::move(verdict.summary), .quiet = std::move(verdict.quiet)};
  out.summary.week = job.week;
  return out;
}

}  // namespace headroom::sim
