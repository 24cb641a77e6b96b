#include "sim/capacity_planner.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "policy/policy_factory.h"
#include "sim/plan_runs.h"
#include "sim/weekly_risk.h"

namespace headroom::sim {
namespace {

// Weeks a search asks for at a time per count (verdict's in_turn): one, so that a count that
// fails costs no week past the first that fails; the pool keeps the threads busy with the next
// weeks meanwhile (RunPool's runs ahead), dropped where the count fails first. A constant, not
// the thread count, so that the plan is the same on any machine.
constexpr int kSearchWeeksPerRound = 1;

// Whether a policy keeps the SLO at a server count on a range of weeks.
struct Verdict {
  bool keeps = true;
  int week = -1;    // the first week that breaks it
  std::string why;  // SloViolation's reason there
};

// The worse of two changes: the larger latency change, the smaller throughput change.
Impact Worst(const Impact& a, const Impact& b) {
  return {.hp_p50_e2e_pct = std::max(a.hp_p50_e2e_pct, b.hp_p50_e2e_pct),
          .hp_p99_e2e_pct = std::max(a.hp_p99_e2e_pct, b.hp_p99_e2e_pct),
          .lp_p50_e2e_pct = std::max(a.lp_p50_e2e_pct, b.lp_p50_e2e_pct),
          .lp_p99_e2e_pct = std::max(a.lp_p99_e2e_pct, b.lp_p99_e2e_pct),
          .hp_throughput_pct = std::min(a.hp_throughput_pct, b.hp_throughput_pct),
          .lp_throughput_pct = std::min(a.lp_throughput_pct, b.lp_throughput_pct)};
}

// The stress cases a plan runs: the options', else the scenario's; of the scenario's, on a real
// trace (the same whatever the seed or the synthesizer's shape), those that apply to it, as its
// weeks fall back to one there.
std::vector<StressCase> StressCases(const Scenario& s, const PlanOptions& options) {
  if (options.stress) return *options.stress;
  std::vector<StressCase> out;
  for (const StressCase& c : s.plan_stress) {
    if (SynthesizedWorkload(s, options.trace) || Stressed(s, c, options.trace)) out.push_back(c);
  }
  return out;
}

// The risk a count may carry and at what confidence, from the options or else the scenario.
core::Status ChooseRisk(const Scenario& s, const PlanOptions& options, CapacityPlan* plan) {
  plan->max_weekly_risk = options.max_weekly_risk.value_or(s.plan_max_weekly_risk);
  plan->confidence = options.confidence.value_or(s.plan_confidence);
  return ValidateRiskTarget(plan->max_weekly_risk, plan->confidence);
}

// The unseen weeks of a synthesized workload: as many as asked, at least as many as a count
// needs, all clean, to meet the risk target (0: no risk bound, asked for explicitly).
core::Result<int> UnseenWeeks(const Scenario& s, const PlanOptions& options,
                              const CapacityPlan& plan) {
  const int needed = CleanWeeksNeeded(plan.max_weekly_risk, plan.confidence);
  const std::optional<int> asked =
      options.validate_weeks ? options.validate_weeks : s.plan_validate_weeks;
  if (!asked) return needed;
  if (*asked > 0 && *asked < needed) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "{} {}: {} unseen week{} cannot bound the weekly risk at or below {}% at {}% "
        "confidence, even all clean: {} would (or 0: no risk bound)",
        options.validate_weeks ? "--validate" : "plan.validate_weeks", *asked, *asked,
        *asked == 1 ? "" : "s", plan.max_weekly_risk * 100, plan.confidence * 100, needed)));
  }
  return *asked;
}

// The weeks a plan runs: how many of each, from the options or else the scenario.
core::Status ChooseWeeks(const Scenario& s, const PlanOptions& options, CapacityPlan* plan) {
  if (options.weeks && (*options.weeks < 1 || *options.weeks > kMaxPlanWeeks)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--weeks {}: expected 1 to {} weeks", *options.weeks, kMaxPlanWeeks)));
  }
  if (options.validate_weeks &&
      (*options.validate_weeks < 0 || *options.validate_weeks > kMaxUnseenWeeks)) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "--validate {}: expected 0 to {} weeks", *options.validate_weeks, kMaxUnseenWeeks)));
  }
  HEADROOM_RETURN_IF_ERROR(ChooseRisk(s, options, plan));
  if (!SynthesizedWorkload(s, options.trace)) {
    // A real trace is the same whatever the seed: one week, none unseen, no risk to bound.
    if (options.weeks.value_or(1) > 1 || options.validate_weeks.value_or(0) > 0 ||
        options.max_weekly_risk || options.confidence) {
      return core::Fail(core::Error::InvalidArgument(fmt::format(
          "--weeks/--validate/--max-weekly-risk/--confidence: the workload '{}' replays real "
          "traces, the same whatever the seed; more weeks, and a weekly risk, need a "
          "synthesized one (--trace synth-week)",
          options.trace.empty() ? "scenario" : options.trace)));
    }
    plan->planning_weeks = 1;
    plan->validation_weeks = 0;
  } else {
    plan->planning_weeks = options.weeks.value_or(s.plan_weeks);
    HEADROOM_ASSIGN_OR_RETURN(plan->validation_weeks, UnseenWeeks(s, options, *plan));
  }
  for (int w = 0; w < plan->planning_weeks; ++w) {
    plan->week_seeds.push_back(s.seed + static_cast<std::uint64_t>(w));
  }
  const std::vector<StressCase> stress = StressCases(s, options);
  for (std::size_t i = 0; i < stress.size(); ++i) {
    const StressCase& c = stress[i];
    for (std::size_t j = 0; j < i; ++j) {
      if (stress[j].name == c.name) {
        return core::Fail(core::Error::InvalidArgument(
            fmt::format("stress case '{}' is given twice: name each once", c.name)));
      }
    }
    plan->stress_cases.push_back(DescribeStress(c));
    plan->week_seeds.push_back(s.seed);
  }
  for (int v = 0; v < plan->validation_weeks; ++v) {
    plan->week_seeds.push_back(s.seed + kValidationSeedOffset + static_cast<std::uint64_t>(v));
  }
  return core::Ok();
}

