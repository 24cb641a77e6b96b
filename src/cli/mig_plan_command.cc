// `headroom mig plan JOBS.yaml`: the MIG layout and job assignment that minimize energy (or
// makespan) for a set of training jobs on one GPU, beside the baselines (docs/mig.md).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "app/mig_catalog.h"
#include "catalog/mig_plan_file.h"
#include "cli/commands.h"
#include "console/terminal.h"
#include "core/files.h"
#include "core/parse.h"
#include "mig/planner.h"
#include "report/mig_plan_html.h"
#include "report/mig_plan_report.h"
#include "report/mig_workloads_report.h"
#include "report/result_dir.h"

namespace headroom::cli {
namespace {

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

// The jobs file with the command line's overrides; errors name the file or the option.
core::Result<catalog::MigPlanInput> ReadMigPlanInput(const GlobalOptions& global,
                                                     const MigPlanOptions& o) {
  HEADROOM_ASSIGN_OR_RETURN(const std::string text, core::ReadFile(o.file));
  HEADROOM_ASSIGN_OR_RETURN(catalog::MigCatalogs catalogs,
                            app::LoadMigCatalogs(global.catalog_dir));
  HEADROOM_ASSIGN_OR_RETURN(
      catalog::MigPlanInput input,
      catalog::ParseMigPlanFile(text, o.file, catalogs.hardware, catalogs.mig, catalogs.workloads));
  if (o.objective == "makespan") input.request.objective = mig::Objective::kMakespan;
  if (o.objective == "energy") input.request.objective = mig::Objective::kEnergy;
  if (!o.makespan_bound.empty()) {
    auto bound = core::ParseDuration(o.makespan_bound);
    if (!bound) return core::Fail(bound.error().WithContext("--makespan-bound"));
    input.request.makespan_bound_s = core::ToSeconds(*bound);
  }
  for (const std::string& layout_text : o.layouts) {
    auto layout = mig::ParseLayout(layout_text);
    if (!layout) return core::Fail(layout.error().WithContext("--layout"));
    input.request.extra_layouts.push_back(*layout);
  }
  return input;
}

int RunMigPlan(const GlobalOptions& global, const MigPlanOptions& o) {
  auto input = ReadMigPlanInput(global, o);
  if (!input) return ReportError(input.error());
  auto result = mig::Plan(input->model, input->request);
  if (!result) return ReportError(result.error().WithContext(o.file));
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
  std::optional<std::string> report_path;
  if (!out.empty()) {
    if (auto st = report::WriteMigPlanDir(out, data); !st) return ReportError(st.error());
  }
  if (o.report) {
    auto written = WriteReport(report::ResultKind::kMigPlan, out);
    if (!written) return ReportError(written.error());
    report_path = *written;
  }
  return PrintResult(
      {.json = o.json,
       .json_text = report::MigPlanJson(data).dump(2),
       .text = report::MigPlanText(data, StdoutStyle()),
       .wrote = out.empty() ? "" : fmt::format("wrote {}/{}\n", out, report::kMigPlanFile),
       .report = report_path});
}

struct MigWorkloadsOptions {
  std::string gpu = "h200";
  bool json = false;
};

// The measured workloads and what the slice model derives from them, with the predicted rate of
// each on the GPU's smallest and largest instance.
int RunMigWorkloads(const GlobalOptions& global, const MigWorkloadsOptions& o) {
  auto workloads = app::MigWorkloads({.catalog_dir = global.catalog_dir, .gpu = o.gpu});
  if (!workloads) return ReportError(workloads.error());
  if (o.json) {
    std::cout << report::MigWorkloadsJson(workloads->summary, workloads->reference_gpu).dump(2)
              << "\n";
  } else {
    std::cout << report::MigWorkloadsText(workloads->summary, workloads->reference_gpu,
                                          StdoutStyle());
  }
  return kExitOk;
}

}  // namespace

void AddMigWorkloads(CLI::App* mig, const GlobalOptions& global, RunFunction* run) {
  CLI::App* cmd = mig->add_subcommand(
      "workloads", "The measured training workloads and what the slice model derives from them");
  auto* o = OptionsRunBy(cmd, run, global, RunMigWorkloads);
  cmd->add_option("--gpu", o->gpu, "GPU type to model them on")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print as JSON");
}

void AddMigPlan(CLI::App* mig, const GlobalOptions& global, RunFunction* run) {
  CLI::App* plan = mig->add_subcommand(
      "plan", "Plan MIG partitions for a set of training jobs (least energy or makespan)");
  auto* o = OptionsRunBy(plan, run, global, RunMigPlan);
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
}

}  // namespace headroom::cli
