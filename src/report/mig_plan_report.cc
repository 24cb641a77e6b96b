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

bool Feasible(const MigOption& o) { return o.feasible; }
bool Infeasible(const MigOption& o) { return !o.feasible; }

constexpr auto kMigJobRunFields =
    std::tuple{format::Field("job", &MigJobRun::job),
               format::Field("instance", &MigJobRun::instance),
               format::Field("slice", &MigJobRun::slice),
               format::Field("start_s", &MigJobRun::start_s),
               format::Field("end_s", &MigJobRun::end_s),
               format::Field("samples_per_s", &MigJobRun::samples_per_s),
               format::Field("energy_j", &MigJobRun::energy_j),
               format::Field("energy_sm_share_j", &MigJobRun::energy_sm_share_j),
               format::Field("meets_deadline", &MigJobRun::meets_deadline),
               format::Field("explanation", &MigJobRun::explanation)};

// An infeasible option has its reason and instances only.
constexpr auto kMigOptionFields = std::tuple{
    format::Field("name", &MigOption::name),
    format::Field("layout", &MigOption::layout),
    format::Field("feasible", &MigOption::feasible),
    format::When(&Infeasible, std::tuple{format::Field("reason", &MigOption::reason)}),
    format::When(
        &Feasible,
        std::tuple{format::Field("energy_j", &MigOption::energy_j),
                   format::Field("makespan_s", &MigOption::makespan_s),
                   format::Field("samples_per_s", &MigOption::samples_per_s),
                   format::Field("samples_per_j", &MigOption::samples_per_j),
                   format::Field("energy_vs_whole_gpu", &MigOption::energy_vs_whole_gpu,
                                 {.omit_empty = true}),
                   format::Field("throughput_vs_whole_gpu", &MigOption::throughput_vs_whole_gpu,
                                 {.omit_empty = true}),
                   format::Field("meets_bound", &MigOption::meets_bound),
                   format::Field("overrun_s", &MigOption::overrun_s),
                   format::Field("unattributed_idle_j", &MigOption::unattributed_j)}),
    format::Field("instances", &MigOption::instances, kMigInstanceFields),
    format::When(&Feasible, std::tuple{format::Field("jobs", &MigOption::jobs, kMigJobRunFields)})};

using MigPlanIn = MigPlanInputs;
using MigPlanOut = MigPlanReport;

// The top level repeats some inputs for the file's readers; headroom reads them under "inputs".
constexpr auto kMigPlanFileFields = std::tuple{
    format::Computed<MigPlanOut>("gpu", [](const MigPlanOut& r) { return r.inputs.geometry.gpu; }),
    format::Computed<MigPlanOut>("power_limit_w",
                                 [](const MigPlanOut& r) { return r.inputs.power_limit_w; }),
    format::Computed<MigPlanOut>("objective",
                                 [](const MigPlanOut& r) { return r.inputs.objective; }),
    format::Computed<MigPlanOut>("makespan_bound_s",
                                 [](const MigPlanOut& r) { return r.inputs.makespan_bound_s; }),
    format::Field("layouts_considered", &MigPlanOut::layouts_considered),
    format::Field("schedules_evaluated", &MigPlanOut::schedules_evaluated),
    format::Field("plan", &MigPlanOut::plan, kMigOptionFields),
    format::Field("baselines", &MigPlanOut::baselines, kMigOptionFields),
    format::Field("layouts", &MigPlanOut::layouts, kMigOptionFields),
    format::Group<MigPlanOut>(
        "inputs",
        std::tuple{
            format::Inline(&MigPlanOut::inputs,
                           std::tuple{format::Field("jobs_file", &MigPlanIn::jobs_file)}),
            format::Field("jobs", &MigPlanOut::jobs),
            format::Inline(
                &MigPlanOut::inputs,
                std::tuple{format::Field("power_limit_w", &MigPlanIn::power_limit_w),
                           format::Field("objective", &MigPlanIn::objective),
                           format::Field("makespan_bound_s", &MigPlanIn::makespan_bound_s),
                           format::Field("version", &MigPlanIn::version),
                           format::Field("mig", &MigPlanIn::geometry, kMigGeometryFields)})})};

// `o` with what the file holds beside it: its changes against `reference` and its jobs' slices.
MigOption WithComparisons(MigOption o, const MigOption* reference) {
  if (o.feasible && reference != nullptr) {
    o.energy_vs_whole_gpu = o.energy_j / reference->energy_j - 1;
    o.throughput_vs_whole_gpu = o.samples_per_s / reference->samples_per_s - 1;
  } else {
    o.energy_vs_whole_gpu.reset();
    o.throughput_vs_whole_gpu.reset();
  }
  for (MigJobRun& job : o.jobs) {
    if (job.instance >= 0 && job.instance < static_cast<int>(o.instances.size())) {
      job.slice = o.instances[job.instance].slice;
    }
  }
  return o;
}

// The first instance outside the GPU's memory slices or job on an instance the option lacks.
std::optional<core::Error> CheckOption(const MigOption& o, const std::string& at, int memory_slices,
                                       const std::string& path) {
  for (std::size_t i = 0; i < o.instances.size(); ++i) {
    const MigInstance& in = o.instances[i];
    if (in.memory_slices < 1 || in.start + in.memory_slices > memory_slices) {
      return core::Error::InvalidArgument(fmt::format(
          "{}: field '{}instances[{}].start' and 'memory_slices' place the instance outside the "
          "GPU's {} memory slices",
          path, at, i, memory_slices));
    }
  }
  for (std::size_t k = 0; k < o.jobs.size(); ++k) {
    if (o.jobs[k].instance >= static_cast<int>(o.instances.size())) {
      return core::Error::InvalidArgument(
          fmt::format("{}: field '{}jobs[{}].instance' is {}, but the option has {} instances",
                      path, at, k, o.jobs[k].instance, o.instances.size()));
    }
  }
  return std::nullopt;
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

ordered_json MigPlanJson(const MigPlanReport& report) {
  MigPlanReport r = report;
  const MigOption* reference = report.Reference();
  r.plan = WithComparisons(r.plan, reference);
  for (MigOption& b : r.baselines) b = WithComparisons(b, reference);
  for (MigOption& l : r.layouts) l = WithComparisons(l, reference);
  ordered_json j = ordered_json::object();
  format::WriteFields(j, r, kMigPlanFileFields);
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
  format::ReadFields(r, j, "", report, kMigPlanFileFields);
  if (r.error()) return core::Fail(*r.error());
  const int slices = report.inputs.geometry.memory_slices;
  std::optional<core::Error> invalid = CheckOption(report.plan, "plan.", slices, path);
  for (const auto& [key, list] :
       {std::pair{"baselines", &report.baselines}, std::pair{"layouts", &report.layouts}}) {
    for (std::size_t i = 0; i < list->size() && !invalid; ++i) {
      invalid = CheckOption((*list)[i], fmt::format("{}[{}].", key, i), slices, path);
    }
  }
  if (invalid) return core::Fail(*invalid);
  for (const MigJobRun& job : report.plan.jobs) report.why.push_back(job.explanation);
  return report;
}

}  // namespace headroom::report