// Week `w` of the plan as a scenario: a planning week, a stress case or an unseen week, with its
// seed.
core::Result<ResolvedScenario> PlanWeek(const ResolvedScenario& scenario,
                                        const PlanOptions& options, const CapacityPlan& plan,
                                        int w) {
  ResolvedScenario week = scenario;
  if (w >= plan.planning_weeks && w < SearchedWeeks(plan)) {
    const std::vector<StressCase> stress = StressCases(scenario.scenario, options);
    HEADROOM_ASSIGN_OR_RETURN(
        week.scenario,
        Stressed(scenario.scenario, stress[static_cast<std::size_t>(w - plan.planning_weeks)],
                 options.trace));
  }
  week.scenario.seed = plan.week_seeds[static_cast<std::size_t>(w)];
  return week;
}

// The plan's weeks as scenarios: planning weeks, stress cases, unseen weeks.
core::Result<std::vector<ResolvedScenario>> PlanWeeks(const ResolvedScenario& scenario,
                                                      const PlanOptions& options,
                                                      const CapacityPlan& plan) {
  std::vector<ResolvedScenario> weeks;
  for (int w = 0; w < SearchedWeeks(plan) + plan.validation_weeks; ++w) {
    HEADROOM_ASSIGN_OR_RETURN(ResolvedScenario week, PlanWeek(scenario, options, plan, w));
    weeks.push_back(std::move(week));
  }
  return weeks;
}

// The policies a plan searches: the options', else the scenario's, else every one.
std::vector<std::string> PlanPolicies(const Scenario& s, const PlanOptions& options) {
  std::vector<std::string> policies = options.policies.empty() ? s.plan_policies : options.policies;
  if (policies.empty()) policies = policy::PolicyNames();
  return policies;
}

// The capping policies stepped beside each uncapped run (PlanOptions::share_quiet_runs).
std::vector<std::string> PlanShadows(const std::vector<std::string>& policies,
                                     const PlanOptions& options) {
  std::vector<std::string> shadows;
  if (!options.share_quiet_runs) return shadows;
  std::copy_if(policies.begin(), policies.end(), std::back_inserter(shadows),
               [](const std::string& p) { return p != policy::kUncappedPolicy; });
  return shadows;
}

// A run on its week: an unseen week's power verdict (unless run whole), else its simulation.
core::Result<Outcome> RunOnWeek(const ResolvedScenario& week, const Run& r, int planning,
                                const PlanOptions& options, WeekRecordings& recordings,
                                const std::vector<std::string>& shadows,
                                const std::atomic<bool>* stop) {
  if (r.job.week >= planning && !r.job.whole) return JudgeOne(week, r.job, options, shadows, stop);
  return RunOne(week, r, options, recordings, shadows, stop);
}

}  // namespace

namespace {

// The search of one plan (PlanCapacity): each policy's largest server count that keeps the SLO
// on the planning weeks and stress cases, each answer checked on the unseen weeks and lowered
// until it holds, and the risk past each answer; every run through one pool of threads, each
// asked for once (done_). Which runs the plan uses depends on their outcomes alone.
class CapacitySearch {
 public:
  CapacitySearch(const ResolvedScenario& scenario, const PlanOptions& options,
                 std::vector<std::string> policies, CapacityPlan plan,
                 std::vector<ResolvedScenario> weeks);

  core::Result<CapacityPlan> Plan();

