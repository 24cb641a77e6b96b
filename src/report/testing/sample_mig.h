// Small MIG report inputs with every field set, for the report's tests: an H200-like geometry,
// a MIG plan (a planned layout, the whole-GPU and balanced baselines, one infeasible --layout)
// and a characterization (two workloads on MIG off and two 3g halves, one instance of which a
// workload does not fit). Numbers are made up; the tests derive what they expect from them.
// Test-only.
#ifndef HEADROOM_REPORT_TESTING_SAMPLE_MIG_H_
#define HEADROOM_REPORT_TESTING_SAMPLE_MIG_H_

#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/mig_characterize_report.h"
#include "report/mig_plan_report.h"

namespace headroom::report::testing {

inline MigGeometry SampleGeometry() {
  return {.gpu = "h200-141gb-sxm",
          .memory_slices = 8,
          .compute_slices = 7,
          .profiles = {{"1g.18gb", "1g", 1, 1},
                       {"2g.35gb", "2g", 2, 2},
                       {"3g.71gb", "3g", 3, 4},
                       {"4g.71gb", "4g", 4, 4},
                       {"7g.141gb", "7g", 7, 8}}};
}

inline MigOption SampleOption(const std::string& name, const std::string& layout, double energy_j,
                              double makespan_s, const std::vector<std::string>& jobs) {
  MigOption o{.name = name, .layout = layout, .feasible = true};
  auto instances = InstancesOfText(SampleGeometry(), layout);
  o.instances = *instances;
  for (MigInstance& in : o.instances) {
    in.sm_count = 16 * in.compute_slices;
    in.memory_gib = 17.5 * in.memory_slices;
  }
  o.energy_j = energy_j;
  o.makespan_s = makespan_s;
  o.samples_per_s = 1e6 / makespan_s;
  o.samples_per_j = 1e6 / energy_j;
  o.unattributed_j = 1000;
  // Job k runs on instance k modulo the instances, one after another there.
  std::vector<double> free_at(o.instances.size(), 0);
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const int i = static_cast<int>(k % o.instances.size());
    const double length = makespan_s / static_cast<double>(1 + jobs.size() / o.instances.size());
    o.jobs.push_back({.job = jobs[k],
                      .instance = i,
                      .start_s = free_at[i],
                      .end_s = free_at[i] + length,
                      .samples_per_s = 100 + static_cast<double>(k),
                      .energy_j = energy_j / static_cast<double>(jobs.size()),
                      .energy_sm_share_j = energy_j / static_cast<double>(jobs.size()) + 1,
                      .meets_deadline = k != 1,
                      .explanation = fmt::format("{} on {}: why", jobs[k], o.instances[i].slice)});
    free_at[i] += length;
  }
  return o;
}

inline MigPlanReport SampleMigPlanReport() {
  const std::vector<std::string> jobs = {"effnet", "gpt2 <small>", "resnet", "densenet"};
  MigPlanReport r{.inputs = {.jobs_file = "jobs.yaml",
                             .power_limit_w = 700,
                             .objective = "energy",
                             .makespan_bound_s = 900,
                             .version = "0.0.0-test",
                             .geometry = SampleGeometry()},
                  .jobs = 4,
                  .layouts_considered = 15,
                  .schedules_evaluated = 321};
  r.plan = SampleOption("planned", "3g.71gb@0,2g.35gb@4,1g.18gb@6,1g.18gb@7", 70'000, 600, jobs);
  for (const MigJobRun& job : r.plan.jobs) r.why.push_back(job.explanation);
  r.baselines.push_back(
      SampleOption("whole GPU, one after another", "MIG off", 100'000, 900, jobs));
  r.baselines.push_back(
      SampleOption("balanced (3g.71gb@0,3g.71gb@4)", "3g.71gb@0,3g.71gb@4", 80'000, 500, jobs));
  r.baselines.back().meets_bound = true;
  MigOption tiny{.name = "1g.18gb@0",
                 .layout = "1g.18gb@0",
                 .feasible = false,
                 .reason = "densenet: needs 30.0 GiB, 1g.18gb@0 has 16.0",
                 .instances = *InstancesOfText(SampleGeometry(), "1g.18gb@0")};
  r.layouts.push_back(tiny);
  return r;
}

inline mig::LayoutResult SampleLayoutResult(const std::string& layout, const std::string& workload,
                                            int instances, double rate, bool last_fits) {
  mig::LayoutResult r{.layout = layout, .workload = workload, .batch = 32, .instances = instances};
  for (int i = 0; i < instances; ++i) {
    const bool fits = i + 1 < instances || last_fits;
    r.per_instance.push_back(
        {.slice = instances == 1 ? "whole GPU" : fmt::format("3g.71gb@{}", 4 * i),
         .sm_count = instances == 1 ? 132 : 60,
         .memory_gib = instances == 1 ? 140 : 70.5,
         .fits = fits,
         .samples_per_s = fits ? rate : 0,
         .busy = fits ? 0.75 : 0,
         .power_activity_w = fits ? 250.5 : 0,
         .power_sm_share_w = fits ? 240.25 : 0,
         .j_per_sample_activity = fits ? 250.5 / rate : 0,
         .j_per_sample_sm_share = fits ? 240.25 / rate : 0});
    if (fits) r.gpu_samples_per_s += rate;
  }
  r.gpu_power_w = 500;
  r.gpu_j_per_sample = r.gpu_samples_per_s > 0 ? 500 / r.gpu_samples_per_s : 0;
  r.clock_mhz = 1980;
  r.power_limited = instances > 1;
  return r;
}

inline MigCharacterizeReport SampleMigCharacterizeReport() {
  const std::string halves = "3g.71gb@0,3g.71gb@4";
  return {.inputs = {.power_limit_w = 700,
                     .version = "0.0.0-test",
                     .geometry = SampleGeometry(),
                     .workloads = {"resnet50-finetune", "gpt2-1.5b-pretrain"},
                     .layouts = {"MIG off", halves}},
          .results = {SampleLayoutResult("MIG off", "resnet50-finetune", 1, 1000, true),
                      SampleLayoutResult(halves, "resnet50-finetune", 2, 600, true),
                      SampleLayoutResult("MIG off", "gpt2-1.5b-pretrain", 1, 20, true),
                      SampleLayoutResult(halves, "gpt2-1.5b-pretrain", 2, 12, false)}};
}

}  // namespace headroom::report::testing

#endif  // HEADROOM_REPORT_TESTING_SAMPLE_MIG_H_
