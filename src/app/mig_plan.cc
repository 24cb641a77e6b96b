#include "app/mig_plan.h"

#include "app/context.h"
#include "catalog/mig_plan_file.h"
#include "core/files.h"
#include "core/parse.h"
#include "mig/planner.h"
#include "report/mig_instances.h"
#include "report/result_dir.h"

namespace headroom::app {
namespace {

// The jobs file with the command line's overrides; errors name the file or the option.
core::Result<catalog::MigPlanInput> ReadMigPlanInput(const MigPlanRequest& r) {
  HEADROOM_ASSIGN_OR_RETURN(const std::string text, core::ReadFile(r.file));
  HEADROOM_ASSIGN_OR_RETURN(const catalog::MigCatalogs catalogs, LoadMigCatalogs(r.catalog_dir));
  HEADROOM_ASSIGN_OR_RETURN(
      catalog::MigPlanInput input,
      catalog::ParseMigPlanFile(text, r.file, catalogs.hardware, catalogs.mig, catalogs.workloads));
  if (r.objective == "makespan") input.request.objective = mig::Objective::kMakespan;
  if (r.objective == "energy") input.request.objective = mig::Objective::kEnergy;
  if (!r.makespan_bound.empty()) {
    auto bound = core::ParseDuration(r.makespan_bound);
    if (!bound) return core::Fail(bound.error().WithContext("--makespan-bound"));
    input.request.makespan_bound_s = core::ToSeconds(*bound);
  }
  for (const std::string& layout_text : r.layouts) {
    auto layout = mig::ParseLayout(layout_text);
    if (!layout) return core::Fail(layout.error().WithContext("--layout"));
    input.request.extra_layouts.push_back(*layout);
  }
  return input;
}

}  // namespace

core::Result<MigPlanResult> MigPlan(const MigPlanRequest& request) {
  HEADROOM_ASSIGN_OR_RETURN(const catalog::MigPlanInput input, ReadMigPlanInput(request));
  auto planned = mig::Plan(input.model, input.request);
  if (!planned) return core::Fail(planned.error().WithContext(request.file));
  MigPlanResult result{
      .plan = report::MigPlanReportOf(
          *planned,
          {.jobs_file = request.file,
           .power_limit_w = input.model.power_limit().value(),
           .objective = input.request.objective == mig::Objective::kEnergy ? "energy" : "makespan",
           .makespan_bound_s = input.request.makespan_bound_s,
           .version = request.version,
           .geometry = report::GeometryOf(input.model.mig())},
          static_cast<int>(input.request.jobs.size()))};
  if (!request.out_dir.empty()) {
    HEADROOM_RETURN_IF_ERROR(report::WriteMigPlanDir(request.out_dir, result.plan));
  }
  if (request.report) {
    HEADROOM_ASSIGN_OR_RETURN(result.report_path, WriteReport(report::ResultKind::kMigPlan,
                                                              request.out_dir, request.on_warning));
  }
  return result;
}

}  // namespace headroom::app
