#include "mig/planner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "mig/attribution.h"
#include "mig/enumerate.h"

namespace headroom::mig {
namespace {

constexpr double kRelativeTolerance = 1e-9;
constexpr int kMaxLocalSearchRounds = 25;

// Seconds job `j` takes alone on `slice` at the maximum clock (no power-limit interaction).
double AloneSeconds(const SliceModel& model, const PlanJob& job, const Slice& slice) {
  const double t = model.IterationSeconds(job.fit, job.batch, slice, model.gpu().sm_clock_max);
  return job.samples / (job.batch / t);
}

bool Fits(const SliceModel& model, const PlanJob& job, const Slice& slice) {
  return model.Fits(job.fit, job.batch, slice);
}

// Within an instance: higher priority first, then earlier deadline, then shorter job (least mean
// completion time).
void OrderQueue(const SliceModel& model, const std::vector<PlanJob>& jobs, const Slice& slice,
                std::vector<int>& queue) {
  auto key = [&](int j) {
    const PlanJob& job = jobs[j];
    return std::make_tuple(-job.priority,
                           job.deadline_s.value_or(std::numeric_limits<double>::infinity()),
                           AloneSeconds(model, job, slice), j);
  };
  std::sort(queue.begin(), queue.end(), [&](int a, int b) { return key(a) < key(b); });
}

bool Less(double a, double b) {
  return a < b - kRelativeTolerance * std::max(std::abs(a), std::abs(b));
}

// Longest job first onto the instance where it would end earliest.
std::vector<std::vector<int>> GreedyQueues(const SliceModel& model,
                                           const std::vector<PlanJob>& jobs,
                                           const std::vector<Slice>& slices) {
  std::vector<int> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  auto longest = [&](int j) {
    double t = 0;
    for (const Slice& s : slices) {
      if (Fits(model, jobs[j], s)) t = std::max(t, AloneSeconds(model, jobs[j], s));
    }
    return t;
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return longest(a) > longest(b); });
  std::vector<std::vector<int>> queues(slices.size());
  std::vector<double> load(slices.size(), 0.0);
  for (int j : order) {
    int best = -1;
    double best_end = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < slices.size(); ++i) {
      if (!Fits(model, jobs[j], slices[i])) continue;
      const double end = load[i] + AloneSeconds(model, jobs[j], slices[i]);
      if (end < best_end) best_end = end, best = static_cast<int>(i);
    }
    if (best < 0) best = 0;  // fits nowhere: evaluation reports it
    queues[best].push_back(j);
    load[best] = best_end;
  }
  for (size_t i = 0; i < slices.size(); ++i) OrderQueue(model, jobs, slices[i], queues[i]);
  return queues;
}

PlanOption MakeOption(std::string name, std::optional<Layout> layout, std::vector<Slice> slices) {
  PlanOption option;
  option.name = std::move(name);
  option.layout = std::move(layout);
  option.slices = std::move(slices);
  return option;
}

void Explain(const SliceModel& model, const PlanRequest& request, PlanOption& option) {
  const Slice whole = WholeGpuSlice(model.gpu(), model.mig());
  for (size_t j = 0; j < request.jobs.size(); ++j) {
    JobOutcome& out = option.jobs[j];
    if (out.instance < 0) continue;
    const PlanJob& job = request.jobs[j];
    const Slice& slice = option.slices[out.instance];
    const double whole_rate =
        job.batch / model.IterationSeconds(job.fit, job.batch, whole, model.gpu().sm_clock_max);
    const double speed = out.samples_per_s / whole_rate;
    const double sm_share = static_cast<double>(slice.sm_count) / whole.sm_count;
    std::string why;
    if (option.slices.size() == 1) {
      why = "the whole GPU";
    } else if (speed > sm_share * 1.05) {
      why = fmt::format("keeps {:.0f}% of its whole-GPU speed on {:.0f}% of the SMs", speed * 100,
                        sm_share * 100);
    } else {
      why = fmt::format("scales with SMs ({:.0f}% of its whole-GPU speed on {:.0f}% of the SMs)",
                        speed * 100, sm_share * 100);
    }
    out.explanation = fmt::format(
        "{} on {}: {}; {:.0f} samples/s, {:.1f} GiB of {:.1f}, {:.1f} kJ, ends at {:.0f} s{}",
        job.name, slice.name, why, out.samples_per_s, model.FootprintGib(job.fit, job.batch),
        slice.memory_gib, out.energy_activity_j / 1e3, out.end_s,
        out.meets_deadline ? "" : " (misses its deadline)");
  }
}

}  // namespace

