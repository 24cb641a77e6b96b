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
#include "sim/recorded_requests.h"

namespace headroom::sim {
namespace {

RunSummary::Class SummarizeClass(const ClassMetrics& m, double span_s) {
  RunSummary::Class c;
  c.ttft_p50_s = m.ttft.Quantile(0.5);
  c.ttft_p99_s = m.ttft.Quantile(0.99);
  c.tbt_p50_s = m.tbt.Quantile(0.5);
  c.tbt_p99_s = m.tbt.Quantile(0.99);
  c.e2e_p50_s = m.e2e.Quantile(0.5);
  c.e2e_p90_s = m.e2e.Quantile(0.9);
  c.e2e_p99_s = m.e2e.Quantile(0.99);
  // Over the whole simulated span, drain included: a row that falls behind takes longer.
  c.throughput_tok_s = span_s > 0 ? m.output_tokens / span_s : 0;
  c.requests = m.requests;
  return c;
}

double Pct(double value, double base) { return base > 0 ? (value / base - 1) * 100 : 0; }

struct Job {
  std::string policy;
  int servers = 0;
  int week = 0;
  auto operator<=>(const Job&) const = default;
};

// The plan's recorded weeks: (week, servers) to its requests, recorded by the first run that read
// them to their end and replayed by every later run of that week at that count (another policy,
// the baseline), which then skips the synthesis (a fifth of a run). Within a byte budget: the
// least recently used go first. Thread-safe.
class WeekRecordings {
 public:
  explicit WeekRecordings(std::size_t budget_bytes) : budget_bytes_(budget_bytes) {}

  bool enabled() const { return budget_bytes_ > 0; }
  int replays() {
    std::lock_guard lock(mu_);
    return replays_;
  }

  std::shared_ptr<const RecordedRequests> Find(const Job& job) {
    std::lock_guard lock(mu_);
    const auto it = entries_.find({job.week, job.servers});
    if (it == entries_.end()) return nullptr;
    it->second.used = ++clock_;
    ++replays_;
    return it->second.requests;
  }

  void Keep(const Job& job, std::shared_ptr<const RecordedRequests> requests) {
    std::lock_guard lock(mu_);
    const std::size_t bytes = requests->bytes();
    if (bytes > budget_bytes_ || entries_.count({job.week, job.servers})) return;
    while (bytes_ + bytes > budget_bytes_) {
      const auto oldest = std::min_element(
          entries_.begin(), entries_.end(),
          [](const auto& a, const auto& b) { return a.second.used < b.second.used; });
      bytes_ -= oldest->second.requests->bytes();
      entries_.erase(oldest);
    }
    bytes_ += bytes;
    entries_[{job.week, job.servers}] = {std::move(requests), ++clock_};
  }

 private:
  struct Entry {
    std::shared_ptr<const RecordedRequests> requests;
    std::uint64_t used = 0;
  };
  const std::size_t budget_bytes_;
  std::mutex mu_;
  std::map<std::pair<int, int>, Entry> entries_;
  std::size_t bytes_ = 0;
  std::uint64_t clock_ = 0;
  int replays_ = 0;
};

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

// Runs of the same week and count spread apart, so that two threads seldom synthesize one week
// at once: one of each (week, servers) in turn, in the order first asked.
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

// A job as run: `stops`, whether it stops at its first power event (every run but the uncapped
// baseline's, whose latencies the others are compared with, unless only its power is wanted).
struct Run {
  Job job;
  bool stops = true;
  auto operator<=>(const Run&) const = default;
};

// What a run gives: its summary and the shadows that never acted in it.
struct Outcome {
  RunSummary summary;
  std::vector<std::string> quiet;
};

// One run of a job on its week's scenario: the uncapped baseline's steps `shadows` beside
// (RunOptions::shadows).
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
    for (const std::string& name : shadows) {
      HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<policy::RowPolicy> made,
                                policy::MakePolicy(name, scenario.params));
      shadowing.push_back(std::move(made));
      run.shadows.push_back(shadowing.back().get());
    }
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

// The plan's runs on `threads` threads that live as long as the plan. The plan asks for the
// runs it needs (Need, which returns once they have all run) and names the runs it will
// probably need next (the speculative ones): a thread with no needed run to start takes one of
// those rather than idle while the other finishes a round, and its outcome waits until the plan
// asks for it. Which runs the plan uses depends on their outcomes alone, never on which ran
// ahead: an outcome nobody asks for is dropped, and runs still going when the plan ends are
// stopped. Thread-safe; Need from one thread at a time.
class RunPool {
 public:
  using RunFn = std::function<core::Result<Outcome>(const Run&, const std::atomic<bool>* stop)>;

