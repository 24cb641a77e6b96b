// `headroom mig plan JOBS.yaml`: the MIG layout and job assignment that minimize energy (or
// makespan) for a set of training jobs on one GPU, beside the baselines (docs/mig.md).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/mig_plan_file.h"
#include "cli/commands.h"
#include "cli/mig_catalogs.h"
#include "cli/terminal.h"
#include "core/files.h"
#include "core/parse.h"
#include "mig/planner.h"
#include "report/mig_plan_html.h"
#include "report/mig_plan_report.h"
#include "report/result_dir.h"
#include "report/table.h"

namespace headroom::cli {
namespace {

using nlohmann::ordered_json;

struct MigPlanOptions {
  std::string file;
  std::string objective;             // empty: the file's
  std::string makespan_bound;        // empty: the file's
  std::vector<std::string> layouts;  // to score beside the baselines
  bool json = false;
  std::string out;      // write mig-plan.json here
  bool report = false;  // and report.html
};

// Where `mig plan --report` writes when no --out is given.
constexpr const char* kDefaultMigPlanDir = "headroom-mig-plan";

std::string LayoutText(const mig::PlanOption& o) {
  return o.layout ? mig::FormatLayout(*o.layout) : std::string("MIG off");
}

// Writes DIR/mig-plan.json and, with --report, DIR/report.html built from it; returns the
// report's path, or "" without --report.
core::Result<std::string> WriteMigPlanOut(const report::MigPlanReport& data, const std::string& out,
                                          bool html) {
  HEADROOM_RETURN_IF_ERROR(report::WriteMigPlanDir(out, data));
  if (!html) return std::string();
  HEADROOM_ASSIGN_OR_RETURN(report::WrittenReport written,
                            report::WriteResultReport(report::ResultKind::kMigPlan, out));
  for (const std::string& warning : written.warnings) {
    PrintWarning(warning);
  }
  return written.path;
}

int RunMigPlan(const GlobalOptions& global, const MigPlanOptions& o) {
  auto text = core::ReadFile(o.file);
  if (!text) return ReportError(text.error());
  auto catalogs = LoadMigCatalogs(global);
  if (!catalogs) return ReportError(catalogs.error());
  auto input = catalog::ParseMigPlanFile(*text, o.file, catalogs->hardware, catalogs->mig,
                                         catalogs->workloads);
  if (!input) return ReportError(input.error());
  if (o.objective == "makespan") input->request.objective = mig::Objective::kMakespan;
  if (o.objective == "energy") input->request.objective = mig::Objective::kEnergy;
  if (!o.makespan_bound.empty()) {
    auto bound = core::ParseDuration(o.makespan_bound);
    if (!bound) return ReportError(bound.error().WithContext("--makespan-bound"));
    input->request.makespan_bound_s = core::ToSeconds(*bound);
  }
  for (const std::string& text : o.layouts) {
    auto layout = mig::ParseLayout(text);
    if (!layout) return ReportError(layout.error().WithContext("--layout"));
    input->request.extra_layouts.push_back(*layout);
  }
  auto result = mig::Plan(input->model, input->request);
  if (!result) return ReportError(result.error().WithContext(o.file));
  const mig::PlanOption& whole = result->baselines.front();
  const report::MigPlanReport data = report::MigPlanReportOf(
      *result,
      {.jobs_file = o.file,
       .power_limit_w = input->model.power_limit().value(),
       .objective = input->request.objective == mig::Objective::kEnergy ? "energy" : "makespan",
       .makespan_bound_s = input->request.makespan_bound_s,
       .version = HEADROOM_VERSION,
       .geometry = report::GeometryOf(input->model.mig())},
      static_cast<int>(input->request.jobs.size()));
  const std::string out = o.out.empty() && o.report ? kDefaultMigPlanDir : o.out;
  std::string report_path;
  if (!out.empty()) {
    auto written = WriteMigPlanOut(data, out, o.report);
    if (!written) return ReportError(written.error());
    report_path = *written;
  }
  const std::string objective =
      input->request.objective == mig::Objective::kEnergy ? "least energy" : "shortest makespan";
  const std::string bound =
      input->request.makespan_bound_s
          ? fmt::format(", makespan at most {:.0f} s", *input->request.makespan_bound_s)
          : "";
  if (o.json) {
    std::cout << report::MigPlanJson(data).dump(2) << "\n";
    if (!report_path.empty()) std::fprintf(stderr, "report: %s\n", report_path.c_str());
    return kExitOk;
  }
  std::cout << StdoutStyle().Bold(
                   fmt::format("MIG plan for {} jobs on {} (power limit {:.0f} W): {}{}",
                               input->request.jobs.size(), input->model.mig().name,
                               input->model.power_limit().value(), objective, bound))
            << "\n";
  using Align = report::TextTable::Align;
  report::TextTable table({{"OPTION", Align::kLeft},
                           {"LAYOUT", Align::kLeft},
                           {"ENERGY_KJ"},
                           {"MAKESPAN_S"},
                           {"SAMPLES/S"},
                           {"SAMPLES/J"},
                           {"ENERGY_VS_WHOLE"},
                           {"THROUGHPUT_VS_WHOLE"},
                           {"NOTE", Align::kLeft}});
  const report::TextStyle style = StdoutStyle();
  auto add = [&](const mig::PlanOption& opt, report::Tone tone) {
    if (!opt.feasible) {
      table.AddRow({opt.name, LayoutText(opt), "-", "-", "-", "-", "-", "-",
                    style.Red("infeasible: " + opt.infeasible_reason)},
                   tone);
      return;
    }
    const bool vs = whole.feasible;
    table.AddRow(
        {opt.name, LayoutText(opt), fmt::format("{:.1f}", opt.energy_j / 1e3),
         fmt::format("{:.0f}", opt.makespan_s), fmt::format("{:.1f}", opt.samples_per_s),
         fmt::format("{:.3f}", opt.samples_per_j),
         vs ? report::FormatChange(opt.energy_j / whole.energy_j - 1) : "-",
         vs ? report::FormatChange(opt.samples_per_s / whole.samples_per_s - 1) : "-",
         opt.meets_bound
             ? ""
             : style.Red(fmt::format("misses the bound or a deadline by {:.0f} s", opt.overrun_s))},
        tone);
  };
  add(result->best, report::Tone::kGreen);
  for (const mig::PlanOption& b : result->baselines) add(b, report::Tone::kPlain);
  for (const mig::PlanOption& e : result->extra) add(e, report::Tone::kPlain);
  std::cout << table.Render(style);
  std::cout << "\nWhy (planned):\n";
  for (const mig::JobOutcome& job : result->best.jobs) std::cout << "  " << job.explanation << "\n";
  std::cout << fmt::format(
      "\n{} partitions searched, {} schedules evaluated. Energy per job: idle power by SM share, "
      "dynamic power by activity; {:.1f} kJ of idle power falls on instances with no job left.\n",
      result->layouts_considered, result->schedules_evaluated, result->best.unattributed_j / 1e3);
  if (!out.empty()) std::cout << fmt::format("wrote {}/{}\n", out, report::kMigPlanFile);
  if (!report_path.empty()) std::cout << fmt::format("report: {}\n", report_path);
  return kExitOk;
}

struct MigWorkloadsOptions {
  std::string gpu = "h200";
  bool json = false;
};

// The measured workloads and what the slice model derives from them, with the predicted rate of
// each on the GPU's smallest and largest instance.
int RunMigWorkloads(const GlobalOptions& global, const MigWorkloadsOptions& o) {
  auto catalogs = LoadMigCatalogs(global);
  if (!catalogs) return ReportError(catalogs.error());
  auto model = catalogs->Model(o.gpu, std::nullopt);
  if (!model) return ReportError(model.error());
  const mig::Slice whole = mig::WholeGpuSlice(model->gpu(), model->mig());
  const mig::GiProfile& smallest = model->mig().profiles.front();
  const mig::Slice small = mig::InstanceSlice(smallest, smallest.starts.front());
  using Align = report::TextTable::Align;
  report::TextTable table({{"WORKLOAD", Align::kLeft},
                           {"BATCH"},
                           {"HOST_MS"},
                           {"OPT_MS"},
                           {"PER_SAMPLE_MS"},
                           {"COMPUTE_SHARE"},
                           {"MEMORY_GIB"},
                           {"J/SAMPLE"},
                           {"FIXED_J"},
                           {"FIT_ERR_W"},
                           {"WHOLE_SAMPLES/S"},
                           {fmt::format("{}_SAMPLES/S", smallest.name)}});
  ordered_json list = ordered_json::array();
  for (const mig::MeasuredWorkload& w : catalogs->workloads.workloads()) {
    auto fit = catalogs->Fit(w);
    if (!fit) return ReportError(fit.error());
    const int b = w.default_batch;
    const core::Megahertz f = model->gpu().sm_clock_max;
    const double whole_rate = b / model->IterationSeconds(*fit, b, whole, f);
    const bool fits_small = model->Fits(*fit, b, small);
    const double small_rate = b / model->IterationSeconds(*fit, b, small, f);
    table.AddRow({w.name, std::to_string(b), fmt::format("{:.2f}", fit->host_s * 1e3),
                  fmt::format("{:.2f}", fit->optimizer_s * 1e3),
                  fmt::format("{:.4f}", fit->per_sample_s * 1e3),
                  fmt::format("{:.2f}", fit->compute_share),
                  fmt::format("{:.1f}", model->FootprintGib(*fit, b)),
                  fmt::format("{:.3f}", fit->energy_per_sample_j),
                  fmt::format("{:.2f}", fit->fixed_energy_j),
                  fmt::format("{:.0f}", fit->power_fit_error_w), fmt::format("{:.1f}", whole_rate),
                  fits_small ? fmt::format("{:.1f}", small_rate) : std::string("OOM")});
    list.push_back({{"workload", w.name},
                    {"batch", b},
                    {"host_s", fit->host_s},
                    {"optimizer_s", fit->optimizer_s},
                    {"per_sample_s", fit->per_sample_s},
                    {"compute_share", fit->compute_share},
                    {"footprint_gib", model->FootprintGib(*fit, b)},
                    {"energy_per_sample_j", fit->energy_per_sample_j},
                    {"fixed_energy_j", fit->fixed_energy_j},
                    {"power_fit_error_w", fit->power_fit_error_w},
                    {"whole_gpu_samples_per_s", whole_rate},
                    {"smallest_instance", smallest.name},
                    {"smallest_instance_samples_per_s",
                     fits_small ? ordered_json(small_rate) : ordered_json(nullptr)}});
  }
  if (o.json) {
    std::cout << ordered_json{{"gpu", model->mig().name},
                              {"reference_gpu", catalogs->workloads.reference_gpu()},
                              {"workloads", list}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << fmt::format(
      "Training workloads measured on {}, modeled on {} (docs/mig.md, \"The slice model\")\n",
      catalogs->workloads.reference_gpu(), model->mig().name);
  std::cout << table.Render(StdoutStyle());
  return kExitOk;
}

}  // namespace

void AddMigWorkloads(CLI::App* mig, const GlobalOptions& global, RunFunction* run) {
  auto o = std::make_shared<MigWorkloadsOptions>();
  CLI::App* cmd = mig->add_subcommand(
      "workloads", "The measured training workloads and what the slice model derives from them");
  cmd->add_option("--gpu", o->gpu, "GPU type to model them on")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print as JSON");
  cmd->callback([run, o, &global] { *run = [o, &global] { return RunMigWorkloads(global, *o); }; });
}

void AddMigPlan(CLI::App* mig, const GlobalOptions& global, RunFunction* run) {
  auto o = std::make_shared<MigPlanOptions>();
  CLI::App* plan = mig->add_subcommand(
      "plan", "Plan MIG partitions for a set of training jobs (least energy or makespan)");
  plan->add_option("jobs", o->file, "YAML file: gpu, jobs (see docs/mig.md)")
      ->required()
      ->check(CLI::ExistingFile);
  plan->add_option("--objective", o->objective,
                   "energy or makespan (default: the file's, else energy)")
      ->check(CLI::IsMember({"energy", "makespan"}));
  plan->add_option("--makespan-bound", o->makespan_bound,
                   "Finish the whole set within this time, e.g. 2h (default: the file's)");
  plan->add_option("--layout", o->layouts,
                   "Also score this layout (repeatable), e.g. 3g.71gb@0,3g.71gb@4");
  plan->add_flag("--json", o->json, "Print the plan and baselines as JSON");
  plan->add_option("--out", o->out,
                   "Write mig-plan.json (what --json prints, plus the inputs) here");
  plan->add_flag("--report", o->report,
                 fmt::format("Also write report.html (self-contained HTML: layouts drawn as "
                             "slots, plots inline) into --out (default {}/) and print its path",
                             kDefaultMigPlanDir));
  plan->callback([run, o, &global] { *run = [o, &global] { return RunMigPlan(global, *o); }; });
}

}  // namespace headroom::cli
