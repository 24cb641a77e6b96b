#include "sim/demand_response.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "core/parse.h"
#include "policy/budget_schedule.h"
#include "policy/policies.h"
#include "sim/power_verdict.h"
#include "sim/run_summary.h"
#include "sim/scenario_run.h"
#include "sim/workload.h"

namespace headroom::sim {
namespace {

// The report's plot of the event: row power in windows this long.
constexpr double kPlotWindowS = 30;
// The largest shed searched, in whole percents: a row cannot shed all of its budget.
constexpr int kMostShedPct = 99;

// One run of the plan's event: a policy at a count on a planning week, asked to shed `shed`.
struct EventRun {
  std::string policy;
  int servers = 0;
  int week = 0;
  int shed_pct = 0;
  auto Key() const { return std::tie(policy, servers, week, shed_pct); }
  bool operator<(const EventRun& o) const { return Key() < o.Key(); }
  bool operator==(const EventRun& o) const { return Key() == o.Key(); }
};

// The stretch a week's event runs over: from `begin_s` (the warm-up before it) to its end.
struct Stretch {
  double begin_s = 0;
  double event_s = 0;
  double end_s = 0;
};

// Hand-written for want of a parallel map in the standard library or the Debian packages the
// project uses: `jobs` on `threads` threads, each result in its slot, the first error returned.
template <typename T>
core::Result<std::vector<T>> RunAll(const std::vector<std::function<core::Result<T>()>>& jobs,
                                    int threads) {
  std::vector<std::optional<core::Result<T>>> out(jobs.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t k; (k = next++) < jobs.size();) out[k] = jobs[k]();
  };
  std::vector<std::thread> pool;
  const int n = std::clamp(threads, 1, static_cast<int>(std::max<std::size_t>(1, jobs.size())));
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  std::vector<T> results;
  for (auto& r : out) {
    if (!*r) return core::Fail(r->error());
    results.push_back(std::move(**r));
  }
  return results;
}

class ShedSearch {
 public:
  ShedSearch(const ResolvedScenario& scenario, const CapacityPlan& plan, const ShedOptions& options)
      : scenario_(scenario), plan_(plan), options_(options) {}

  core::Result<ShedPlan> Run();

 private:
  core::Status PlaceEvents();
  core::Result<RowResult> Simulate(const EventRun& run) const;
  core::Status RunNeeded(const std::vector<EventRun>& runs);
  ShedTrial Trial(const EventRun& run) const;
  std::vector<ShedTrial> Trials(const std::string& policy, int servers, int shed_pct) const;
  core::Status Search(std::vector<PolicyShed>& policies);
  void Plot(ShedPlan& out) const;

