#include "report/mig_plan_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

#include "core/files.h"
#include "format/table.h"

namespace headroom::report {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr const char* kMigPlanWriter = "headroom mig plan --report";

ordered_json OptionJson(const MigOption& o, const MigOption* reference) {
  ordered_json j = {{"name", o.name}, {"layout", o.layout}, {"feasible", o.feasible}};
  ordered_json instances = ordered_json::array();
  for (const MigInstance& in : o.instances) instances.push_back(InstanceJson(in));
  if (!o.feasible) {
    j["reason"] = o.reason;
    j["instances"] = instances;
    return j;
  }
  j["energy_j"] = o.energy_j;
  j["makespan_s"] = o.makespan_s;
  j["samples_per_s"] = o.samples_per_s;
  j["samples_per_j"] = o.samples_per_j;
  if (reference != nullptr) {
    j["energy_vs_whole_gpu"] = o.energy_j / reference->energy_j - 1;
    j["throughput_vs_whole_gpu"] = o.samples_per_s / reference->samples_per_s - 1;
  }
  j["meets_bound"] = o.meets_bound;
  j["overrun_s"] = o.overrun_s;
  j["unattributed_idle_j"] = o.unattributed_j;
  j["instances"] = instances;
  ordered_json jobs = ordered_json::array();
  for (const MigJobRun& job : o.jobs) {
    jobs.push_back({{"job", job.job},
                    {"instance", job.instance},
                    {"slice", o.instances[job.instance].slice},
                    {"start_s", job.start_s},
                    {"end_s", job.end_s},
                    {"samples_per_s", job.samples_per_s},
                    {"energy_j", job.energy_j},
                    {"energy_sm_share_j", job.energy_sm_share_j},
                    {"meets_deadline", job.meets_deadline},
                    {"explanation", job.explanation}});
  }
  j["jobs"] = jobs;
  return j;
}

MigOption ReadOption(format::FieldReader& r, const json& j, const std::string& at,
                     int memory_slices, std::optional<core::Error>& invalid,
                     const std::string& path) {
  MigOption o;
  o.name = r.Text(j, "name", at);
  o.layout = r.Text(j, "layout", at);
  o.feasible = r.Flag(j, "feasible", at);
  const json& instances = r.List(j, "instances", at);
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const std::string i_at = fmt::format("{}instances[{}].", at, i);
    o.instances.push_back(ReadInstance(r, instances[i], i_at));
    const MigInstance& in = o.instances.back();
    if (!invalid && (in.memory_slices < 1 || in.start + in.memory_slices > memory_slices)) {
      invalid = core::Error::InvalidArgument(fmt::format(
          "{}: field '{}start' and 'memory_slices' place the instance outside the GPU's {} "
          "memory slices",
          path, i_at, memory_slices));
    }
  }
  if (!o.feasible) {
    o.reason = r.Text(j, "reason", at);
    return o;
  }
  o.energy_j = r.Number(j, "energy_j", at);
  o.makespan_s = r.Number(j, "makespan_s", at);
  o.samples_per_s = r.Number(j, "samples_per_s", at);
  o.samples_per_j = r.Number(j, "samples_per_j", at);
  o.meets_bound = r.Flag(j, "meets_bound", at);
  o.overrun_s = r.Number(j, "overrun_s", at);
  o.unattributed_j = r.Number(j, "unattributed_idle_j", at);
  const json& jobs = r.List(j, "jobs", at);
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const std::string j_at = fmt::format("{}jobs[{}].", at, k);
    MigJobRun job{.job = r.Text(jobs[k], "job", j_at),
                  .instance = r.Count<int>(jobs[k], "instance", j_at),
                  .start_s = r.Number(jobs[k], "start_s", j_at),
                  .end_s = r.Number(jobs[k], "end_s", j_at),
                  .samples_per_s = r.Number(jobs[k], "samples_per_s", j_at),
                  .energy_j = r.Number(jobs[k], "energy_j", j_at),
                  .energy_sm_share_j = r.Number(jobs[k], "energy_sm_share_j", j_at),
                  .meets_deadline = r.Flag(jobs[k], "meets_deadline", j_at),
                  .explanation = r.Text(jobs[k], "explanation", j_at)};
    if (!invalid && job.instance >= static_cast<int>(o.instances.size())) {
      invalid = core::Error::InvalidArgument(
          fmt::format("{}: field '{}instance' is {}, but the option has {} instances", path, j_at,
                      job.instance, o.instances.size()));
    }
    o.jobs.push_back(std::move(job));
  }
  return o;
}

}  // namespace