 private:
  // Runs the plan will probably ask for next, each with whether, a policy's, it waits for its
  // week's baseline (RunPool).
  using Ahead = std::vector<std::pair<sim::Run, bool>>;
  // A search per policy on [n0, n_max] over the planning weeks: lo keeps the SLO on all of them
  // (or is n0 - 1), hi does not (or is n_max + 1).
  struct Search {
    int lo, hi;
    int step = 1;
    std::optional<int> next;  // the count to decide next
  };
  // An answer on the unseen weeks, lowered one server at a time until it holds on all of them.
  struct Check {
    int servers;
    bool settled;
    std::string first_failure, last_failure;  // "unseen week 1 (seed 1001): 1 brake event"
  };

  // The power verdicts of a count's unseen weeks: how many had a power event, the bound on the
  // weekly risk, and the first such week.
  struct Risk {
    int events = 0;
    double upper = 1;
    int first_week = -1;
    std::string why;
  };

  bool ActsBy(const std::string& p, int n) const;
  std::optional<Risk> RiskOn(const std::string& p, int n, std::vector<Job>* missing) const;
  void UnseenAt(const std::string& p, int n, Ahead* out) const;
  core::Status RunJobs(const std::vector<Job>& jobs, const Ahead& ahead, bool power_only = false);
  std::vector<std::pair<sim::Run, int>> Ordered(const std::vector<Job>& todo,
                                                bool power_only) const;
  void Record(const std::vector<std::pair<sim::Run, int>>& needed);
  void Keep(const Job& job, RunSummary summary);
  std::optional<Verdict> VerdictOn(const std::string& p, int n, int from, int to,
                                   std::vector<Job>* missing, bool in_turn = false) const;
  Verdict Judge(const std::string& p, int n, int from, int to) const;
  void WeeksAt(const std::string& p, int n, int from, int to, Ahead* out) const;
  void BaselinesOf(const std::vector<Job>& asked, Ahead* out) const;
  void RiskAt(const std::string& p, int answer, Ahead* out) const;
  void Advance(Search& sr, int decided, bool keeps) const;
  core::Status RunProvisionedRow();
  core::Status SearchCounts();
  bool AdvanceSearches(std::vector<Job>* jobs);
  Ahead AheadOfSearch(const std::vector<Job>& jobs) const;
  core::Status CheckUnseenWeeks();
  std::string RiskFailure(const Risk& risk) const;
  bool AdvanceChecks(std::vector<Job>* jobs);
  core::Status RunRisk();
  PolicyPlan AnswerFor(std::size_t k) const;
  std::string LimitOf(std::size_t k) const;