  // `interchangeable`: whether a run's outcome is also that of the same job run the other way
  // (stopping or not at its first power event): so when it had no power event to stop at.
  RunPool(int threads, const std::atomic<bool>* user_stop, RunFn run,
          std::function<bool(const RunSummary&)> interchangeable)
      : user_stop_(user_stop), run_(std::move(run)), interchangeable_(std::move(interchangeable)) {
    for (int t = 0; t < std::max(1, threads); ++t) workers_.emplace_back([this] { Work(); });
  }
  ~RunPool() {
    {
      std::lock_guard lock(mu_);
      quit_ = true;
    }
    cancel_ = true;
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  // Runs those of `needed` without an outcome, in order, except that a run whose `after` (an
  // index into `needed`, or -1) is still going waits for it while another can start, and one
  // that it shares is not run; then the `speculative` ones (replacing the previous list; a
  // policy's with `true` waits for its week's baseline likewise) on threads with nothing else
  // to do. Returns the first error of a needed run.
  core::Status Need(const std::vector<std::pair<Run, int>>& needed,
                    std::vector<std::pair<Run, bool>> speculative) {
    std::unique_lock lock(mu_);
    needed_ = needed;
    speculative_ = std::move(speculative);
    wake_.notify_all();
    while (true) {
      bool all = true;
      for (const auto& [run, after] : needed_) {
        const auto it = Lookup(run);
        if (it == outcomes_.end()) {
          all = all && Resolved(run, after);
        } else if (!it->second) {
          needed_.clear();
          return core::Fail(it->second.error());
        }
      }
      if (all) break;
      // The user's stop reaches the runs through cancel_, which also stops the ones ahead.
      if (user_stop_ && user_stop_->load()) cancel_ = true;
      done_one_.wait_for(lock, std::chrono::milliseconds(100));
    }
    needed_.clear();
    return core::Ok();
  }

  // The outcome of `run` (or of a run of its job that is interchangeable with it). REQUIRES:
  // Need returned Ok for it.
  const Outcome& Get(const Run& run) {
    std::lock_guard lock(mu_);
    return *Lookup(run)->second;
  }
  // How many runs were simulated for the plan's use (an outcome counts once, when first got).
  int Take(const Run& run) {
    std::lock_guard lock(mu_);
    const auto it = Lookup(run);
    return taken_.insert(it->first).second ? 1 : 0;
  }

 private:
  using Outcomes = std::map<Run, core::Result<Outcome>>;

  Outcomes::iterator Lookup(const Run& run) {
    const auto it = outcomes_.find(run);
    if (it != outcomes_.end()) return it;
    const auto other = outcomes_.find({run.job, !run.stops});
    if (other != outcomes_.end() && other->second && interchangeable_(other->second->summary)) {
      return other;
    }
    return outcomes_.end();
  }
  bool Known(const Run& run) {
    return started_.count(run) > 0 || started_.count({run.job, !run.stops}) > 0 ||
           Lookup(run) != outcomes_.end();
  }

  // Whether the outcome of `base`, the uncapped baseline of `run`'s week, is also run's: the
  // policy never acted there and the row had no power event (RunOptions::shadows).
  bool SharedBy(const Run& run, const Run& base) {
    const auto it = Lookup(base);
    if (it == outcomes_.end() || !it->second) return false;
    const Outcome& b = *it->second;
    return b.summary.brake_events == 0 && b.summary.over_budget_episodes == 0 &&
           std::find(b.quiet.begin(), b.quiet.end(), run.job.policy) != b.quiet.end();
  }
  // Whether a needed run has its outcome, or needs none (shared by its baseline).
  bool Resolved(const Run& run, int after) {
    if (Lookup(run) != outcomes_.end()) return true;
    return after >= 0 && SharedBy(run, needed_[static_cast<std::size_t>(after)].first);
  }

  // The next run to start, or nullopt: a needed one (a policy's once its baseline's outcome
  // says it is not shared), else, while needed ones are still going (not between rounds, when
  // the plan is about to ask for the next: a speculative run then would only delay it), a
  // speculative one.
  std::optional<Run> Next() {
    bool going = false;
    for (const auto& [run, after] : needed_) {
      if (Resolved(run, after)) continue;
      going = true;
      if (Known(run)) continue;
      if (after >= 0) {
        const Run& base = needed_[static_cast<std::size_t>(after)].first;
        if (Lookup(base) == outcomes_.end() || SharedBy(run, base)) continue;
      }
      return run;
    }
    if (!going) return std::nullopt;
    for (const auto& [run, wait] : speculative_) {
      if (Known(run)) continue;
      if (run.job.policy != policy::kUncappedPolicy) {
        const Run base{{std::string(policy::kUncappedPolicy), run.job.servers, run.job.week},
                       false};
        const bool known = Lookup(base) != outcomes_.end();
        if ((wait && !known) || (known && SharedBy(run, base))) continue;
      }
      return run;
    }
    return std::nullopt;
  }

  void Work() {
    std::unique_lock lock(mu_);
    while (!quit_) {
      const std::optional<Run> run = Next();
      if (!run) {
        wake_.wait(lock);
        continue;
      }
      started_.insert(*run);
      lock.unlock();
      core::Result<Outcome> outcome = run_(*run, &cancel_);
      lock.lock();
      started_.erase(*run);
      outcomes_.insert_or_assign(*run, std::move(outcome));
      done_one_.notify_all();
      wake_.notify_all();
    }
  }

  const std::atomic<bool>* user_stop_;
  RunFn run_;
  std::function<bool(const RunSummary&)> interchangeable_;
  std::atomic<bool> cancel_{false};
  std::mutex mu_;
  std::condition_variable wake_;      // a worker may have something to start
  std::condition_variable done_one_;  // a run finished
  bool quit_ = false;
  std::vector<std::pair<Run, int>> needed_;
  // Each with whether, a policy's, it waits for its week's baseline (which may share it).
  std::vector<std::pair<Run, bool>> speculative_;
  std::set<Run> started_;
  Outcomes outcomes_;
  std::set<Run> taken_;
  std::vector<std::thread> workers_;
};

}  // namespace

RunSummary Summarize(const RowResult& r) {
  RunSummary s;
  s.policy = r.policy;
  s.servers = r.servers;
  s.hp_servers = r.hp_servers;
  s.budget_w = r.budget_w;
  s.peak_frac = r.budget_w > 0 ? r.peak_w / r.budget_w : 0;
  s.mean_frac = r.budget_w > 0 ? r.mean_w / r.budget_w : 0;
  s.max_rise_frac = r.budget_w > 0 ? r.max_rise_w / r.budget_w : 0;
  s.brake_events = r.brake_events;
  s.over_budget_episodes = r.over_budget_episodes;
  s.over_budget_s = r.over_budget_s;
  s.capped_server_fraction =
      r.simulated_s > 0 ? r.capped_server_seconds / (r.simulated_s * r.servers) : 0;
  s.energy_j = r.energy_j;
  s.stopped_early = r.stopped_early;
  s.power = r.power_windows;
  for (const policy::Event& e : r.events) {
    if (e.to == "brake") s.brake_s.push_back(core::ToSeconds(e.at));
  }
  s.hp = SummarizeClass(r.hp, r.simulated_s);
  s.lp = SummarizeClass(r.lp, r.simulated_s);
  return s;
}

Impact Compare(const RunSummary& run, const RunSummary& base) {
  Impact i;
  i.hp_p50_e2e_pct = Pct(run.hp.e2e_p50_s, base.hp.e2e_p50_s);
  i.hp_p99_e2e_pct = Pct(run.hp.e2e_p99_s, base.hp.e2e_p99_s);
  i.lp_p50_e2e_pct = Pct(run.lp.e2e_p50_s, base.lp.e2e_p50_s);
  i.lp_p99_e2e_pct = Pct(run.lp.e2e_p99_s, base.lp.e2e_p99_s);
  i.hp_throughput_pct = Pct(run.hp.throughput_tok_s, base.hp.throughput_tok_s);
  i.lp_throughput_pct = Pct(run.lp.throughput_tok_s, base.lp.throughput_tok_s);
  return i;
}

std::string PowerViolation(const RunSummary& run, const Slo& slo) {
  if (run.brake_events > slo.max_brake_events) {
    return fmt::format("{} brake event{}", run.brake_events, run.brake_events == 1 ? "" : "s");
  }
  // A row with no brake in its policy must still never exceed its budget: that is what the
  // brake (or the breaker) would have caught.
  if (run.over_budget_episodes > slo.max_brake_events) {
    return fmt::format("over budget {} time{}", run.over_budget_episodes,
                       run.over_budget_episodes == 1 ? "" : "s");
  }
  return "";
}

std::string SloViolation(const RunSummary& run, const Impact& impact, const Slo& slo) {
  if (std::string power = PowerViolation(run, slo); !power.empty()) return power;
  if (impact.hp_p50_e2e_pct > slo.hp_p50_e2e_pct) {
    return fmt::format("HP P50 +{:.1f}%", impact.hp_p50_e2e_pct);
  }
  if (impact.hp_p99_e2e_pct > slo.hp_p99_e2e_pct) {
    return fmt::format("HP P99 +{:.1f}%", impact.hp_p99_e2e_pct);
  }
  if (impact.lp_p50_e2e_pct > slo.lp_p50_e2e_pct) {
    return fmt::format("LP P50 +{:.1f}%", impact.lp_p50_e2e_pct);
  }
  return "";
}

const PolicyPlan* ChosenPolicy(const CapacityPlan& plan) {
  const PolicyPlan* best = nullptr;
  for (const PolicyPlan& p : plan.policies) {
    if (p.policy == policy::kUncappedPolicy || p.max_servers == 0) continue;
    if (best == nullptr || p.max_servers > best->max_servers) best = &p;
  }
  return best;
}

int SearchedWeeks(const CapacityPlan& plan) {
  return plan.planning_weeks + static_cast<int>(plan.stress_cases.size());
}

std::vector<CountRisk> PlanRisk(const CapacityPlan& plan) {
  std::vector<CountRisk> out;
  for (const PolicyPlan& p : plan.policies) {
    std::map<int, CountRisk> by_servers;
    for (const RunSummary& r : plan.runs) {
      if (r.policy != p.policy) continue;
      CountRisk& c = by_servers[r.servers];
      if (c.weeks == 0) {
        c = {.policy = p.policy, .servers = r.servers, .worst_peak_frac = r.peak_frac};
      }
      ++c.weeks;
      if (r.brake_events > 0 || r.over_budget_episodes > 0) ++c.weeks_with_power_event;
      c.worst_peak_frac = std::max(c.worst_peak_frac, r.peak_frac);
      c.smallest_margin_w = r.budget_w * (1 - c.worst_peak_frac);
      c.most_capped_fraction = std::max(c.most_capped_fraction, r.capped_server_fraction);
    }
    for (auto& [servers, c] : by_servers) out.push_back(std::move(c));
  }
  return out;
}

CapacityBounds CapacityUnderSlo(const CapacityPlan& plan, const std::string& policy,
                                const Slo& slo) {
  // By servers, then planning week.
  std::map<int, std::map<int, const RunSummary*>> runs, baseline;
  for (const RunSummary& r : plan.runs) {
    if (r.week >= SearchedWeeks(plan)) continue;
    if (r.policy == policy) runs[r.servers][r.week] = &r;
    if (r.policy == policy::kUncappedPolicy) baseline[r.servers][r.week] = &r;
  }
  CapacityBounds bounds;
  for (const auto& [servers, weeks] : runs) {  // in ascending server count
    if (static_cast<int>(weeks.size()) < SearchedWeeks(plan)) {
      continue;  // not evaluated on every planning week and stress case
    }
    // A week that breaks the power SLO needs no baseline (the plan ran none there).
    bool breaks = false, decided = true;
    for (const auto& [week, run] : weeks) {
      if (!PowerViolation(*run, slo).empty()) {
        breaks = true;
        continue;
      }
      const RunSummary* b = nullptr;
      if (const auto base = baseline.find(servers); base != baseline.end()) {
        if (const auto it = base->second.find(week); it != base->second.end()) b = it->second;
      }
      if (b == nullptr || b->stopped_early) {  // a partial baseline compares with nothing
        decided = false;
      } else if (!SloViolation(*run, Compare(*run, *b), slo).empty()) {
        breaks = true;
      }
    }
    if (breaks) {
      bounds.fails = servers;
      break;
    }
    if (decided) bounds.fits = servers;
  }
  return bounds;
}

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
  int broken = 0;   // weeks that break it
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

// The weeks a plan runs: how many of each, from the options or else the scenario.
core::Status ChooseWeeks(const Scenario& s, const PlanOptions& options, CapacityPlan* plan) {
  for (const auto& [flag, value] :
       {std::pair{"--weeks", options.weeks}, std::pair{"--validate", options.validate_weeks}}) {
    const int min = std::string_view(flag) == "--weeks" ? 1 : 0;
    if (value && (*value < min || *value > kMaxPlanWeeks)) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("{} {}: expected {} to {} weeks", flag, *value, min, kMaxPlanWeeks)));
    }
  }
  if (!SynthesizedWorkload(s, options.trace)) {
    // A real trace is the same whatever the seed: one week, none unseen.
    if (options.weeks.value_or(1) > 1 || options.validate_weeks.value_or(0) > 0) {
      return core::Fail(core::Error::InvalidArgument(fmt::format(
          "--weeks/--validate: the workload '{}' replays real traces, the same whatever the "
          "seed; more weeks need a synthesized one (--trace synth-week)",
          options.trace.empty() ? "scenario" : options.trace)));
    }
    plan->planning_weeks = 1;
    plan->validation_weeks = 0;
  } else {
    plan->planning_weeks = options.weeks.value_or(s.plan_weeks);
    plan->validation_weeks = options.validate_weeks.value_or(s.plan_validate_weeks);
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

}  // namespace