std::vector<std::vector<std::string>> MigOption::Queues() const {
  std::vector<std::vector<std::string>> out(instances.size());
  std::vector<std::size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(jobs[a].start_s, jobs[a].end_s) < std::tie(jobs[b].start_s, jobs[b].end_s);
  });
  for (std::size_t k : order) {
    const int i = jobs[k].instance;
    if (i >= 0 && i < static_cast<int>(out.size())) out[i].push_back(jobs[k].job);
  }
  return out;
}

std::vector<const MigOption*> MigPlanReport::Options() const {
  std::vector<const MigOption*> out = {&plan};
  for (const MigOption& b : baselines) out.push_back(&b);
  for (const MigOption& l : layouts) out.push_back(&l);
  return out;
}

const MigOption* MigPlanReport::Reference() const {
  return !baselines.empty() && baselines.front().feasible ? &baselines.front() : nullptr;
}

namespace {

MigOption MigOptionOf(const mig::PlanOption& o, const MigGeometry& geometry) {
  MigOption out{.name = o.name,
                .layout = o.layout ? mig::FormatLayout(*o.layout) : std::string("MIG off"),
                .feasible = o.feasible,
                .reason = o.infeasible_reason,
                .instances = InstancesOf(geometry, o.layout, o.slices)};
  if (!o.feasible) return out;
  out.energy_j = o.energy_j;
  out.makespan_s = o.makespan_s;
  out.samples_per_s = o.samples_per_s;
  out.samples_per_j = o.samples_per_j;
  out.meets_bound = o.meets_bound;
  out.overrun_s = o.overrun_s;
  out.unattributed_j = o.unattributed_j;
  for (const mig::JobOutcome& job : o.jobs) {
    out.jobs.push_back({.job = job.job,
                        .instance = job.instance,
                        .start_s = job.start_s,
                        .end_s = job.end_s,
                        .samples_per_s = job.samples_per_s,
                        .energy_j = job.energy_activity_j,
                        .energy_sm_share_j = job.energy_sm_share_j,
                        .meets_deadline = job.meets_deadline,
                        .explanation = job.explanation});
  }
  return out;
}

}  // namespace

MigPlanReport MigPlanReportOf(const mig::PlanResult& result, MigPlanInputs inputs, int jobs) {
  MigPlanReport r{.inputs = std::move(inputs),
                  .jobs = jobs,
                  .layouts_considered = result.layouts_considered,
                  .schedules_evaluated = result.schedules_evaluated};
  r.plan = MigOptionOf(result.best, r.inputs.geometry);
  for (const mig::JobOutcome& job : result.best.jobs) r.why.push_back(job.explanation);
  for (const mig::PlanOption& b : result.baselines) {
    r.baselines.push_back(MigOptionOf(b, r.inputs.geometry));
  }
  for (const mig::PlanOption& e : result.extra) {
    r.layouts.push_back(MigOptionOf(e, r.inputs.geometry));
  }
  return r;
}

std::string MigPlanQuestion(const MigPlanReport& r) {
  const MigPlanInputs& in = r.inputs;
  const std::string bound =
      in.makespan_bound_s ? fmt::format(", all done within {:.0f} s", *in.makespan_bound_s) : "";
  return fmt::format(
      "Which MIG layout runs these {} training job{} on one {} (power limit {:.0f} "
      "W) {}{}?",
      r.jobs, r.jobs == 1 ? "" : "s", in.geometry.gpu, in.power_limit_w,
      in.objective == "makespan" ? "soonest" : "with the least energy", bound);
}