  const Scenario& s_;
  const PlanOptions& options_;
  const std::vector<std::string> policies_;
  CapacityPlan plan_;
  const std::vector<ResolvedScenario> weeks_;
  const int planning_;   // the weeks the search decides on: planning weeks and stress cases
  const int all_weeks_;  // and the unseen weeks after them
  const int n0_;
  const int n_max_;
  const std::string uncapped_{policy::kUncappedPolicy};
  int total_estimate_ = 0;
  std::map<Job, RunSummary> done_;
  WeekRecordings recordings_;
  std::vector<std::string> shadows_;
  std::vector<Search> search_;
  std::vector<Check> checks_;
  RunPool pool_;  // last: its threads use the members above
};

CapacitySearch::CapacitySearch(const ResolvedScenario& scenario, const PlanOptions& options,
                               std::vector<std::string> policies, CapacityPlan plan,
                               std::vector<ResolvedScenario> weeks)
    : s_(scenario.scenario),
      options_(options),
      policies_(std::move(policies)),
      plan_(std::move(plan)),
      weeks_(std::move(weeks)),
      planning_(SearchedWeeks(plan_)),
      all_weeks_(planning_ + plan_.validation_weeks),
      n0_(s_.servers),
      n_max_(static_cast<int>(std::floor(n0_ * (1 + s_.plan_max_extra_pct / 100.0)))),
      recordings_(options.recording_bytes),
      pool_(
          options.threads, options.stop,
          [this](const sim::Run& r, const std::atomic<bool>* stop) {
            return RunOnWeek(weeks_[static_cast<std::size_t>(r.job.week)], r, planning_, options_,
                             recordings_, shadows_, stop);
          },
          [this](const RunSummary& r) {
            return !r.stopped_early &&
                   std::max(r.brake_events, r.over_budget_episodes) <= s_.slo.max_brake_events;
          },
          options.executor) {
  shadows_ = PlanShadows(policies_, options);
  plan_.baseline_servers = n0_;
  const int rounds_estimate =
      static_cast<int>(std::ceil(std::log2(static_cast<double>(n_max_ - n0_ + 2))));
  total_estimate_ =
      (rounds_estimate * planning_ * 2 + plan_.validation_weeks * (2 * plan_.risk_beyond + 1)) *
          static_cast<int>(policies_.size()) +
      1;
}

core::Result<CapacityPlan> CapacitySearch::Plan() {
  HEADROOM_RETURN_IF_ERROR(RunProvisionedRow());
  HEADROOM_RETURN_IF_ERROR(SearchCounts());
  HEADROOM_RETURN_IF_ERROR(CheckUnseenWeeks());
  HEADROOM_RETURN_IF_ERROR(RunRisk());
  plan_.baseline = done_.at({uncapped_, n0_, 0});
  for (std::size_t k = 0; k < policies_.size(); ++k) plan_.policies.push_back(AnswerFor(k));
  for (const auto& [key, r] : done_) {
    if (!key.whole) plan_.runs.push_back(r);  // a whole week stands for its verdict
  }
  plan_.replayed_simulations = recordings_.replays();
  return std::move(plan_);
}

// Whether policy p acted at n servers or fewer on a week already run: then it almost surely
// acts at n too (more servers, more power), so its runs at n neither wait for their baselines
// (which would share them) nor come after them. Only the order of the runs follows from it:
// a run shared after all is taken from its baseline as ever.
bool CapacitySearch::ActsBy(const std::string& p, int n) const {
  return std::any_of(done_.begin(), done_.end(), [&](const auto& d) {
    return d.first.policy == p && d.first.servers <= n &&
           (d.second.capped_server_fraction > 0 || d.second.brake_events > 0);
  });
}

// Runs the jobs not yet done (each once, in the order asked), with `ahead` the runs the plan
// will probably ask for next (RunPool).
core::Status CapacitySearch::RunJobs(const std::vector<Job>& jobs, const Ahead& ahead,
                                     bool power_only) {
  std::vector<Job> todo;
  for (const Job& j : jobs) {
    if (!done_.count(j) && std::find(todo.begin(), todo.end(), j) == todo.end()) {
      todo.push_back(j);
    }
  }
  Ahead speculative;
  for (const auto& r : ahead) {
    if (!done_.count(r.first.job) &&
        std::find(todo.begin(), todo.end(), r.first.job) == todo.end()) {
      speculative.push_back(r);
    }
  }
  if (todo.empty()) return core::Ok();
  const std::vector<std::pair<sim::Run, int>> needed = Ordered(todo, power_only);
  HEADROOM_RETURN_IF_ERROR(pool_.Need(needed, std::move(speculative)));
  Record(needed);
  if (options_.progress) options_.progress(plan_.simulations, total_estimate_);
  return core::Ok();
}

// The baselines first, each with the capping policies as its shadows: where one never acted on a
// week without a power event, its run would have been the baseline's, event for event
// (RunOptions::shadows), and is taken from it instead of simulated. So a policy's run waits for
// its week's baseline when that is asked for too (unless a thread would idle, or the policy acts
// at as many servers: ActsBy), and is dropped if shared.
std::vector<std::pair<sim::Run, int>> CapacitySearch::Ordered(const std::vector<Job>& todo,
                                                              bool power_only) const {
  std::vector<Job> baselines, others;
  for (const Job& j : todo) (j.policy == uncapped_ ? baselines : others).push_back(j);
  std::vector<std::pair<sim::Run, int>> needed;
  for (const Job& j : Interleaved(baselines)) needed.push_back({{j, power_only || j.whole}, -1});
  for (const Job& j : Interleaved(others)) {
    Job uncapped = j;
    uncapped.policy = uncapped_;
    const auto base = std::find_if(needed.begin(), needed.end(),
                                   [&](const auto& b) { return b.first.job == uncapped; });
    // An unseen week's verdict waits whatever the policy did elsewhere: a verdict is short, and
    // a policy that acts in the search (a brake above the answer) seldom acts on most weeks.
    const bool wait = base != needed.end() && (j.week >= planning_ || !ActsBy(j.policy, j.servers));
    needed.push_back({{j, true}, wait ? static_cast<int>(base - needed.begin()) : -1});
  }
  return needed;
}

// The outcomes of `needed` into done_, and the runs their baselines shared.
void CapacitySearch::Record(const std::vector<std::pair<sim::Run, int>>& needed) {
  for (const auto& [r, after] : needed) {
    if (done_.count(r.job)) continue;  // shared by its baseline, just before
    const Outcome& outcome = pool_.Get(r);
    plan_.simulations += pool_.Take(r);
    Keep(r.job, outcome.summary);
    if (outcome.summary.brake_events > 0 || outcome.summary.over_budget_episodes > 0) continue;
    for (const std::string& p : outcome.quiet) {
      Job same = r.job;
      same.policy = p;
      if (done_.count(same)) continue;
      RunSummary shared = outcome.summary;
      shared.policy = p;
      Keep(same, std::move(shared));
      ++plan_.shared_runs;
    }
  }
}

// A job's summary into done_; a whole unseen week's also in place of that week's verdict.
void CapacitySearch::Keep(const Job& job, RunSummary summary) {
  if (job.whole) done_[{job.policy, job.servers, job.week}] = summary;
  done_[job] = std::move(summary);
}

// The verdict on weeks [from, to) against the uncapped row on each; nullopt while runs are
// missing (added to `missing`). With `in_turn`, the weeks are asked for a few at a time, in
// order, and the first that breaks the SLO (after weeks that all kept it) decides: a count that
// fails on its first weeks costs no more of them. Which weeks run depends on the results alone,
// never on the threads' timing.
std::optional<Verdict> CapacitySearch::VerdictOn(const std::string& p, int n, int from, int to,
                                                 std::vector<Job>* missing, bool in_turn) const {
  // The baseline only where the run kept the power SLO: its latency is all it is needed for.
  bool complete = true;
  int asked = 0;
  for (int w = from; w < to; ++w) {
    if (in_turn && asked >= kSearchWeeksPerRound) break;
    const auto r = done_.find({p, n, w});
    const auto b = done_.find({uncapped_, n, w});
    if (r == done_.end()) {
      missing->push_back({p, n, w});
      complete = false;
      ++asked;
    } else if (PowerViolation(r->second, s_.slo).empty() && b == done_.end()) {
      missing->push_back({uncapped_, n, w});
      complete = false;
      ++asked;
    } else if (in_turn && complete) {
      std::string why = PowerViolation(r->second, s_.slo);
      if (why.empty()) why = SloViolation(r->second, Compare(r->second, b->second), s_.slo);
      if (!why.empty()) return Verdict{.keeps = false, .week = w, .why = why};
    }
  }
  if (!complete) return std::nullopt;
  return Judge(p, n, from, to);
}

// The verdict on weeks [from, to), every run there done: the first week that breaks the SLO.
Verdict CapacitySearch::Judge(const std::string& p, int n, int from, int to) const {
  for (int w = from; w < to; ++w) {
    const RunSummary& r = done_.at({p, n, w});
    std::string why = PowerViolation(r, s_.slo);
    if (why.empty()) why = SloViolation(r, Compare(r, done_.at({uncapped_, n, w})), s_.slo);
    if (!why.empty()) return {.keeps = false, .week = w, .why = std::move(why)};
  }
  return {};
}

// The runs of policy p's weeks [from, to) at n: the baseline's and its own, its own first where
// it acts (ActsBy).
void CapacitySearch::WeeksAt(const std::string& p, int n, int from, int to, Ahead* out) const {
  const bool acts = p != uncapped_ && ActsBy(p, n);
  for (int w = from; w < to; ++w) {
    if (acts) out->push_back({{{p, n, w}, true}, false});
    out->push_back({{{uncapped_, n, w}, false}, false});
    if (p != uncapped_ && !acts) out->push_back({{{p, n, w}, true}, true});
  }
}

// The baselines of the policies' runs just asked for (each needed unless its run breaks the
// power SLO).
void CapacitySearch::BaselinesOf(const std::vector<Job>& asked, Ahead* out) const {
  for (const Job& j : asked) {
    if (j.policy != uncapped_) out->push_back({{{uncapped_, j.servers, j.week}, false}, false});
  }
}

// The unseen weeks' verdicts of policy p at n, a capping policy's after the uncapped row's on
// the same week (which may share it).
void CapacitySearch::UnseenAt(const std::string& p, int n, Ahead* out) const {
  for (int w = planning_; w < all_weeks_; ++w) out->push_back({{{p, n, w}, true}, p != uncapped_});
}

// The risk runs around an answer (RunRisk): the unseen weeks' verdicts at every count within
// risk_beyond of it.
void CapacitySearch::RiskAt(const std::string& p, int answer, Ahead* out) const {
  const int from = std::max(n0_, answer - plan_.risk_beyond);
  const int to = std::min(n_max_, std::max(answer, n0_) + plan_.risk_beyond);
  for (int n = from; n <= to; ++n) UnseenAt(p, n, out);
}

// Monotone in practice: more servers at the same per-server load, more power. A search gallops
// from its first count (steps of 1, 2, 4, ...) until it has bracketed the answer, then bisects.
void CapacitySearch::Advance(Search& sr, int decided, bool keeps) const {
  (keeps ? sr.lo : sr.hi) = decided;
  const bool bracketed = sr.lo >= n0_ && sr.hi <= n_max_;
  if (sr.hi - sr.lo <= 1) {
    sr.next.reset();
  } else if (bracketed) {
    sr.next = sr.lo + (sr.hi - sr.lo) / 2;
  } else {
    sr.next = std::clamp(keeps ? sr.lo + sr.step : sr.hi - sr.step, sr.lo + 1, sr.hi - 1);
    sr.step *= 2;
  }
}

// The provisioned row first, and every search's first count: where the uncapped row would reach
// its budget if its peak grew in proportion to its servers, where the answers lie (every
// policy's is near it: caps buy a few servers). A handful of counts near the answer instead of a
// bisection's from halfway up the range, and the counts that pass (each a whole week) are the
// fewer.
core::Status CapacitySearch::RunProvisionedRow() {
  Ahead ahead;
  if (s_.workload.target_baseline_peak > 0) {
    // The search's first count as the calibration expects it, while the provisioned row runs.
    const int expected = std::clamp(
        static_cast<int>(std::floor(n0_ / s_.workload.target_baseline_peak)), n0_, n_max_);
    for (const std::string& p : policies_) {
      WeeksAt(p, expected, 0, std::min(kSearchWeeksPerRound, planning_), &ahead);
    }
  }
  HEADROOM_RETURN_IF_ERROR(RunJobs({{uncapped_, n0_, 0}}, ahead));
  const double provisioned_peak = done_.at({uncapped_, n0_, 0}).peak_frac;
  const int guess = std::clamp(
      provisioned_peak > 0 ? static_cast<int>(std::floor(n0_ / provisioned_peak)) : n_max_, n0_,
      n_max_);
  search_.assign(policies_.size(), Search{n0_ - 1, n_max_ + 1, 1, guess});
  return core::Ok();
}

core::Status CapacitySearch::SearchCounts() {
  std::vector<Job> jobs;
  while (AdvanceSearches(&jobs)) {
    HEADROOM_RETURN_IF_ERROR(RunJobs(jobs, AheadOfSearch(jobs)));
  }
  return core::Ok();
}

// Advances every search whose next count is known on every planning week; what is missing into
// `jobs`. Whether any search still waits for runs.
bool CapacitySearch::AdvanceSearches(std::vector<Job>* jobs) {
  jobs->clear();
  bool searching = false;
  for (std::size_t k = 0; k < policies_.size(); ++k) {
    Search& sr = search_[k];
    while (sr.next) {
      const auto v = VerdictOn(policies_[k], *sr.next, 0, planning_, jobs, /*in_turn=*/true);
      if (!v) {
        searching = true;
        break;
      }
      Advance(sr, *sr.next, v->keeps);
    }
  }
  return searching;
}

// What the search will probably ask for next: a decided policy's unseen weeks at its answer and
// its risk past it, then the rest of the weeks of the counts being decided, then the first weeks
// of the count each search decides next, whichever way this one goes.
CapacitySearch::Ahead CapacitySearch::AheadOfSearch(const std::vector<Job>& jobs) const {
  Ahead ahead;
  BaselinesOf(jobs, &ahead);
  for (std::size_t k = 0; k < policies_.size(); ++k) {
    if (search_[k].next || search_[k].lo < n0_) continue;
    UnseenAt(policies_[k], search_[k].lo, &ahead);
  }
  for (std::size_t k = 0; k < policies_.size(); ++k) {
    if (search_[k].next) WeeksAt(policies_[k], *search_[k].next, 0, planning_, &ahead);
  }
  for (std::size_t k = 0; k < policies_.size(); ++k) {
    for (const bool keeps : {false, true}) {
      if (!search_[k].next) continue;
      Search then = search_[k];
      Advance(then, *then.next, keeps);
      if (then.next) {
        WeeksAt(policies_[k], *then.next, 0, std::min(kSearchWeeksPerRound, planning_), &ahead);
      }
    }
  }
  return ahead;
}

// Each answer on the unseen weeks, lowered one server at a time until its weekly risk, bounded
// from their power verdicts, meets the target (below the search's answer the planning weeks were
// assumed, not simulated: checked too).
core::Status CapacitySearch::CheckUnseenWeeks() {
  for (const Search& sr : search_) {
    checks_.push_back({sr.lo, plan_.validation_weeks == 0 || sr.lo < n0_, "", ""});
  }
  std::vector<Job> jobs;
  while (AdvanceChecks(&jobs)) {
    Ahead ahead;
    BaselinesOf(jobs, &ahead);
    // The risk around each answer as it stands: asked for at the end unless a check lowers it.
    for (std::size_t k = 0; k < policies_.size(); ++k) {
      RiskAt(policies_[k], checks_[k].servers, &ahead);
    }
    HEADROOM_RETURN_IF_ERROR(RunJobs(jobs, ahead));
  }
  return core::Ok();
}

// The verdicts of policy p's unseen weeks at n; nullopt while some are missing (added to
// `missing`). A verdict near the budget (PowerVerdict's near_budget) is replaced by its whole
// week, run exactly, where the count's fit depends on it: where it fails on the events found
// already, or fits even if every near week had one, the near weeks are not run.
std::optional<CapacitySearch::Risk> CapacitySearch::RiskOn(const std::string& p, int n,
                                                           std::vector<Job>* missing) const {
  Risk risk;
  bool complete = true;
  std::vector<int> near;
  for (int w = planning_; w < all_weeks_; ++w) {
    const auto r = done_.find({p, n, w});
    if (r == done_.end()) {
      missing->push_back({p, n, w});
      complete = false;
      continue;
    }
    if (r->second.near_budget) near.push_back(w);
    std::string why = PowerViolation(r->second, s_.slo);
    if (why.empty()) continue;
    if (risk.events++ == 0) risk.first_week = w, risk.why = std::move(why);
  }
  if (!complete) return std::nullopt;
  const int weeks = plan_.validation_weeks;
  risk.upper = WeeklyRiskUpperBound(risk.events, weeks, plan_.confidence);
  const int worst = std::min(weeks, risk.events + static_cast<int>(near.size()));
  if (risk.upper <= plan_.max_weekly_risk &&
      WeeklyRiskUpperBound(worst, weeks, plan_.confidence) > plan_.max_weekly_risk) {
    for (int w : near) missing->push_back({p, n, w, /*whole=*/true});
    return std::nullopt;
  }
  return risk;
}

// Advances every check whose weeks are all run; what is missing into `jobs`. Whether any check
// still waits for runs.
bool CapacitySearch::AdvanceChecks(std::vector<Job>* jobs) {
  jobs->clear();
  bool checking = false;
  for (std::size_t k = 0; k < policies_.size(); ++k) {
    Check& c = checks_[k];
    while (!c.settled && c.servers >= n0_) {
      std::optional<Verdict> v = Verdict{};
      if (c.servers < search_[k].lo) v = VerdictOn(policies_[k], c.servers, 0, planning_, jobs);
      const std::optional<Risk> risk = RiskOn(policies_[k], c.servers, jobs);
      if (!v || !risk) {
        checking = true;
        break;
      }
      if (!v->keeps) {
        c.last_failure = fmt::format("{}: {}", WeekName(plan_, v->week), v->why);
      } else if (risk->upper <= plan_.max_weekly_risk) {
        c.settled = true;
        break;
      } else {
        c.last_failure = RiskFailure(*risk);
        if (c.first_failure.empty()) {  // at the search's answer
          c.first_failure = fmt::format("at {} servers {}", c.servers, c.last_failure);
        }
      }
      --c.servers;
    }
  }
  return checking;
}

// The risk at every count within risk_beyond of each answer (or, for a policy that fits none,
// of the provisioned row), and at the chosen answer, on every unseen week: their power verdicts.
core::Status CapacitySearch::RunRisk() {
  if (plan_.validation_weeks == 0) return core::Ok();
  int chosen = 0;
  for (std::size_t k = 0; k < policies_.size(); ++k) {
    if (policies_[k] != uncapped_) chosen = std::max(chosen, checks_[k].servers);
  }
  Ahead ahead;
  for (std::size_t k = 0; k < policies_.size(); ++k) {
    RiskAt(policies_[k], checks_[k].servers, &ahead);
    if (chosen >= n0_) UnseenAt(policies_[k], chosen, &ahead);
  }
  std::vector<Job> jobs;
  for (const auto& [r, wait] : ahead) jobs.push_back(r.job);
  return RunJobs(jobs, {}, /*power_only=*/true);
}

// "1 of 59 unseen weeks had a power event (weekly risk at most 7.9% at 95%, above 5%), first
// unseen week 3 (seed 1003): 1 brake event"
std::string CapacitySearch::RiskFailure(const Risk& risk) const {
  return fmt::format(
      "{} of {} unseen weeks had a power event (weekly risk at most {:.1f}% at {:g}%, above "
      "{:g}%), first {}: {}",
      risk.events, plan_.validation_weeks, risk.upper * 100, plan_.confidence * 100,
      plan_.max_weekly_risk * 100, WeekName(plan_, risk.first_week), risk.why);
}

PolicyPlan CapacitySearch::AnswerFor(std::size_t k) const {
  PolicyPlan pp;
  pp.policy = policies_[k];
  const Search& sr = search_[k];
  const Check& c = checks_[k];
  pp.searched_servers = sr.lo >= n0_ ? sr.lo : 0;
  pp.validation_failure = c.first_failure;
  if (c.servers >= n0_) {
    pp.max_servers = c.servers;
    pp.extra_pct = (static_cast<double>(c.servers) / n0_ - 1) * 100;
    pp.validated_weeks = plan_.validation_weeks;
    for (int w = 0; w < planning_; ++w) {
      const RunSummary& r = done_.at({pp.policy, c.servers, w});
      const Impact impact = Compare(r, done_.at({uncapped_, c.servers, w}));
      if (w == 0 || r.peak_frac > pp.at_max.peak_frac) pp.at_max = r;
      pp.impact = w == 0 ? impact : Worst(pp.impact, impact);
    }
  }
  pp.limit = LimitOf(k);
  return pp;
}

// Why one more server than policy k's answer fails.
std::string CapacitySearch::LimitOf(std::size_t k) const {
  const Search& sr = search_[k];
  const Check& c = checks_[k];
  if (!c.last_failure.empty()) return fmt::format("{} servers: {}", c.servers + 1, c.last_failure);
  if (sr.hi > n_max_) {
    return fmt::format("search bound ({} servers, +{}%)", n_max_, s_.plan_max_extra_pct);
  }
  std::vector<Job> missing;  // none: the search decided on these runs
  const Verdict v = *VerdictOn(policies_[k], sr.hi, 0, planning_, &missing, /*in_turn=*/true);
  return planning_ == 1 ? fmt::format("{} servers: {}", sr.hi, v.why)
                        : fmt::format("{} servers: {}: {}", sr.hi, WeekName(plan_, v.week), v.why);
}

}  // namespace