namespace {

// Resets `option`'s outcome; false, with the reason, when a job does not fit its instance.
bool CheckJobsFit(const SliceModel& model, const std::vector<PlanJob>& jobs, PlanOption& option) {
  option.feasible = true;
  option.infeasible_reason.clear();
  option.jobs.assign(jobs.size(), JobOutcome{});
  option.power.clear();
  option.energy_j = option.makespan_s = option.unattributed_j = option.overrun_s = 0;
  for (size_t j = 0; j < jobs.size(); ++j) option.jobs[j].job = jobs[j].name;
  for (size_t i = 0; i < option.queues.size(); ++i) {
    for (int j : option.queues[i]) {
      option.jobs[j].instance = static_cast<int>(i);
      auto fits = model.CheckFits(jobs[j].fit, jobs[j].batch, option.slices[i]);
      if (!fits && option.feasible) {
        option.feasible = false;
        option.infeasible_reason = fmt::format("{}: {}", jobs[j].name, fits.error().message());
      }
    }
  }
  return option.feasible;
}

// The schedule of an option run forward: each instance's queue, one job at a time, all
// instances at once, from one job's end to the next (the operating point changes only there).
class QueueRun {
 public:
  QueueRun(const SliceModel& model, const std::vector<PlanJob>& jobs, PlanOption& option)
      : model_(model), jobs_(jobs), option_(option), next_(option.queues.size(), 0) {
    for (const PlanJob& job : jobs) remaining_.push_back(job.samples);
  }

  // Runs until every queue is done; the time it took.
  double Run() {
    while (StartSegment()) Advance(model_.Solve(slice_jobs_));
    return t_;
  }

 private:
  // The jobs at the head of each queue; false when none is left.
  bool StartSegment() {
    running_slice_.clear();
    running_job_.clear();
    slice_jobs_.clear();
    for (size_t i = 0; i < option_.queues.size(); ++i) {
      if (next_[i] >= option_.queues[i].size()) continue;
      const int j = option_.queues[i][next_[i]];
      running_slice_.push_back(static_cast<int>(i));
      running_job_.push_back(j);
      slice_jobs_.push_back(
          SliceJob{.fit = jobs_[j].fit, .batch = jobs_[j].batch, .slice = option_.slices[i]});
    }
    return !slice_jobs_.empty();
  }

  // Runs the segment at `op` until its first job ends, attributing its energy.
  void Advance(const OperatingPoint& op) {
    double dt = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < running_job_.size(); ++k) {
      dt = std::min(dt, remaining_[running_job_[k]] / op.jobs[k].samples_per_s);
    }
    option_.energy_j += op.power_w * dt;
    option_.power.push_back(PowerSegment{
        .start_s = t_, .end_s = t_ + dt, .power_w = op.power_w, .clock_mhz = op.clock.value()});
    t_ += dt;
    uses_.assign(option_.slices.size(), InstanceUse{});
    for (size_t i = 0; i < option_.slices.size(); ++i) {
      uses_[i].sm_count = option_.slices[i].sm_count;
    }
    for (size_t k = 0; k < running_job_.size(); ++k) {
      uses_[running_slice_[k]].has_job = true;
      uses_[running_slice_[k]].busy_s = op.jobs[k].busy * dt;
    }
    const EnergyShares shares =
        AttributeEnergy(op.power_w * dt, model_.idle_power().value(), dt, uses_);
    option_.unattributed_j += shares.unattributed_activity_j;
    for (size_t k = 0; k < running_job_.size(); ++k) {
      Progress(running_job_[k], running_slice_[k], op.jobs[k].samples_per_s * dt, shares);
    }
  }

  // Job j on instance i did `samples` more; at its end the next job of the queue starts.
  void Progress(int j, int i, double samples, const EnergyShares& shares) {
    JobOutcome& out = option_.jobs[j];
    out.energy_activity_j += shares.activity_j[i];
    out.energy_sm_share_j += shares.sm_share_j[i];
    remaining_[j] -= samples;
    if (remaining_[j] > jobs_[j].samples * 1e-9) return;
    remaining_[j] = 0;
    out.end_s = t_;
    out.samples_per_s = jobs_[j].samples / (out.end_s - out.start_s);
    ++next_[i];
    if (next_[i] < option_.queues[i].size()) option_.jobs[option_.queues[i][next_[i]]].start_s = t_;
  }

