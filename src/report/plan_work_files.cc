#include "report/plan_work_files.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "core/files.h"
#include "format/json_fields.h"
#include "report/simulation_report.h"

namespace headroom::report {
namespace {

// Each file says what it is: a file of another kind, or of a later format, is refused by name.
constexpr const char* kUnitFormat = "headroom plan work unit 2";
constexpr const char* kResultFormat = "headroom plan work result 2";
constexpr const char* kWriter = "headroom plan --executor";

constexpr auto kJobFields = std::tuple{
    format::Field("policy", &sim::Job::policy), format::Field("servers", &sim::Job::servers),
    format::Field("week", &sim::Job::week), format::Field("whole", &sim::Job::whole)};

constexpr auto kRunFields = std::tuple{format::Field("job", &sim::Run::job, kJobFields),
                                       format::Field("stops", &sim::Run::stops)};

constexpr auto kPowerWindowFields = std::tuple{format::Field("start_s", &sim::PowerWindow::start_s),
                                               format::Field("mean_w", &sim::PowerWindow::mean_w),
                                               format::Field("max_w", &sim::PowerWindow::max_w)};

// A plan's run in full: plan.json's fields and the row power a report draws of it.
constexpr auto kWorkSummaryFields =
    std::tuple_cat(kPlanRunFields,
                   std::tuple{format::Field("power_window_s", &sim::RunSummary::power_window_s),
                              format::Field("brake_s", &sim::RunSummary::brake_s),
                              format::Field("power", &sim::RunSummary::power, kPowerWindowFields)});

constexpr auto kOutcomeFields =
    std::tuple{format::Field("summary", &sim::Outcome::summary, kWorkSummaryFields),
               format::Field("quiet", &sim::Outcome::quiet)};

constexpr auto kResultFields = std::tuple{
    format::Field("plan_id", &WorkResult::plan_id), format::Field("task", &WorkResult::task),
    format::Field("runs", &WorkResult::runs, kRunFields),
    format::Field("outcomes", &WorkResult::outcomes, kOutcomeFields)};

core::Status WriteJson(const std::string& path, const nlohmann::ordered_json& j) {
  return core::WriteFileAtomically(path, j.dump(1) + "\n");
}

core::Result<nlohmann::json> ReadFormat(const std::string& path, const char* format) {
  HEADROOM_ASSIGN_OR_RETURN(nlohmann::json j, format::ReadJsonObject(path));
  const nlohmann::json* f = format::FieldReader::Lookup(j, "format");
  if (f == nullptr || !f->is_string() || f->get<std::string>() != format) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "{}: field 'format' is not \"{}\" (the file `{}` writes)", path, format, kWriter)));
  }
  return j;
}

}  // namespace

int TaskCount(const WorkUnit& unit) {
  const auto k = static_cast<std::size_t>(std::max(1, unit.runs_per_task));
  return static_cast<int>((unit.runs.size() + k - 1) / k);
}

std::pair<std::size_t, std::size_t> TaskRuns(const WorkUnit& unit, int task) {
  const auto k = static_cast<std::size_t>(std::max(1, unit.runs_per_task));
  const std::size_t first = std::min(unit.runs.size(), static_cast<std::size_t>(task) * k);
  return {first, std::min(unit.runs.size(), first + k)};
}

core::Status WriteWorkUnit(const std::string& path, const WorkUnit& unit) {
  nlohmann::ordered_json j{{"format", kUnitFormat}, {"plan_id", unit.plan_id}};
  j["request"] = unit.request;
  j["runs"] = format::TableJson(unit.runs, kRunFields);
  j["runs_per_task"] = unit.runs_per_task;
  return WriteJson(path, j);
}

core::Result<WorkUnit> ReadWorkUnit(const std::string& path) {
  HEADROOM_ASSIGN_OR_RETURN(const nlohmann::json j, ReadFormat(path, kUnitFormat));
  format::FieldReader r(path, kWriter);
  WorkUnit unit{.plan_id = r.Text(j, "plan_id", ""),
                .request = r.Object(j, "request", ""),
                .runs = {},
                .runs_per_task = r.Count<int>(j, "runs_per_task", "")};
  if (!r.error() && unit.runs_per_task < 1) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{}: field 'runs_per_task' is 0 (expected at least 1; the file `{}` writes)",
                    path, kWriter)));
  }
  const nlohmann::json& runs = r.List(j, "runs", "");
  for (std::size_t i = 0; !r.error() && i < runs.size(); ++i) {
    sim::Run run;
    format::ReadFields(r, runs[i], fmt::format("runs[{}].", i), run, kRunFields);
    unit.runs.push_back(std::move(run));
  }
  if (r.error()) return core::Fail(*r.error());
  return unit;
}

core::Status WriteWorkResult(const std::string& path, const WorkResult& result) {
  nlohmann::ordered_json j{{"format", kResultFormat}};
  format::WriteFields(j, result, kResultFields);
  return WriteJson(path, j);
}

core::Result<WorkResult> ReadWorkResult(const std::string& path) {
  HEADROOM_ASSIGN_OR_RETURN(const nlohmann::json j, ReadFormat(path, kResultFormat));
  format::FieldReader r(path, kWriter);
  WorkResult result;
  format::ReadFields(r, j, "", result, kResultFields);
  if (r.error()) return core::Fail(*r.error());
  return result;
}

}  // namespace headroom::report