core::Result<CapacityPlan> PlanCapacity(const ResolvedScenario& scenario,
                                        const PlanOptions& options) {
  const Scenario& s = scenario.scenario;
  HEADROOM_RETURN_IF_ERROR(RequireScaledWorkload(s, "a capacity plan"));
  std::vector<std::string> policies = PlanPolicies(s, options);
  for (const std::string& p : policies) {
    HEADROOM_RETURN_IF_ERROR(policy::MakePolicy(p, scenario.params));
  }
  CapacityPlan plan;
  HEADROOM_RETURN_IF_ERROR(ChooseWeeks(s, options, &plan));
  plan.risk_beyond = options.risk_beyond.value_or(s.plan_risk_beyond);
  if (plan.risk_beyond < 0 || plan.risk_beyond > kMaxRiskBeyond) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "--risk-beyond {}: expected 0 to {} servers", plan.risk_beyond, kMaxRiskBeyond)));
  }
  HEADROOM_ASSIGN_OR_RETURN(std::vector<ResolvedScenario> weeks,
                            PlanWeeks(scenario, options, plan));
  CapacitySearch search(scenario, options, std::move(policies), std::move(plan), std::move(weeks));
  return search.Plan();
}

core::Result<Outcome> RunPlanWork(const ResolvedScenario& scenario, const PlanOptions& options,
                                  const Run& run) {
  HEADROOM_RETURN_IF_ERROR(RequireScaledWorkload(scenario.scenario, "a capacity plan"));
  CapacityPlan plan;
  HEADROOM_RETURN_IF_ERROR(ChooseWeeks(scenario.scenario, options, &plan));
  const int weeks = SearchedWeeks(plan) + plan.validation_weeks;
  if (run.job.week < 0 || run.job.week >= weeks) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("week {}: the plan has weeks 0 to {}", run.job.week, weeks - 1)));
  }
  HEADROOM_ASSIGN_OR_RETURN(const ResolvedScenario week,
                            PlanWeek(scenario, options, plan, run.job.week));
  WeekRecordings none(0);
  return RunOnWeek(week, run, SearchedWeeks(plan), options, none,
                   PlanShadows(PlanPolicies(scenario.scenario, options), options), options.stop);
}

