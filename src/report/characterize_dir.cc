#include "report/characterize_dir.h"

#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "core/parse.h"
#include "report/csv_reader.h"
#include "report/json_fields.h"
#include "report/table.h"

namespace headroom::report {
namespace {

using nlohmann::json;

constexpr const char* kCharacterizeWriter = "headroom characterize --out";

CharacterizeInputs ReadInputs(FieldReader& r, const json& j) {
  CharacterizeInputs in;
  in.workload = r.Text(j, "workload", "");
  in.model = r.Text(j, "model", "");
  in.gpu = r.Text(j, "gpu", "");
  in.slo_fraction = r.Number(j, "slo_latency_increase", "");
  const json& i = r.Object(j, "inputs", "");
  const std::string at = "inputs.";
  in.tp = static_cast<int>(r.Count(i, "tp", at));
  in.prompts = r.Text(i, "prompts", at);
  in.batches = r.Text(i, "batches", at);
  in.output = static_cast<int>(r.Count(i, "output", at));
  in.iterations = static_cast<int>(r.Count(i, "iterations", at));
  in.interval = r.Text(i, "interval", at);
  in.version = r.Text(i, "version", at);
  return in;
}

// results.csv: the last row of each setting (the largest shape), in the order settings appear.
core::Status ReadResults(const std::string& path, bool inference, CharacterizeReport& report) {
  std::vector<std::string> columns = {"setting", "peak_power_w", "mean_power_w",
                                      inference ? "latency_s" : "iteration_s",
                                      "energy_per_token_j"};
  if (inference) {
    for (const char* c : {"prefill_s", "tp", "batch", "prompt", "output"}) columns.push_back(c);
  }
  return ReadCsv(path, columns, [&](const CsvRow& row) -> core::Status {
    SweepPoint p;
    p.setting = std::string(row.Text(0));
    auto knob = ParseSettingLabel(p.setting);
    if (!knob) {
      return core::Fail(
          knob.error().WithContext(fmt::format("{}:{}: column 'setting'", path, row.line())));
    }
    std::tie(p.knob, p.value) = *knob;
    HEADROOM_ASSIGN_OR_RETURN(p.peak_power_w, row.Number(1));
    HEADROOM_ASSIGN_OR_RETURN(p.mean_power_w, row.Number(2));
    HEADROOM_ASSIGN_OR_RETURN(p.latency_s, row.Number(3));
    HEADROOM_ASSIGN_OR_RETURN(p.energy_per_unit_j, row.Number(4));
    if (inference) {
      HEADROOM_ASSIGN_OR_RETURN(p.prefill_s, row.Number(5));
      report.shape = fmt::format("TP {}, batch {}, prompt {}, output {}", row.Text(6), row.Text(7),
                                 row.Text(8), row.Text(9));
    }
    if (!report.points.empty() && report.points.back().setting == p.setting) {
      report.points.back() = std::move(p);  // a larger shape of the same setting
    } else {
      report.points.push_back(std::move(p));
    }
    return core::Ok();
  });
}

core::Status ReadTraces(const std::string& path, CharacterizeReport& report) {
  return ReadCsv(path, {"setting", "time_s", "power_w"}, [&](const CsvRow& row) -> core::Status {
    HEADROOM_ASSIGN_OR_RETURN(double t, row.Number(1));
    HEADROOM_ASSIGN_OR_RETURN(double w, row.Number(2));
    if (report.traces.empty() || report.traces.back().setting != row.Text(0)) {
      report.traces.push_back({.setting = std::string(row.Text(0))});
    }
    report.traces.back().power.emplace_back(t, w);
    return core::Ok();
  });
}

}  // namespace

nlohmann::ordered_json CharacterizeInputsJson(const CharacterizeInputs& in) {
  return {{"tp", in.tp},          {"prompts", in.prompts},       {"batches", in.batches},
          {"output", in.output},  {"iterations", in.iterations}, {"interval", in.interval},
          {"version", in.version}};
}

core::Result<std::pair<SweptKnob, double>> ParseSettingLabel(const std::string& label) {
  if (label == "default") return std::pair{SweptKnob::kDefault, 0.0};
  for (const auto& [prefix, unit, knob] :
       {std::tuple{"sm_clock=", "MHz", SweptKnob::kClockLock},
        std::tuple{"power_limit=", "W", SweptKnob::kPowerLimit}}) {
    const std::string_view l = label;
    if (!l.starts_with(prefix) || !l.ends_with(unit)) continue;
    const std::string_view number =
        l.substr(std::string_view(prefix).size(),
                 l.size() - std::string_view(prefix).size() - std::string_view(unit).size());
    if (auto v = core::ParseDouble(number)) return std::pair{knob, *v};
  }
  return core::Fail(core::Error::InvalidArgument(
      fmt::format("'{}' is not a setting (default, sm_clock=NMHz or power_limit=NW)", label)));
}

core::Result<CharacterizeReport> ReadCharacterizeDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return core::Fail(core::Error::NotFound(fmt::format("{}: no such directory", dir)));
  }
  const std::string path = fmt::format("{}/{}", dir, kCharacterizeSummaryFile);
  HEADROOM_ASSIGN_OR_RETURN(json j, ReadJsonObject(path));
  FieldReader r(path, kCharacterizeWriter);
  CharacterizeReport report;
  report.inputs = ReadInputs(r, j);
  const json& settings = r.List(j, "settings", "");
  for (std::size_t i = 0; i < settings.size(); ++i) {
    const std::string at = fmt::format("settings[{}].", i);
    report.settings.push_back(
        {.setting = r.Text(settings[i], "setting", at),
         .worst_latency_increase = r.Number(settings[i], "worst_latency_increase", at),
         .peak_power_change = r.Number(settings[i], "peak_power_change", at),
         .energy_change = r.Number(settings[i], "energy_per_token_change", at)});
  }
  const auto best = j.find("best_under_slo");
  if (best == j.end() || !(best->is_null() || best->is_string())) {
    r.Text(j, "best_under_slo", "");  // records the error
  } else if (best->is_string()) {
    report.best = best->get<std::string>();
  }
  if (r.error()) return core::Fail(*r.error());
  HEADROOM_RETURN_IF_ERROR(
      ReadResults(fmt::format("{}/{}", dir, kResultsFile), report.inference(), report));
  if (report.points.empty()) {
    return core::Fail(
        core::Error::InvalidArgument(fmt::format("{}/{}: no rows", dir, kResultsFile)));
  }
  HEADROOM_RETURN_IF_ERROR(ReadTraces(fmt::format("{}/{}", dir, kPowerTraceFile), report));
  return report;
}

std::string CharacterizeQuestion(const CharacterizeReport& r) {
  return fmt::format(
      "Which SM clock lock or power limit runs {} {} on {} at the lowest peak power while "
      "latency stays within {} of the default?",
      r.inputs.model, r.inputs.workload, r.inputs.gpu, FormatChange(r.inputs.slo_fraction));
}

std::string CharacterizeAnswer(const CharacterizeReport& r) {
  int keep = 0;
  const SettingVerdict* best = nullptr;
  for (const SettingVerdict& s : r.settings) {
    if (s.worst_latency_increase <= r.inputs.slo_fraction + 1e-9) ++keep;
    if (s.setting == r.best) best = &s;
  }
  if (best == nullptr) {
    return fmt::format("No setting keeps latency within {}", FormatChange(r.inputs.slo_fraction));
  }
  return fmt::format(
      "{}: peak power {}, energy per token {}, worst latency {} ({} of {} settings keep the SLO)",
      best->setting, FormatChange(best->peak_power_change), FormatChange(best->energy_change),
      FormatChange(best->worst_latency_increase), keep, r.settings.size());
}

}  // namespace headroom::report