  const SliceModel& model_;
  const std::vector<PlanJob>& jobs_;
  PlanOption& option_;
  std::vector<double> remaining_;
  std::vector<size_t> next_;
  double t_ = 0;
  std::vector<int> running_slice_, running_job_;
  std::vector<SliceJob> slice_jobs_;
  std::vector<InstanceUse> uses_;
};

}  // namespace

void EvaluateOption(const SliceModel& model, const PlanRequest& request, PlanOption& option) {
  const std::vector<PlanJob>& jobs = request.jobs;
  if (!CheckJobsFit(model, jobs, option)) return;
  const double t = QueueRun(model, jobs, option).Run();
  option.makespan_s = t;
  double samples = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    samples += jobs[j].samples;
    if (jobs[j].deadline_s && option.jobs[j].end_s > *jobs[j].deadline_s) {
      option.jobs[j].meets_deadline = false;
      option.overrun_s += option.jobs[j].end_s - *jobs[j].deadline_s;
    }
  }
  if (request.makespan_bound_s && t > *request.makespan_bound_s) {
    option.overrun_s += t - *request.makespan_bound_s;
  }
  option.meets_bound = option.overrun_s == 0;
  option.samples_per_s = t > 0 ? samples / t : 0;
  option.samples_per_j = option.energy_j > 0 ? samples / option.energy_j : 0;
}

bool Better(const PlanOption& a, const PlanOption& b, Objective objective) {
  if (a.feasible != b.feasible) return a.feasible;
  if (!a.feasible) return false;
  if (Less(a.overrun_s, b.overrun_s)) return true;
  if (Less(b.overrun_s, a.overrun_s)) return false;
  const bool energy = objective == Objective::kEnergy;
  const double a1 = energy ? a.energy_j : a.makespan_s, b1 = energy ? b.energy_j : b.makespan_s;
  if (Less(a1, b1)) return true;
  if (Less(b1, a1)) return false;
  const double a2 = energy ? a.makespan_s : a.energy_j, b2 = energy ? b.makespan_s : b.energy_j;
  return Less(a2, b2);
}

namespace {

// The plan's search: the baselines, then from each distinct multiset of maximal layouts (and
// each extra layout) a greedy schedule improved by local search; every schedule scored counted.
class LayoutSearch {
 public:
  LayoutSearch(const SliceModel& model, const PlanRequest& request)
      : model_(model), request_(request), spec_(model.mig()) {}

  core::Result<PlanResult> Run() {
    AddBaselines();
    HEADROOM_ASSIGN_OR_RETURN(std::vector<PlanOption> starts, Starts());
    PlanOption best = result_.baselines.front();
    for (const PlanOption& b : result_.baselines) {
      if (Better(b, best, request_.objective)) best = b;
    }
    // MIG off is scored once, as the first baseline (one instance: nothing to search).
    result_.layouts_considered = static_cast<int>(starts.size()) + 1;
    for (PlanOption& start : starts) {
      PlanOption current = Improve(WithGreedy(std::move(start)));
      if (Better(current, best, request_.objective)) best = std::move(current);
    }
    for (const Layout& layout : request_.extra_layouts) {
      PlanOption option = Improve(
          WithGreedy(MakeOption(FormatLayout(layout), layout, LayoutSlices(spec_, layout))));
      if (Better(option, best, request_.objective)) best = option;
      result_.extra.push_back(std::move(option));
    }
    best.name = "planned";
    Explain(model_, request_, best);
    for (PlanOption& b : result_.baselines) Explain(model_, request_, b);
    for (PlanOption& e : result_.extra) Explain(model_, request_, e);
    result_.best = std::move(best);
    return std::move(result_);
  }

 private:
  PlanOption Scored(PlanOption option) {
    EvaluateOption(model_, request_, option);
    ++result_.schedules_evaluated;
    return option;
  }

  PlanOption WithGreedy(PlanOption option) {
    option.queues = GreedyQueues(model_, request_.jobs, option.slices);
    return Scored(std::move(option));
  }

  void AddBaselines() {
    PlanOption whole = MakeOption("whole GPU, one after another", std::nullopt,
                                  {WholeGpuSlice(model_.gpu(), spec_)});
    result_.baselines.push_back(WithGreedy(whole));
    if (auto halves = UniformLayout(spec_, "3g", 2)) {
      result_.baselines.push_back(WithGreedy(MakeOption("balanced (" + FormatLayout(*halves) + ")",
                                                        *halves, LayoutSlices(spec_, *halves))));
    }
    if (auto sevens = UniformLayout(spec_, "1g", spec_.compute_slices)) {
      result_.baselines.push_back(
          WithGreedy(MakeOption("7x1g", *sevens, LayoutSlices(spec_, *sevens))));
    }
  }