core::Result<Calibration> CalibrateLoad(const ResolvedScenario& scenario, double target,
                                        double tolerance, const PlanOptions& options) {
  if (!(target > 0 && target < 1)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("calibration target {} is not a fraction of the budget in (0, 1)", target)));
  }
  HEADROOM_RETURN_IF_ERROR(RequireScaledWorkload(scenario.scenario, "a load calibration"));
  Calibration c;
  const auto peak_at = [&](double factor) -> core::Result<double> {
    ResolvedScenario scaled = scenario;
    scaled.scenario.workload.hp_rate_per_server *= factor;
    scaled.scenario.workload.lp_rate_per_server *= factor;
    RunOptions run;
    run.stop = options.stop;
    run.keep_power_series = false;
    HEADROOM_ASSIGN_OR_RETURN(RowResult r,
                              RunScenario(scaled, std::string(policy::kUncappedPolicy),
                                          scenario.scenario.servers, options.trace, run));
    ++c.simulations;
    if (options.progress) options.progress(c.simulations, 12);
    return r.peak_w / r.budget_w;
  };
  // Bracket the factor, then bisect in log space (peak power rises monotonically with load).
  double lo = 1, hi = 1;
  HEADROOM_ASSIGN_OR_RETURN(double p, peak_at(1));
  double p_lo = p, p_hi = p;
  for (int i = 0; p_lo > target && i < 12; ++i) {
    hi = lo, p_hi = p_lo;
    lo /= 2;
    HEADROOM_ASSIGN_OR_RETURN(p_lo, peak_at(lo));
  }
  for (int i = 0; p_hi < target && i < 12; ++i) {
    lo = hi, p_lo = p_hi;
    hi *= 2;
    HEADROOM_ASSIGN_OR_RETURN(p_hi, peak_at(hi));
  }
  if (p_lo > target || p_hi < target) {
    return core::Fail(core::Error::FailedPrecondition(fmt::format(
        "no load reaches a peak of {:.1f}% of the budget (idle row {:.1f}%, busiest tried "
        "{:.1f}%)",
        target * 100, p_lo * 100, p_hi * 100)));
  }
  c.factor = lo, c.peak_frac = p_lo;
  for (int i = 0; i < 20; ++i) {
    const double mid = std::sqrt(lo * hi);
    HEADROOM_ASSIGN_OR_RETURN(double pm, peak_at(mid));
    c.factor = mid, c.peak_frac = pm;
    if (std::abs(pm - target) <= tolerance) break;
    (pm < target ? lo : hi) = mid;
  }
  c.hp_rate_per_server = scenario.scenario.workload.hp_rate_per_server * c.factor;
  c.lp_rate_per_server = scenario.scenario.workload.lp_rate_per_server * c.factor;
  return c;
}

}  // namespace headroom::sim