std::string MigPlanAnswer(const MigPlanReport& r) {
  const MigOption& p = r.plan;
  const std::string& gpu = r.inputs.geometry.gpu;
  if (!p.feasible) return fmt::format("No option runs every job on the {}: {}", gpu, p.reason);
  const MigOption* whole = r.Reference();
  const std::string layout = PlacedLayoutName(r.inputs.geometry, p.layout);
  const std::string misses =
      p.meets_bound ? ""
                    : fmt::format(" (misses the bound or a deadline by {:.0f} s)", p.overrun_s);
  if (p.layout == "MIG off") {
    return fmt::format(
        "MIG off on the {}: every job one after another on the whole GPU, {:.1f} kJ in {:.0f} s; "
        "no layout does better{}",
        gpu, p.energy_j / 1e3, p.makespan_s, misses);
  }
  if (whole == nullptr) {
    return fmt::format(
        "Layout {} on the {}: {:.1f} kJ in {:.0f} s{} (the whole GPU cannot run "
        "every job one after another)",
        layout, gpu, p.energy_j / 1e3, p.makespan_s, misses);
  }
  const double energy = p.energy_j / whole->energy_j - 1;
  return fmt::format(
      "Layout {} on the {}: {:.1f}% {} energy, {} throughput vs jobs one after another on the "
      "whole GPU{}",
      layout, gpu, std::abs(energy) * 100, energy <= 0 ? "less" : "more",
      format::FormatChange(p.samples_per_s / whole->samples_per_s - 1), misses);
}

ordered_json MigPlanJson(const MigPlanReport& r) {
  const MigPlanInputs& in = r.inputs;
  const ordered_json bound =
      in.makespan_bound_s ? ordered_json(*in.makespan_bound_s) : ordered_json(nullptr);
  const MigOption* reference = r.Reference();
  ordered_json j = {{"gpu", in.geometry.gpu},
                    {"power_limit_w", in.power_limit_w},
                    {"objective", in.objective},
                    {"makespan_bound_s", bound},
                    {"layouts_considered", r.layouts_considered},
                    {"schedules_evaluated", r.schedules_evaluated},
                    {"plan", OptionJson(r.plan, reference)}};
  ordered_json baselines = ordered_json::array();
  for (const MigOption& b : r.baselines) baselines.push_back(OptionJson(b, reference));
  j["baselines"] = baselines;
  ordered_json layouts = ordered_json::array();
  for (const MigOption& l : r.layouts) layouts.push_back(OptionJson(l, reference));
  j["layouts"] = layouts;
  j["inputs"] = {{"jobs_file", in.jobs_file},         {"jobs", r.jobs},
                 {"power_limit_w", in.power_limit_w}, {"objective", in.objective},
                 {"makespan_bound_s", bound},         {"version", in.version},
                 {"mig", GeometryJson(in.geometry)}};
  return j;
}

namespace {

void AddMigPlanRow(format::TextTable& table, const MigOption& o, const MigOption* whole,
                   format::Tone tone, const format::TextStyle& style) {
  if (!o.feasible) {
    table.AddRow(
        {o.name, o.layout, "-", "-", "-", "-", "-", "-", style.Red("infeasible: " + o.reason)},
        tone);
    return;
  }
  table.AddRow(
      {o.name, o.layout, fmt::format("{:.1f}", o.energy_j / 1e3),
       fmt::format("{:.0f}", o.makespan_s), fmt::format("{:.1f}", o.samples_per_s),
       fmt::format("{:.3f}", o.samples_per_j),
       whole != nullptr ? format::FormatChange(o.energy_j / whole->energy_j - 1) : "-",
       whole != nullptr ? format::FormatChange(o.samples_per_s / whole->samples_per_s - 1) : "-",
       o.meets_bound
           ? ""
           : style.Red(fmt::format("misses the bound or a deadline by {:.0f} s", o.overrun_s))},
      tone);
}

}  // namespace

