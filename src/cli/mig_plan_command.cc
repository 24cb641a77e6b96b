// `headroom mig plan JOBS.yaml`: the MIG layout and job assignment that minimize energy (or
// makespan) for a set of training jobs on one GPU, beside the baselines (docs/mig.md).
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/mig_catalog.h"
#include "app/mig_plan.h"
#include "cli/commands.h"
#include "console/terminal.h"
#include "report/mig_plan_report.h"
#include "report/mig_workloads_report.h"

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

int RunMigPlan(const GlobalOptions& global, const MigPlanOptions& o) {
  const std::string out = o.out.empty() && o.report ? kDefaultMigPlanDir : o.out;
  auto planned = app::MigPlan({.catalog_dir = global.catalog_dir,
                               .file = o.file,
                               .objective = o.objective,
                               .makespan_bound = o.makespan_bound,
                               .layouts = o.layouts,
                               .out_dir = out,
                               .report = o.report,
                               .version = HEADROOM_VERSION,
                               .on_warning = PrintWarning});
  if (!planned) return ReportError(planned.error());
  return PrintResult(
      {.json = o.json,
       .json_text = report::MigPlanJson(planned->plan).dump(2),
       .text = report::MigPlanText(planned->plan, StdoutStyle()),
       .wrote = out.empty() ? "" : fmt::format("wrote {}/{}\n", out, report::kMigPlanFile),
       .report = planned->report_path});
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
