// The capacity planner's runs (capacity_planner.h): a job (a policy at a server count on one of
// the plan's weeks), its run on that week's scenario with the uncapped row's shadows, the weeks'
// recorded requests replayed by later runs, and the pool of threads that runs them, ahead of the
// plan where it can (RunPool). Internal to the planner; thread-safety per class.
#ifndef HEADROOM_SIM_PLAN_RUNS_H_
#define HEADROOM_SIM_PLAN_RUNS_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/result.h"
#include "policy/policies.h"
#include "sim/capacity_planner.h"
#include "sim/plan_work.h"
#include "sim/recorded_requests.h"
#include "sim/scenario.h"

namespace headroom::sim {

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

// Runs of the same week and count spread apart, so that two threads seldom synthesize one week
// at once: one of each (week, servers) in turn, in the order first asked.
std::vector<Job> Interleaved(const std::vector<Job>& jobs);

// One run of a job on its week's scenario: the uncapped baseline's steps `shadows` beside
// (RunOptions::shadows).
core::Result<Outcome> RunOne(const ResolvedScenario& scenario, const Run& job,
                             const PlanOptions& options, WeekRecordings& recordings,
                             const std::vector<std::string>& shadows,
                             const std::atomic<bool>* stop);

// A job on an unseen week: its power verdict (sim/power_verdict.h), the uncapped row's with
// `shadows` beside it.
core::Result<Outcome> JudgeOne(const ResolvedScenario& scenario, const Job& job,
                               const PlanOptions& options, const std::vector<std::string>& shadows,
                               const std::atomic<bool>* stop);

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
  // With `batch`, no threads: each Need hands its runs to it in rounds (those whose baselines
  // are known, then those their baselines did not share), the speculative ones never.
  RunPool(int threads, const std::atomic<bool>* user_stop, RunFn run,
          std::function<bool(const RunSummary&)> interchangeable, BatchExecutor* batch = nullptr)
      : user_stop_(user_stop),
        run_(std::move(run)),
        interchangeable_(std::move(interchangeable)),
        batch_(batch) {
    if (batch_) return;
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
    if (batch_) return NeedInBatches(needed);
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

  // The runs of `needed` that can start now: without an outcome, not shared, and a policy's
  // only once its baseline has one.
  std::vector<Run> Startable() {
    std::vector<Run> out;
    for (const auto& [run, after] : needed_) {
      if (Resolved(run, after)) continue;
      if (after >= 0) {
        const Run& base = needed_[static_cast<std::size_t>(after)].first;
        if (Lookup(base) == outcomes_.end()) continue;
      }
      out.push_back(run);
    }
    return out;
  }

  core::Status NeedInBatches(const std::vector<std::pair<Run, int>>& needed) {
    std::lock_guard lock(mu_);  // one caller at a time, no workers: for the annotations
    needed_ = needed;
    for (std::vector<Run> round = Startable(); !round.empty(); round = Startable()) {
      auto outcomes = batch_->RunBatch(round, user_stop_);
      if (!outcomes) {
        needed_.clear();
        return core::Fail(outcomes.error());
      }
      for (std::size_t k = 0; k < round.size(); ++k) {
        outcomes_.insert_or_assign(round[k], std::move((*outcomes)[k]));
      }
    }
    needed_.clear();
    return core::Ok();
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
  BatchExecutor* batch_;
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

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_PLAN_RUNS_H_