  const ResolvedScenario& scenario_;
  const CapacityPlan& plan_;
  const ShedOptions& options_;
  std::map<std::pair<int, int>, Stretch> stretches_;  // by (week, servers)
  std::map<EventRun, RowResult> results_;
  int done_ = 0;
};

int AskedPct(const DemandResponse& d) { return static_cast<int>(std::lround(d.shed * 100)); }

core::Status ShedSearch::PlaceEvents() {
  const Scenario& s = scenario_.scenario;
  const double length_s = core::ToSeconds(options_.asked.length);
  const double warmup_s = core::ToSeconds(options_.warmup);
  for (const PolicyPlan& p : plan_.policies) {
    for (int w = 0; w < plan_.planning_weeks; ++w) {
      if (p.max_servers <= 0 || stretches_.count({w, p.max_servers})) continue;
      Scenario week = s;
      week.seed = plan_.week_seeds[static_cast<std::size_t>(w)];
      HEADROOM_ASSIGN_OR_RETURN(
          const std::vector<std::unique_ptr<TraceSynth>> streams,
          SynthStreams(week, options_.trace, p.max_servers,
                       HpServers(p.max_servers, scenario_.row.hp_server_fraction), week.seed));
      if (streams.empty()) {
        return core::Fail(core::Error::InvalidArgument(
            "--shed/plan.demand_response places its event on a synthesized week's load: this "
            "workload replays real traces (--trace synth-week)"));
      }
      std::vector<const TraceSynth*> views;
      for (const auto& t : streams) views.push_back(t.get());
      const double duration_s = ExpectedDuration(week, options_.trace);
      const double event_s =
          std::max(warmup_s, PeakStretch(views, duration_s, std::min(length_s, duration_s)));
      stretches_[{w, p.max_servers}] = {.begin_s = event_s - warmup_s,
                                        .event_s = event_s,
                                        .end_s = std::min(duration_s, event_s + length_s)};
    }
  }
  return core::Ok();
}

core::Result<RowResult> ShedSearch::Simulate(const EventRun& run) const {
  const Stretch& at = stretches_.at({run.week, run.servers});
  ResolvedScenario window = scenario_;
  window.scenario.seed = plan_.week_seeds[static_cast<std::size_t>(run.week)];
  window.scenario.workload.synth_window = {core::FromSeconds(at.begin_s),
                                           core::FromSeconds(at.end_s)};
  const policy::BudgetWindow event{.start = core::FromSeconds(at.event_s - at.begin_s),
                                   .length = core::FromSeconds(at.end_s - at.event_s),
                                   .daily = false,
                                   .shed = run.shed_pct / 100.0,
                                   .comply_within = options_.asked.comply_within,
                                   .reason = "demand response"};
  HEADROOM_ASSIGN_OR_RETURN(window.row.power.budget_schedule,
                            policy::BudgetSchedule::Make({event}));
  RunOptions ro;
  ro.stop = options_.stop;
  ro.keep_power_series = false;
  ro.expected_duration_s = at.end_s - at.begin_s;
  // The first planning week at the asked shed is the report's plot.
  if (run.week == 0 && run.shed_pct == AskedPct(options_.asked)) {
    ro.power_window_periods = std::max(
        1, static_cast<int>(kPlotWindowS / core::ToSeconds(scenario_.row.power.telemetry_period)));
  }
  return RunScenario(window, run.policy, run.servers, options_.trace, ro);
}

core::Status ShedSearch::RunNeeded(const std::vector<EventRun>& runs) {
  std::vector<EventRun> todo;
  for (const EventRun& r : runs) {
    if (!results_.count(r) && std::find(todo.begin(), todo.end(), r) == todo.end()) {
      todo.push_back(r);
    }
  }
  std::vector<std::function<core::Result<RowResult>()>> jobs;
  for (const EventRun& r : todo) jobs.push_back([this, r] { return Simulate(r); });
  HEADROOM_ASSIGN_OR_RETURN(std::vector<RowResult> results, RunAll(jobs, options_.threads));
  for (std::size_t k = 0; k < todo.size(); ++k) results_[todo[k]] = std::move(results[k]);
  done_ += static_cast<int>(todo.size());
  return core::Ok();
}

// What broke a week's hold, each cause with its figure; empty when it held.
std::string WhyNot(const BudgetEvent& e) {
  std::vector<std::string> why;
  if (e.brake_events > 0) {
    why.push_back(fmt::format("{} brake{}", e.brake_events, e.brake_events == 1 ? "" : "s"));
  }
  const std::optional<double>& after = e.compliance.complied_after_s;
  if (!after) {
    why.push_back(fmt::format("never a minute under {:.1f} kW", e.budget_w / 1e3));
  } else if (*after > e.comply_within_s) {
    why.push_back(fmt::format("under {:.1f} kW after {:.0f} s, not within {:.0f} s",
                              e.budget_w / 1e3, *after, e.comply_within_s));
  }
  if (e.compliance.over_after_deadline_s > 0) {
    why.push_back(fmt::format("over {:.1f} kW for {:.0f} s after the deadline (peak {:.1f} kW)",
                              e.budget_w / 1e3, e.compliance.over_after_deadline_s,
                              e.compliance.peak_after_deadline_w / 1e3));
  }
  // The row's floor: braked whole, it still drew more than it was asked to.
  const double braked_w = e.braked_s > 0 ? e.braked_energy_j / e.braked_s : 0;
  if (braked_w > e.budget_w) {
    why.push_back(
        fmt::format("with every server braked ({:.0f} s) it drew {:.1f} kW: this load "
                    "alone is above the lowered budget",
                    e.braked_s, braked_w / 1e3));
  }
  return fmt::format("{}", fmt::join(why, "; "));
}

ShedTrial ShedSearch::Trial(const EventRun& run) const {
  const Stretch& at = stretches_.at({run.week, run.servers});
  const RowResult& r = results_.at(run);
  EventRun base = run;
  base.policy = std::string(policy::kUncappedPolicy);
  base.shed_pct = AskedPct(options_.asked);
  const RowResult& u = results_.at(base);
  ShedTrial t{.week = run.week, .shed = run.shed_pct / 100.0, .start_s = at.event_s};
  if (r.budget_events.empty() || u.budget_events.empty()) {
    t.why_not = "the run never reached the event";
    return t;
  }
  const BudgetEvent& e = r.budget_events.front();
  const BudgetEvent& b = u.budget_events.front();
  t.budget_w = e.budget_w;
  t.why_not = WhyNot(e);
  t.held = t.why_not.empty();
  t.complied_after_s = e.compliance.complied_after_s;
  t.comply_within_s = e.comply_within_s;
  t.over_after_deadline_s = e.compliance.over_after_deadline_s;
  t.peak_after_deadline_w = e.compliance.peak_after_deadline_w;
  t.brake_events = e.brake_events;
  t.power_before_w = e.power_before_w;
  t.mean_w = e.mean_w();
  t.uncapped_mean_w = b.mean_w();
  t.energy_not_drawn_j = b.energy_j - e.energy_j;
  t.hp_p50_pct = PctChange(e.hp_e2e.Quantile(0.5), b.hp_e2e.Quantile(0.5));
  t.hp_p99_pct = PctChange(e.hp_e2e.Quantile(0.99), b.hp_e2e.Quantile(0.99));
  t.lp_p50_pct = PctChange(e.lp_e2e.Quantile(0.5), b.lp_e2e.Quantile(0.5));
  t.lp_p99_pct = PctChange(e.lp_e2e.Quantile(0.99), b.lp_e2e.Quantile(0.99));
  return t;
}

std::vector<ShedTrial> ShedSearch::Trials(const std::string& policy, int servers,
                                          int shed_pct) const {
  std::vector<ShedTrial> out;
  for (int w = 0; w < plan_.planning_weeks; ++w) {
    out.push_back(Trial({.policy = policy, .servers = servers, .week = w, .shed_pct = shed_pct}));
  }
  return out;
}

bool AllHeld(const std::vector<ShedTrial>& trials) {
  return std::all_of(trials.begin(), trials.end(), [](const ShedTrial& t) { return t.held; });
}

// The runs of `p` at `shed_pct` on every planning week, and the uncapped row's beside them.
std::vector<EventRun> RunsAt(const PolicyShed& p, int shed_pct, int weeks, int asked_pct) {
  std::vector<EventRun> runs;
  for (int w = 0; w < weeks; ++w) {
    runs.push_back({.policy = p.policy, .servers = p.servers, .week = w, .shed_pct = shed_pct});
    runs.push_back({.policy = std::string(policy::kUncappedPolicy),
                    .servers = p.servers,
                    .week = w,
                    .shed_pct = asked_pct});
  }
  return runs;
}

// Bisects each policy's largest shed held, all policies' runs of a round at once: `held` below
// `fails` above, in whole percents.
core::Status ShedSearch::Search(std::vector<PolicyShed>& policies) {
  const int asked = AskedPct(options_.asked);
  std::vector<std::pair<int, int>> range;  // (held, fails)
  for (const PolicyShed& p : policies) {
    range.emplace_back(p.holds ? asked : 0, p.holds ? kMostShedPct + 1 : asked);
  }
  while (true) {
    std::vector<EventRun> round;
    for (std::size_t k = 0; k < policies.size(); ++k) {
      const auto [held, fails] = range[k];
      if (fails - held <= 1) continue;
      const std::vector<EventRun> runs =
          RunsAt(policies[k], (held + fails) / 2, plan_.planning_weeks, asked);
      round.insert(round.end(), runs.begin(), runs.end());
    }
    if (round.empty()) break;
    HEADROOM_RETURN_IF_ERROR(RunNeeded(round));
    if (options_.progress) options_.progress(done_, done_ + static_cast<int>(round.size()));
    for (std::size_t k = 0; k < policies.size(); ++k) {
      auto& [held, fails] = range[k];
      if (fails - held <= 1) continue;
      const int mid = (held + fails) / 2;
      (AllHeld(Trials(policies[k].policy, policies[k].servers, mid)) ? held : fails) = mid;
    }
  }
  for (std::size_t k = 0; k < policies.size(); ++k) {
    PolicyShed& p = policies[k];
    p.largest_held = range[k].first;
    if (p.largest_held > 0) p.at_largest = Trials(p.policy, p.servers, range[k].first);
  }
  return core::Ok();
}

void ShedSearch::Plot(ShedPlan& out) const {
  const PolicyPlan* chosen = ChosenPolicy(plan_);
  if (chosen == nullptr || chosen->max_servers <= 0) return;
  const int asked = AskedPct(options_.asked);
  const EventRun run{.policy = chosen->policy, .servers = chosen->max_servers, .shed_pct = asked};
  EventRun base = run;
  base.policy = std::string(policy::kUncappedPolicy);
  if (!results_.count(run) || !results_.count(base)) return;
  const Stretch& at = stretches_.at({0, chosen->max_servers});
  out.plotted_policy = chosen->policy;
  out.event_at_s = at.event_s - at.begin_s;
  out.power = results_.at(run).power_windows;
  out.uncapped_power = results_.at(base).power_windows;
}

core::Result<ShedPlan> ShedSearch::Run() {
  HEADROOM_RETURN_IF_ERROR(CheckDemandResponse(options_.asked));
  HEADROOM_RETURN_IF_ERROR(PlaceEvents());
  const int asked = AskedPct(options_.asked);
  std::vector<PolicyShed> policies;
  std::vector<EventRun> first;
  for (const PolicyPlan& p : plan_.policies) {
    if (p.policy == policy::kUncappedPolicy || p.max_servers <= 0) continue;
    policies.push_back({.policy = p.policy, .servers = p.max_servers});
    const std::vector<EventRun> runs = RunsAt(policies.back(), asked, plan_.planning_weeks, asked);
    first.insert(first.end(), runs.begin(), runs.end());
  }
  HEADROOM_RETURN_IF_ERROR(RunNeeded(first));
  for (PolicyShed& p : policies) {
    p.asked = Trials(p.policy, p.servers, asked);
    p.holds = AllHeld(p.asked);
    for (const ShedTrial& t : p.asked) {
      if (t.held) continue;
      p.why_not = fmt::format("{}: {}", WeekName(plan_, t.week), t.why_not);
      break;
    }
  }
  HEADROOM_RETURN_IF_ERROR(Search(policies));
  ShedPlan out{.shed = options_.asked.shed,
               .length_s = core::ToSeconds(options_.asked.length),
               .comply_within_s = core::ToSeconds(options_.asked.comply_within),
               .policies = std::move(policies),
               .simulations = done_,
               .budget_w = scenario_.row.power.budget.value()};
  Plot(out);
  return out;
}

}  // namespace

core::Result<ShedPlan> PlanShed(const ResolvedScenario& scenario, const CapacityPlan& plan,
                                const ShedOptions& options) {
  return ShedSearch(scenario, plan, options).Run();
}

core::Result<DemandResponse> ParseShed(std::string_view spec) {
  const auto fail = [&](std::string_view why) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "--shed '{}': {} (expected SHED%:DURATION[:COMPLY_WITHIN], e.g. 25%:3h or 30%:1h:30s)",
        spec, why)));
  };
  const std::vector<std::string_view> parts = core::Split(spec, ':');
  if (parts.size() < 2 || parts.size() > 3) return fail("two or three fields");
  DemandResponse d;
  auto pct = core::ParsePercent(parts[0]);
  if (!pct) return fail(pct.error().message());
  d.shed = *pct / 100;
  auto length = core::ParseDuration(parts[1]);
  if (!length) return fail(length.error().message());
  d.length = *length;
  if (parts.size() == 3) {
    auto within = core::ParseDuration(parts[2]);
    if (!within) return fail(within.error().message());
    d.comply_within = *within;
  }
  if (auto ok = CheckDemandResponse(d); !ok) return fail(ok.error().message());
  return d;
}

}  // namespace headroom::sim