std::string WeekName(const CapacityPlan& plan, int week) {
  const std::uint64_t seed = plan.week_seeds.at(static_cast<std::size_t>(week));
  if (week < plan.planning_weeks) return fmt::format("planning week {} (seed {})", week + 1, seed);
  if (week < SearchedWeeks(plan)) {
    std::string stress = plan.stress_cases.at(static_cast<std::size_t>(week - plan.planning_weeks));
    // "growth (load x1.1)" -> "stress growth (load x1.1; seed 1)"
    if (!stress.empty() && stress.back() == ')') {
      stress.insert(stress.size() - 1, fmt::format("; seed {}", seed));
    }
    return "stress " + stress;
  }
  return fmt::format("unseen week {} (seed {})", week - SearchedWeeks(plan) + 1, seed);
}

core::Result<CapacityPlan> PlanCapacity(const ResolvedScenario& scenario,
                                        const PlanOptions& options) {
  const Scenario& s = scenario.scenario;
  HEADROOM_RETURN_IF_ERROR(RequireScaledWorkload(s, "a capacity plan"));
  std::vector<std::string> policies = options.policies.empty() ? s.plan_policies : options.policies;
  if (policies.empty()) policies = policy::PolicyNames();
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
  // The search decides on the planning weeks and the stress cases: `planning` weeks from here.
  const int planning = SearchedWeeks(plan);
  const int all_weeks = planning + plan.validation_weeks;
  std::vector<ResolvedScenario> weeks(static_cast<std::size_t>(all_weeks), scenario);
  const std::vector<StressCase> stress = StressCases(s, options);
  for (int w = 0; w < all_weeks; ++w) {
    ResolvedScenario& week = weeks[static_cast<std::size_t>(w)];
    if (w >= plan.planning_weeks && w < planning) {
      HEADROOM_ASSIGN_OR_RETURN(
          week.scenario,
          Stressed(s, stress[static_cast<std::size_t>(w - plan.planning_weeks)], options.trace));
    }
    week.scenario.seed = plan.week_seeds[static_cast<std::size_t>(w)];
  }
  const int n0 = s.servers;
  const int n_max = static_cast<int>(std::floor(n0 * (1 + s.plan_max_extra_pct / 100.0)));
  const std::string uncapped(policy::kUncappedPolicy);
  std::map<Job, RunSummary> done;
  WeekRecordings recordings(options.recording_bytes);
  std::vector<std::string> shadows;
  if (options.share_quiet_runs) {
    std::copy_if(policies.begin(), policies.end(), std::back_inserter(shadows),
                 [&](const std::string& p) { return p != uncapped; });
  }
  plan.baseline_servers = n0;
  const int rounds_estimate =
      static_cast<int>(std::ceil(std::log2(static_cast<double>(n_max - n0 + 2))));
  const int risk_estimate = plan.risk_beyond > 0 ? (n_max - n0 + 1) / 2 * planning : 0;
  const int total_estimate = (rounds_estimate * planning + plan.validation_weeks + risk_estimate) *
                                 static_cast<int>(policies.size()) * 2 +
                             1;
  // Whether policy p acted at n servers or fewer on a week already run: then it almost surely
  // acts at n too (more servers, more power), so its runs at n neither wait for their baselines
  // (which would share them) nor come after them. Only the order of the runs follows from it:
  // a run shared after all is taken from its baseline as ever.
  const auto acts_by = [&](const std::string& p, int n) {
    return std::any_of(done.begin(), done.end(), [&](const auto& d) {
      return d.first.policy == p && d.first.servers <= n &&
             (d.second.capped_server_fraction > 0 || d.second.brake_events > 0);
    });
  };
  // Runs the jobs not yet done (each once, in the order asked).
  RunPool pool(
      options.threads, options.stop,
      [&](const Run& r, const std::atomic<bool>* stop) {
        return RunOne(weeks[static_cast<std::size_t>(r.job.week)], r, options, recordings, shadows,
                      stop);
      },
      [&](const RunSummary& r) {
        return !r.stopped_early &&
               std::max(r.brake_events, r.over_budget_episodes) <= s.slo.max_brake_events;
      });
  // Runs the jobs not yet done (each once, in the order asked), with `ahead` the runs the plan
  // will probably ask for next (RunPool), and `early` runs it will almost surely ask for later:
  // run now as if needed (done when this returns) and kept until asked for. Runs left for the
  // plan's last round would leave a thread idle beside them.
  const auto run = [&](const std::vector<Job>& jobs, const std::vector<std::pair<Run, bool>>& ahead,
                       bool power_only = false,
                       const std::vector<Run>& early = {}) -> core::Status {
    std::vector<Job> todo;
    for (const Job& j : jobs) {
      if (!done.count(j) && std::find(todo.begin(), todo.end(), j) == todo.end()) {
        todo.push_back(j);
      }
    }
    std::vector<std::pair<Run, bool>> speculative;
    for (const auto& r : ahead) {
      if (!done.count(r.first.job) &&
          std::find(todo.begin(), todo.end(), r.first.job) == todo.end()) {
        speculative.push_back(r);
      }
    }
    if (todo.empty()) return core::Ok();
    // The baselines first, each with the capping policies as its shadows: where one never
    // acted on a week without a power event, its run would have been the baseline's, event for
    // event (RunOptions::shadows), and is taken from it instead of simulated. So a policy's run
    // waits for its week's baseline when that is asked for too (unless a thread would idle, or
    // the policy acts at as many servers: acts_by), and is dropped if shared.
    std::vector<Job> baselines, others;
    for (const Job& j : todo) (j.policy == uncapped ? baselines : others).push_back(j);
    std::vector<std::pair<Run, int>> needed;
    for (const Job& j : Interleaved(baselines)) needed.push_back({{j, power_only}, -1});
    for (const Job& j : Interleaved(others)) {
      const auto base = std::find_if(needed.begin(), needed.end(), [&](const auto& b) {
        return b.first.job == Job{uncapped, j.servers, j.week};
      });
      const bool wait = base != needed.end() && !acts_by(j.policy, j.servers);
      needed.push_back({{j, true}, wait ? static_cast<int>(base - needed.begin()) : -1});
    }
    std::vector<std::pair<Run, int>> asked = needed;
    for (const Run& r : early) {
      if (!done.count(r.job) && std::find(todo.begin(), todo.end(), r.job) == todo.end()) {
        asked.push_back({r, -1});
      }
    }
    HEADROOM_RETURN_IF_ERROR(pool.Need(asked, std::move(speculative)));
    for (const auto& [r, after] : needed) {
      if (done.count(r.job)) continue;  // shared by its baseline, just before
      const Outcome& outcome = pool.Get(r);
      plan.simulations += pool.Take(r);
      done[r.job] = outcome.summary;
      if (outcome.summary.brake_events > 0 || outcome.summary.over_budget_episodes > 0) continue;
      for (const std::string& p : outcome.quiet) {
        const Job same{p, r.job.servers, r.job.week};
        if (done.count(same)) continue;
        RunSummary shared = outcome.summary;
        shared.policy = p;
        done[same] = std::move(shared);
        ++plan.shared_runs;
      }
    }
    if (options.progress) options.progress(plan.simulations, total_estimate);
    return core::Ok();
  };
  // The verdict on weeks [from, to) against the uncapped row on each; nullopt while runs are
  // missing (added to `missing`). With `in_turn`, the weeks are asked for a few at a time, in
  // order, and the first that breaks the SLO (after weeks that all kept it) decides: a count
  // that fails on its first weeks costs no more of them. Which weeks run depends on the results
  // alone, never on the threads' timing.
  const auto verdict = [&](const std::string& p, int n, int from, int to, std::vector<Job>* missing,
                           bool in_turn = false) -> std::optional<Verdict> {
    // The baseline only where the run kept the power SLO: its latency is all it is needed for.
    bool complete = true;
    int asked = 0;
    for (int w = from; w < to; ++w) {
      if (in_turn && asked >= kSearchWeeksPerRound) break;
      const auto r = done.find({p, n, w});
      const auto b = done.find({uncapped, n, w});
      if (r == done.end()) {
        missing->push_back({p, n, w});
        complete = false;
        ++asked;
      } else if (PowerViolation(r->second, s.slo).empty() && b == done.end()) {
        missing->push_back({uncapped, n, w});
        complete = false;
        ++asked;
      } else if (in_turn && complete) {
        std::string why = PowerViolation(r->second, s.slo);
        if (why.empty()) why = SloViolation(r->second, Compare(r->second, b->second), s.slo);
        if (!why.empty()) return Verdict{.keeps = false, .week = w, .why = why, .broken = 1};
      }
    }
    if (!complete) return std::nullopt;
    Verdict v;
    for (int w = from; w < to; ++w) {
      const RunSummary& r = done.at({p, n, w});
      std::string why = PowerViolation(r, s.slo);
      if (why.empty()) why = SloViolation(r, Compare(r, done.at({uncapped, n, w})), s.slo);
      if (why.empty()) continue;
      ++v.broken;
      if (v.keeps) v = {.keeps = false, .week = w, .why = std::move(why), .broken = 1};
    }
    return v;
  };

  // A search per policy on [n0, n_max] over the planning weeks: lo keeps the SLO on all of them
  // (or is n0 - 1), hi does not (or is n_max + 1). Monotone in practice: more servers at the same
  // per-server load, more power. It starts where the uncapped row would reach its budget if its
  // peak grew in proportion to its servers, where the answers lie (every policy's is near it: caps
  // buy a few servers), and gallops from there (steps of 1, 2, 4, ...) until it has bracketed the
  // answer, then bisects: a handful of counts near the answer instead of a bisection's from
  // halfway up the range, and the counts that pass (each a whole week) are the fewer.
  struct Search {
    int lo, hi;
    int step = 1;
    std::optional<int> next;  // the count to decide next
  };
  // What the plan will probably ask for next, for threads that would otherwise idle: the runs of
  // policy p's weeks [from, to) at n (the baseline's and its own), and the baselines of the
  // policies' runs just asked for (each needed unless its run breaks the power SLO).
  using Ahead = std::vector<std::pair<Run, bool>>;
  // The runs of policy p's weeks [from, to) at n: the baseline's and its own, its own first
  // where it acts (acts_by).
  const auto weeks_at = [&](const std::string& p, int n, int from, int to, Ahead* out) {
    const bool acts = p != uncapped && acts_by(p, n);
    for (int w = from; w < to; ++w) {
      if (acts) out->push_back({{{p, n, w}, true}, false});
      out->push_back({{{uncapped, n, w}, false}, false});
      if (p != uncapped && !acts) out->push_back({{{p, n, w}, true}, true});
    }
  };
  const auto baselines_of = [&](const std::vector<Job>& asked, Ahead* out) {
    for (const Job& j : asked) {
      if (j.policy != uncapped) out->push_back({{{uncapped, j.servers, j.week}, false}, false});
    }
  };
  // The risk runs past an answer (below): power only, no baseline waited for.
  const auto risk_at = [&](const std::string& p, int answer, Ahead* out) {
    const int top = std::min(n_max, std::max(answer, n0) + plan.risk_beyond);
    for (int n = std::max(answer + 1, n0); n <= top; ++n) {
      for (int w = 0; w < planning; ++w) out->push_back({{{p, n, w}, true}, false});
    }
  };
  std::vector<Job> jobs{{uncapped, n0, 0}};  // the baseline itself first
  Ahead ahead;
  if (s.workload.target_baseline_peak > 0) {
    // The search's first count as the calibration expects it (below), while the provisioned
    // row runs.
    const int expected =
        std::clamp(static_cast<int>(std::floor(n0 / s.workload.target_baseline_peak)), n0, n_max);
    for (const std::string& p : policies) {
      weeks_at(p, expected, 0, std::min(kSearchWeeksPerRound, planning), &ahead);
    }
  }
  HEADROOM_RETURN_IF_ERROR(run(jobs, ahead));
  const double provisioned_peak = done.at({uncapped, n0, 0}).peak_frac;
  const int guess =
      std::clamp(provisioned_peak > 0 ? static_cast<int>(std::floor(n0 / provisioned_peak)) : n_max,
                 n0, n_max);
  std::vector<Search> search(policies.size(), Search{n0 - 1, n_max + 1, 1, guess});
  const auto advance = [&](Search& sr, int decided, bool keeps) {
    (keeps ? sr.lo : sr.hi) = decided;
    const bool bracketed = sr.lo >= n0 && sr.hi <= n_max;
    if (sr.hi - sr.lo <= 1) {
      sr.next.reset();
    } else if (bracketed) {
      sr.next = sr.lo + (sr.hi - sr.lo) / 2;
    } else {
      sr.next = std::clamp(keeps ? sr.lo + sr.step : sr.hi - sr.step, sr.lo + 1, sr.hi - 1);
      sr.step *= 2;
    }
  };
  while (true) {
    // Advance every search whose next count is known on every planning week; collect what is
    // missing.
    jobs.clear();
    bool searching = false;
    for (std::size_t k = 0; k < policies.size(); ++k) {
      Search& sr = search[k];
      while (sr.next) {
        const auto v = verdict(policies[k], *sr.next, 0, planning, &jobs, /*in_turn=*/true);
        if (!v) {
          searching = true;
          break;
        }
        advance(sr, *sr.next, v->keeps);
      }
    }
    if (!searching) break;
    // Ahead: a decided policy's unseen weeks at its answer and its risk past it (below), then
    // the rest of the weeks of the counts being decided.
    ahead.clear();
    baselines_of(jobs, &ahead);
    for (std::size_t k = 0; k < policies.size(); ++k) {
      if (search[k].next || search[k].lo < n0) continue;
      weeks_at(policies[k], search[k].lo, planning, all_weeks, &ahead);
      risk_at(policies[k], search[k].lo, &ahead);
    }
    for (std::size_t k = 0; k < policies.size(); ++k) {
      if (search[k].next) weeks_at(policies[k], *search[k].next, 0, planning, &ahead);
    }
    // Then the first weeks of the count each search decides next, whichever way this one goes.
    for (std::size_t k = 0; k < policies.size(); ++k) {
      for (const bool keeps : {false, true}) {
        if (!search[k].next) continue;
        Search then = search[k];
        advance(then, *then.next, keeps);
        if (then.next) {
          weeks_at(policies[k], *then.next, 0, std::min(kSearchWeeksPerRound, planning), &ahead);
        }
      }
    }
    HEADROOM_RETURN_IF_ERROR(run(jobs, ahead));
  }

  // Each answer on the unseen weeks, lowered one server at a time until it holds on all of them
  // (below the search's answer the planning weeks were assumed, not simulated: checked too).
  struct Check {
    int servers;
    bool settled;
    std::string first_failure, last_failure;  // "unseen week 1 (seed 1001): 1 brake event"
  };
  std::vector<Check> checks;
  for (const Search& sr : search) {
    checks.push_back({sr.lo, plan.validation_weeks == 0 || sr.lo < n0, "", ""});
  }
  while (true) {
    jobs.clear();
    bool checking = false;
    for (std::size_t k = 0; k < policies.size(); ++k) {
      Check& c = checks[k];
      while (!c.settled && c.servers >= n0) {
        const int from = c.servers == search[k].lo ? planning : 0;
        const auto v = verdict(policies[k], c.servers, from, all_weeks, &jobs);
        if (!v) {
          checking = true;
          break;
        }
        if (v->keeps) {
          c.settled = true;
          break;
        }
        c.last_failure = fmt::format("{}: {}", WeekName(plan, v->week), v->why);
        if (c.first_failure.empty()) {  // at the search's answer: the unseen weeks alone
          c.first_failure =
              fmt::format("{} of {} unseen weeks failed at {} servers, first {}: {}", v->broken,
                          plan.validation_weeks, c.servers, WeekName(plan, v->week), v->why);
        }
        --c.servers;
      }
    }
    if (!checking) break;
    ahead.clear();
    baselines_of(jobs, &ahead);
    // The risk past each answer as it stands: asked for at the end unless a check lowers it.
    Ahead risk;
    for (std::size_t k = 0; k < policies.size(); ++k)
      risk_at(policies[k], checks[k].servers, &risk);
    std::vector<Run> early;
    for (const auto& [r, wait] : risk) early.push_back(r);
    HEADROOM_RETURN_IF_ERROR(run(jobs, ahead, /*power_only=*/false, early));
  }

  // The risk at each count up to a few beyond each answer (or, for a policy that fits none,
  // from the provisioned row), on every week the search decides on: the search itself stopped
  // at the first week that failed there. Only the power matters here: no baselines are asked
  // for, and every run, the uncapped row's too, stops at its first power event.
  if (plan.risk_beyond > 0) {
    ahead.clear();
    for (std::size_t k = 0; k < policies.size(); ++k)
      risk_at(policies[k], checks[k].servers, &ahead);
    jobs.clear();
    for (const auto& [r, wait] : ahead) jobs.push_back(r.job);
    HEADROOM_RETURN_IF_ERROR(run(jobs, {}, /*power_only=*/true));
  }

  plan.baseline = done.at({uncapped, n0, 0});
  for (std::size_t k = 0; k < policies.size(); ++k) {
    PolicyPlan pp;
    pp.policy = policies[k];
    const Search& sr = search[k];
    const Check& c = checks[k];
    pp.searched_servers = sr.lo >= n0 ? sr.lo : 0;
    pp.validation_failure = c.first_failure;
    if (c.servers >= n0) {
      pp.max_servers = c.servers;
      pp.extra_pct = (static_cast<double>(c.servers) / n0 - 1) * 100;
      pp.validated_weeks = plan.validation_weeks;
      for (int w = 0; w < planning; ++w) {
        const RunSummary& r = done.at({pp.policy, c.servers, w});
        const Impact impact = Compare(r, done.at({uncapped, c.servers, w}));
        if (w == 0 || r.peak_frac > pp.at_max.peak_frac) pp.at_max = r;
        pp.impact = w == 0 ? impact : Worst(pp.impact, impact);
      }
    }
    if (!c.last_failure.empty()) {
      pp.limit = fmt::format("{} servers: {}", c.servers + 1, c.last_failure);
    } else if (sr.hi <= n_max) {
      std::vector<Job> missing;  // none: the search decided on these runs
      const Verdict v = *verdict(pp.policy, sr.hi, 0, planning, &missing, /*in_turn=*/true);
      pp.limit = planning == 1
                     ? fmt::format("{} servers: {}", sr.hi, v.why)
                     : fmt::format("{} servers: {}: {}", sr.hi, WeekName(plan, v.week), v.why);
    } else {
      pp.limit = fmt::format("search bound ({} servers, +{}%)", n_max, s.plan_max_extra_pct);
    }
    plan.policies.push_back(std::move(pp));
  }
  for (const auto& [key, r] : done) plan.runs.push_back(r);
  plan.replayed_simulations = recordings.replays();
  return plan;
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
