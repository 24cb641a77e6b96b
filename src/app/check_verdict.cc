#include "app/check_verdict.h"

#include <ctime>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/json_fields.h"
#include "sim/scenario_run.h"

namespace headroom::app {
namespace {

// Unseen weeks a check may ask for: a plan's most.
constexpr int kMaxCheckWeeks = 10'000;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool PowerEvent(const sim::RunSummary& r, const sim::Slo& slo) {
  return !sim::PowerViolation(r, slo).empty();
}

// The weeks checked: each unseen week as drawn, then under each stress case.
struct Week {
  sim::ResolvedScenario scenario;
  std::string stress;
};

core::Result<std::vector<Week>> WeeksOf(const sim::ResolvedScenario& base,
                                        const CheckVerdictRequest& r) {
  const sim::Scenario& s = base.scenario;
  std::vector<Week> weeks;
  for (int v = 0; v < r.weeks; ++v) {
    Week week{base, ""};
    week.scenario.scenario.seed =
        s.seed + sim::kValidationSeedOffset + static_cast<std::uint64_t>(v);
    weeks.push_back(week);
    if (!r.stress) continue;
    for (const sim::StressCase& c : s.plan_stress) {
      Week stressed = week;
      HEADROOM_ASSIGN_OR_RETURN(stressed.scenario.scenario, sim::Stressed(s, c, ""));
      stressed.scenario.scenario.seed = week.scenario.scenario.seed;
      stressed.stress = c.name;
      weeks.push_back(std::move(stressed));
    }
  }
  return weeks;
}

core::Status Validate(const CheckVerdictRequest& r) {
  if (r.servers_from < 1 || r.servers_to < r.servers_from) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "--servers {}-{}: expected a range of server counts FROM-TO with 1 <= FROM <= TO",
        r.servers_from, r.servers_to)));
  }
  if (r.weeks < 1 || r.weeks > kMaxCheckWeeks) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--weeks {}: expected 1 to {} weeks", r.weeks, kMaxCheckWeeks)));
  }
  return core::Ok();
}

// A case by (policy, servers, seed, stress).
using CaseKey = std::tuple<std::string, int, std::uint64_t, std::string>;
CaseKey KeyOf(const VerdictCase& c) { return {c.policy, c.servers, c.seed, c.stress}; }

// The exact weeks of a previous check's JSON (CheckVerdictRequest::exact_from), by case.
using ExactWeeks = std::map<CaseKey, VerdictCase>;

core::Result<ExactWeeks> ReadExactWeeks(const std::string& path, const std::string& scenario) {
  HEADROOM_ASSIGN_OR_RETURN(const nlohmann::json j, format::ReadJsonObject(path));
  format::FieldReader r(path, "headroom check-verdict --json");
  const std::string checked = r.Text(j, "scenario", "");
  const nlohmann::json& cases = r.List(j, "cases", "");
  ExactWeeks out;
  for (std::size_t i = 0; !r.error() && i < cases.size(); ++i) {
    const std::string at = fmt::format("cases[{}].", i);
    VerdictCase c{.policy = r.Text(cases[i], "policy", at),
                  .servers = r.Count<int>(cases[i], "servers", at),
                  .seed = r.Count(cases[i], "seed", at),
                  .stress = r.Text(cases[i], "stress", at)};
    c.exact.peak_frac = r.Number(cases[i], "exact_peak_frac", at);
    c.exact_cpu_s = r.Number(cases[i], "exact_cpu_s", at);
    c.exact_event = r.Flag(cases[i], "exact_event", at);
    out[KeyOf(c)] = std::move(c);
  }
  if (r.error()) return core::Fail(*r.error());
  if (checked != scenario) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "--exact-from {}: a check of scenario '{}', not '{}'", path, checked, scenario)));
  }
  return out;
}