std::string MigPlanText(const MigPlanReport& r, const format::TextStyle& style) {
  const MigPlanInputs& in = r.inputs;
  const std::string objective = in.objective == "energy" ? "least energy" : "shortest makespan";
  const std::string bound =
      in.makespan_bound_s ? fmt::format(", makespan at most {:.0f} s", *in.makespan_bound_s) : "";
  std::string out =
      style.Bold(fmt::format("MIG plan for {} jobs on {} (power limit {:.0f} W): {}{}", r.jobs,
                             in.geometry.gpu, in.power_limit_w, objective, bound)) +
      "\n";
  using Align = format::TextTable::Align;
  format::TextTable table({{"OPTION", Align::kLeft},
                           {"LAYOUT", Align::kLeft},
                           {"ENERGY_KJ"},
                           {"MAKESPAN_S"},
                           {"SAMPLES/S"},
                           {"SAMPLES/J"},
                           {"ENERGY_VS_WHOLE"},
                           {"THROUGHPUT_VS_WHOLE"},
                           {"NOTE", Align::kLeft}});
  const MigOption* whole = r.Reference();
  AddMigPlanRow(table, r.plan, whole, format::Tone::kGreen, style);
  for (const MigOption& b : r.baselines)
    AddMigPlanRow(table, b, whole, format::Tone::kPlain, style);
  for (const MigOption& l : r.layouts) AddMigPlanRow(table, l, whole, format::Tone::kPlain, style);
  out += table.Render(style) + "\nWhy (planned):\n";
  for (const std::string& why : r.why) out += "  " + why + "\n";
  return out + fmt::format(
                   "\n{} partitions searched, {} schedules evaluated. Energy per job: idle power "
                   "by SM share, dynamic power by activity; {:.1f} kJ of idle power falls on "
                   "instances with no job left.\n",
                   r.layouts_considered, r.schedules_evaluated, r.plan.unattributed_j / 1e3);
}

core::Status WriteMigPlanDir(const std::string& dir, const MigPlanReport& report) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--out {}: cannot create the directory: {}", dir, ec.message())));
  }
  return core::WriteFileAtomically(fmt::format("{}/{}", dir, kMigPlanFile),
                                   MigPlanJson(report).dump(2) + "\n");
}

core::Result<MigPlanReport> ReadMigPlanDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return core::Fail(core::Error::NotFound(fmt::format("{}: no such directory", dir)));
  }
  const std::string path = fmt::format("{}/{}", dir, kMigPlanFile);
  HEADROOM_ASSIGN_OR_RETURN(const json j, format::ReadJsonObject(path));
  format::FieldReader r(path, kMigPlanWriter);
  MigPlanReport report;
  const json& in = r.Object(j, "inputs", "");
  report.inputs = {.jobs_file = r.Text(in, "jobs_file", "inputs."),
                   .power_limit_w = r.Number(in, "power_limit_w", "inputs."),
                   .objective = r.Text(in, "objective", "inputs."),
                   .makespan_bound_s = r.OptionalNumber(in, "makespan_bound_s", "inputs."),
                   .version = r.Text(in, "version", "inputs."),
                   .geometry = ReadGeometry(r, r.Object(in, "mig", "inputs."), "inputs.mig.")};
  report.jobs = r.Count<int>(in, "jobs", "inputs.");
  report.layouts_considered = r.Count<int>(j, "layouts_considered", "");
  report.schedules_evaluated = r.Count<long>(j, "schedules_evaluated", "");
  std::optional<core::Error> invalid;
  const int slices = report.inputs.geometry.memory_slices;
  report.plan = ReadOption(r, r.Object(j, "plan", ""), "plan.", slices, invalid, path);
  for (const MigJobRun& job : report.plan.jobs) report.why.push_back(job.explanation);
  for (const char* key : {"baselines", "layouts"}) {
    const json& list = r.List(j, key, "");
    auto& into = std::string(key) == "baselines" ? report.baselines : report.layouts;
    for (std::size_t i = 0; i < list.size(); ++i) {
      into.push_back(ReadOption(r, list[i], fmt::format("{}[{}].", key, i), slices, invalid, path));
    }
  }
  if (r.error()) return core::Fail(*r.error());
  if (invalid) return core::Fail(*invalid);
  return report;
}

}  // namespace headroom::report
