#include "catalog/mig_plan_file.h"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/yaml_reader.h"

namespace headroom::catalog {
namespace {

using core::Fail;
using core::Result;
using core::YamlReader;

Result<std::vector<mig::PlanJob>> ParseJob(const YamlReader& j, const MigTrainingCatalog& workloads,
                                           const model::GpuSpec& reference,
                                           std::set<std::string>& names) {
  HEADROOM_RETURN_IF_ERROR(j.CheckKnownKeys(
      {"name", "workload", "samples", "epochs", "batch", "deadline_s", "priority", "count"}));
  mig::PlanJob job;
  HEADROOM_ASSIGN_OR_RETURN(std::string workload_name, j.String("workload"));
  auto workload = workloads.Workload(workload_name);
  if (!workload) return Fail(j.ErrorAt("workload", workload.error().message()));
  job.workload = *workload;
  HEADROOM_ASSIGN_OR_RETURN(std::optional<std::string> name, j.OptionalString("name"));
  job.name = name.value_or(workload_name);
  auto fit = mig::FitWorkload(job.workload, reference, workloads.reference_idle_w());
  if (!fit) return Fail(j.ErrorAt("workload", fit.error().message()));
  job.fit = *fit;
  if (j.Has("samples") == j.Has("epochs")) {
    return Fail(j.ErrorAt("", "give exactly one of samples and epochs"));
  }
  if (j.Has("samples")) {
    HEADROOM_ASSIGN_OR_RETURN(job.samples, j.NumberIn("samples", 1, 1e15));
  } else {
    HEADROOM_ASSIGN_OR_RETURN(double epochs, j.NumberIn("epochs", 1e-6, 1e6));
    job.samples = epochs * job.workload.samples_per_epoch;
  }
  HEADROOM_ASSIGN_OR_RETURN(std::optional<double> batch, j.OptionalNumber("batch"));
  job.batch = job.workload.default_batch;
  if (batch) {
    if (*batch < 1 || *batch > 65536 || *batch != std::floor(*batch)) {
      return Fail(j.ErrorAt("batch", "expected a whole number in [1, 65536]"));
    }
    job.batch = static_cast<int>(*batch);
  }
  if (j.Has("deadline_s")) {
    HEADROOM_ASSIGN_OR_RETURN(double deadline, j.NumberIn("deadline_s", 1e-3, 1e9));
    job.deadline_s = deadline;
  }
  if (j.Has("priority")) {
    HEADROOM_ASSIGN_OR_RETURN(double priority, j.NumberIn("priority", -1000, 1000));
    job.priority = static_cast<int>(priority);
  }
  int count = 1;
  if (j.Has("count")) {
    HEADROOM_ASSIGN_OR_RETURN(double c, j.NumberIn("count", 1, 64));
    count = static_cast<int>(c);
  }
  std::vector<mig::PlanJob> out;
  for (int i = 0; i < count; ++i) {
    mig::PlanJob copy = job;
    if (count > 1) copy.name = fmt::format("{}#{}", job.name, i + 1);
    if (!names.insert(copy.name).second) {
      return Fail(j.ErrorAt("name", fmt::format("job name '{}' appears twice", copy.name)));
    }
    out.push_back(std::move(copy));
  }
  return out;
}

}  // namespace

Result<mig::SliceModel> MakeSliceModel(std::string_view gpu, std::optional<double> power_limit_w,
                                       const HardwareCatalog& hardware,
                                       const MigCatalog& mig_catalog,
                                       const MigTrainingCatalog& workloads) {
  HEADROOM_ASSIGN_OR_RETURN(const mig::GpuMigSpec* mig_spec, mig_catalog.Find(gpu, hardware));
  HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec* spec, hardware.Gpu(mig_spec->name));
  HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec* reference,
                            hardware.Gpu(workloads.reference_gpu()));
  const double limit = power_limit_w.value_or(spec->power_limit_default.value());
  if (limit < spec->power_limit_min.value() || limit > spec->power_limit_max.value()) {
    return Fail(core::Error::OutOfRange(
        fmt::format("power limit {} W is outside {}'s [{}, {}] W", limit, spec->name,
                    spec->power_limit_min.value(), spec->power_limit_max.value())));
  }
  return mig::SliceModel(*spec, *reference, *mig_spec, core::Watts(limit));
}

Result<MigPlanInput> ParseMigPlanFile(std::string_view text, const std::string& source,
                                      const HardwareCatalog& hardware,
                                      const MigCatalog& mig_catalog,
                                      const MigTrainingCatalog& workloads) {
  HEADROOM_ASSIGN_OR_RETURN(YamlReader doc, YamlReader::Parse(text, source));
  HEADROOM_RETURN_IF_ERROR(doc.CheckKnownKeys(
      {"gpu", "power_limit_w", "objective", "makespan_bound_s", "profiles", "jobs"}));
  HEADROOM_ASSIGN_OR_RETURN(std::string gpu, doc.String("gpu"));
  HEADROOM_ASSIGN_OR_RETURN(std::optional<double> limit, doc.OptionalNumber("power_limit_w"));
  auto model = MakeSliceModel(gpu, limit, hardware, mig_catalog, workloads);
  if (!model) {
    return Fail(doc.ErrorAt(
        limit && model.error().code() == core::Code::kOutOfRange ? "power_limit_w" : "gpu",
        model.error().message()));
  }
  mig::PlanRequest request;
  HEADROOM_ASSIGN_OR_RETURN(std::optional<std::string> objective, doc.OptionalString("objective"));
  if (objective && *objective == "makespan") {
    request.objective = mig::Objective::kMakespan;
  } else if (objective && *objective != "energy") {
    return Fail(
        doc.ErrorAt("objective", fmt::format("'{}' is not energy or makespan", *objective)));
  }
  if (doc.Has("makespan_bound_s")) {
    HEADROOM_ASSIGN_OR_RETURN(double bound, doc.NumberIn("makespan_bound_s", 1e-3, 1e9));
    request.makespan_bound_s = bound;
  }
  if (doc.Has("profiles")) {
    HEADROOM_ASSIGN_OR_RETURN(request.profile_classes, doc.StringList("profiles"));
    for (const std::string& p : request.profile_classes) {
      if (model->mig().FindProfileOrClass(p) == nullptr) {
        return Fail(doc.ErrorAt("profiles",
                                fmt::format("profile '{}' is not on {}", p, model->mig().name)));
      }
    }
  }
  HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec* reference,
                            hardware.Gpu(workloads.reference_gpu()));
  HEADROOM_ASSIGN_OR_RETURN(std::vector<YamlReader> jobs, doc.MapList("jobs"));
  if (jobs.empty()) return Fail(doc.ErrorAt("jobs", "no jobs"));
  std::set<std::string> names;
  for (const YamlReader& j : jobs) {
    HEADROOM_ASSIGN_OR_RETURN(std::vector<mig::PlanJob> parsed,
                              ParseJob(j, workloads, *reference, names));
    for (mig::PlanJob& job : parsed) request.jobs.push_back(std::move(job));
  }
  return MigPlanInput{.model = std::move(*model), .request = std::move(request)};
}

}  // namespace headroom::catalog