  // One option per distinct multiset of the maximal layouts of the request's profile classes.
  core::Result<std::vector<PlanOption>> Starts() const {
    std::vector<const GiProfile*> profiles;
    for (const std::string& name : request_.profile_classes) {
      const GiProfile* p = spec_.FindProfileOrClass(name);
      if (p == nullptr) {
        return core::Fail(core::Error::InvalidArgument(
            fmt::format("profile class '{}' is not on {}", name, spec_.name)));
      }
      if (std::find(profiles.begin(), profiles.end(), p) == profiles.end()) profiles.push_back(p);
    }
    std::map<std::vector<std::string>, Layout> distinct;
    for (const Layout& layout : EnumerateMaximalLayouts(spec_, profiles)) {
      std::vector<std::string> key;
      for (const GpuInstance& gi : layout.instances) key.push_back(gi.profile);
      std::sort(key.begin(), key.end());
      distinct.emplace(std::move(key), layout);
    }
    std::vector<PlanOption> starts;
    for (const auto& [key, layout] : distinct) {
      starts.push_back(MakeOption("planned", layout, LayoutSlices(spec_, layout)));
    }
    return starts;
  }

  // Local search from a start: move one job to another instance, or swap two, while that helps.
  PlanOption Improve(PlanOption current) {
    for (int round = 0; round < kMaxLocalSearchRounds; ++round) {
      if (!TryMove(current) && !TrySwap(current)) break;
    }
    return current;
  }

  // The first move of one job to the end of another instance's queue that is better.
  bool TryMove(PlanOption& current) {
    const size_t n_slices = current.slices.size();
    for (size_t from = 0; from < n_slices; ++from) {
      for (size_t pos = 0; pos < current.queues[from].size(); ++pos) {
        const int j = current.queues[from][pos];
        for (size_t to = 0; to < n_slices; ++to) {
          if (to == from || !Fits(model_, request_.jobs[j], current.slices[to])) continue;
          PlanOption trial = current;
          trial.queues[from].erase(trial.queues[from].begin() + static_cast<long>(pos));
          trial.queues[to].push_back(j);
          OrderQueue(model_, request_.jobs, trial.slices[to], trial.queues[to]);
          trial = Scored(std::move(trial));
          if (Better(trial, current, request_.objective)) {
            current = std::move(trial);
            return true;
          }
        }
      }
    }
    return false;
  }

  // The first swap of two jobs on different instances that is better.
  bool TrySwap(PlanOption& current) {
    const size_t n_slices = current.slices.size();
    for (size_t a = 0; a < n_slices; ++a) {
      for (size_t b = a + 1; b < n_slices; ++b) {
        for (size_t pa = 0; pa < current.queues[a].size(); ++pa) {
          for (size_t pb = 0; pb < current.queues[b].size(); ++pb) {
            if (TrySwapPair(current, a, pa, b, pb)) return true;
          }
        }
      }
    }
    return false;
  }

  bool TrySwapPair(PlanOption& current, size_t a, size_t pa, size_t b, size_t pb) {
    const int ja = current.queues[a][pa], jb = current.queues[b][pb];
    if (!Fits(model_, request_.jobs[ja], current.slices[b]) ||
        !Fits(model_, request_.jobs[jb], current.slices[a])) {
      return false;
    }
    PlanOption trial = current;
    trial.queues[a][pa] = jb;
    trial.queues[b][pb] = ja;
    OrderQueue(model_, request_.jobs, trial.slices[a], trial.queues[a]);
    OrderQueue(model_, request_.jobs, trial.slices[b], trial.queues[b]);
    trial = Scored(std::move(trial));
    if (!Better(trial, current, request_.objective)) return false;
    current = std::move(trial);
    return true;
  }

  const SliceModel& model_;
  const PlanRequest& request_;
  const GpuMigSpec& spec_;
  PlanResult result_;
};

}  // namespace

core::Result<PlanResult> Plan(const SliceModel& model, const PlanRequest& request) {
  if (request.jobs.empty()) return core::Fail(core::Error::InvalidArgument("no jobs to plan"));
  for (const Layout& layout : request.extra_layouts) {
    auto valid = ValidateLayout(model.mig(), layout);
    if (!valid) return core::Fail(valid.error());
  }
  for (const PlanJob& job : request.jobs) {
    if (!(job.samples > 0) || job.batch < 1) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("job {}: needs a positive number of samples and batch size", job.name)));
    }
  }
  return LayoutSearch(model, request).Run();
}

}  // namespace headroom::mig