// The whole week of case `c`, timed on this thread, or as `known` has it.
core::Status RunExact(const sim::ResolvedScenario& week, const std::atomic<bool>* stop,
                      const ExactWeeks& known, VerdictCase& c) {
  if (const auto it = known.find(KeyOf(c)); it != known.end()) {
    c.exact.peak_frac = it->second.exact.peak_frac;
    c.exact_cpu_s = it->second.exact_cpu_s;
    c.exact_event = it->second.exact_event;
    c.exact_read = true;
    return core::Ok();
  }
  sim::RunOptions run;
  run.stop = stop;
  run.keep_power_series = false;
  run.stop_after_power_events = week.scenario.slo.max_brake_events;
  const double t0 = ThreadCpuSeconds();
  HEADROOM_ASSIGN_OR_RETURN(sim::RowResult exact,
                            sim::RunScenario(week, c.policy, c.servers, "", run));
  c.exact = sim::Summarize(exact);
  c.exact_cpu_s = ThreadCpuSeconds() - t0;
  c.exact_event = PowerEvent(c.exact, week.scenario.slo);
  return core::Ok();
}

// One case: the whole week, then its verdict, each timed on this thread.
core::Status RunCase(const sim::ResolvedScenario& week, const sim::VerdictOptions& options,
                     const std::atomic<bool>* stop, const ExactWeeks& known, VerdictCase& c) {
  HEADROOM_RETURN_IF_ERROR(RunExact(week, stop, known, c));
  const double t0 = ThreadCpuSeconds();
  HEADROOM_ASSIGN_OR_RETURN(sim::PowerVerdict verdict,
                            sim::JudgePower(week, c.policy, c.servers, "", options, {}, stop));
  c.verdict = std::move(verdict.summary);
  c.verdict_cpu_s = ThreadCpuSeconds() - t0;
  c.verdict_event = PowerEvent(c.verdict, week.scenario.slo);
  // Near the budget the whole week decides, as in a plan that depends on it: its cost added.
  if (c.verdict.near_budget) {
    c.verdict_event = c.exact_event;
    c.verdict_cpu_s += c.exact_cpu_s;
  }
  return core::Ok();
}

}  // namespace

core::Result<CheckVerdictResult> CheckVerdict(const CheckVerdictRequest& r) {
  HEADROOM_RETURN_IF_ERROR(Validate(r));
  HEADROOM_ASSIGN_OR_RETURN(const sim::ResolvedScenario resolved, ResolveScenario(r.scenario));
  std::vector<std::string> policies = PolicyList(r.policies);
  if (policies.empty()) policies = resolved.scenario.plan_policies;
  for (const std::string& p : policies) {
    HEADROOM_RETURN_IF_ERROR(policy::MakePolicy(p, resolved.params));
  }
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<Week> weeks, WeeksOf(resolved, r));
  ExactWeeks known;
  if (!r.exact_from.empty()) {
    HEADROOM_ASSIGN_OR_RETURN(known, ReadExactWeeks(r.exact_from, resolved.scenario.name));
  }
  CheckVerdictResult out{.scenario = resolved.scenario.name};
  std::vector<std::size_t> week_of;
  for (std::size_t w = 0; w < weeks.size(); ++w) {
    for (const std::string& p : policies) {
      for (int n = r.servers_from; n <= r.servers_to; ++n) {
        out.cases.push_back({.policy = p,
                             .servers = n,
                             .seed = weeks[w].scenario.scenario.seed,
                             .stress = weeks[w].stress});
        week_of.push_back(w);
      }
    }
  }
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::optional<core::Error> failed;
  int done = 0;
  const auto work = [&] {
    for (std::size_t i = next++; i < out.cases.size(); i = next++) {
      const core::Status status =
          RunCase(weeks[week_of[i]].scenario, r.verdict, r.stop, known, out.cases[i]);
      std::lock_guard lock(mu);
      if (!status && !failed) failed = status.error();
      ++done;
      if (r.progress) r.progress(done, static_cast<int>(out.cases.size()));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, ThreadsOrCores(r.threads)); ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  if (failed) return core::Fail(*failed);
  for (const VerdictCase& c : out.cases) {
    out.exact_events += c.exact_event;
    out.false_safe += c.exact_event && !c.verdict_event;
    out.false_unsafe += !c.exact_event && c.verdict_event;
    out.exact_read += c.exact_read;
    out.exact_cpu_s += c.exact_cpu_s;
    out.verdict_cpu_s += c.verdict_cpu_s;
  }
  return out;
}

}  // namespace headroom::app
