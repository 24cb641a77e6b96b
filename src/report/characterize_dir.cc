#include "report/characterize_dir.h"

#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "core/csv_reader.h"
#include "core/files.h"
#include "core/parse.h"
#include "format/json_fields.h"
#include "format/table.h"

namespace headroom::report {
namespace {

using nlohmann::json;

constexpr const char* kCharacterizeWriter = "headroom characterize --out";

// The knob and value of a setting's label; kInvalidArgument for anything else.
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

using CI = CharacterizeInputs;
using CR = CharacterizeReport;

// summary.json keeps what was swept at its top and the flags that shaped it under "inputs".
constexpr auto kCharacterizeTopFields =
    std::tuple{format::Field("workload", &CI::workload), format::Field("model", &CI::model),
               format::Field("gpu", &CI::gpu),
               // Sweeps written before the engine was named have none.
               format::Field("engine", &CI::engine, {.omit_empty = true}),
               format::Field("slo_latency_increase", &CI::slo_fraction)};
constexpr auto kCharacterizeFlagFields = std::tuple{format::Field("tp", &CI::tp),
                                                    format::Field("prompts", &CI::prompts),
                                                    format::Field("batches", &CI::batches),
                                                    format::Field("output", &CI::output),
                                                    format::Field("iterations", &CI::iterations),
                                                    format::Field("interval", &CI::interval),
                                                    format::Field("version", &CI::version)};
constexpr auto kSettingVerdictFields =
    std::tuple{format::Field("setting", &SettingVerdict::setting),
               format::Field("worst_latency_increase", &SettingVerdict::worst_latency_increase),
               format::Field("peak_power_change", &SettingVerdict::peak_power_change),
               format::Field("energy_per_token_change", &SettingVerdict::energy_change)};
constexpr auto kCharacterizeSummaryFields =
    std::tuple{format::Inline(&CR::inputs, kCharacterizeTopFields),
               format::Field("settings", &CR::settings, kSettingVerdictFields),
               format::Field("best_under_slo", &CR::best),
               format::Field("inputs", &CR::inputs, kCharacterizeFlagFields)};

// results.csv: the last row of each setting (the largest shape), in the order settings appear.
core::Status ReadResults(const std::string& path, bool inference, CharacterizeReport& report) {
  std::vector<core::CsvColumn> columns = {"setting", "peak_power_w", "mean_power_w",
                                          inference ? "latency_s" : "iteration_s",
                                          "energy_per_token_j"};
  if (inference) {
    for (const char* c : {"prefill_s", "tp", "batch", "prompt", "output"}) columns.push_back(c);
  }
  return core::ReadCsv(path, columns, [&](const core::CsvRow& row) -> core::Status {
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
  return core::ReadCsv(path, {"setting", "time_s", "power_w"},
                       [&](const core::CsvRow& row) -> core::Status {
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

namespace {

using ordered_json = nlohmann::ordered_json;

std::string ResultsCsv(const std::vector<sim::Row>& rows, bool inference) {
  std::string out = inference ? "setting,tp,batch,prompt,output," : "setting,";
  out += "peak_power_w,mean_power_w,p99_power_w,";
  out += inference ? "prefill_s,decode_step_s,latency_s,energy_per_token_j,"
                   : "iteration_s,energy_per_token_j,";
  out += "time_capped_s,duration_s,energy_source\n";
  for (const sim::Row& r : rows) {
    out += r.setting.Label() + ",";
    if (inference) {
      out += fmt::format("{},{},{},{},", r.shape.tp, r.shape.batch, r.shape.prompt, r.shape.output);
    }
    out += fmt::format("{:.2f},{:.2f},{:.2f},", r.peak_power_w, r.mean_power_w, r.p99_power_w);
    if (inference) out += fmt::format("{:.5f},{:.6f},", r.prefill_s, r.decode_step_s);
    out += fmt::format("{:.5f},{:.5f},{:.3f},{:.3f},{}\n", r.latency_s, r.energy_per_unit_j,
                       r.time_capped_s, r.duration_s, r.energy_source);
  }
  return out;
}

// power-trace.csv: setting,time_s,power_w.
std::string PowerTraceCsv(const std::vector<sim::Trace>& traces) {
  std::string out = "setting,time_s,power_w\n";
  for (const sim::Trace& t : traces) {
    for (const auto& [time, watts] : t.power) {
      out += fmt::format("{},{:.4f},{:.2f}\n", t.label, time, watts);
    }
  }
  return out;
}

core::Status CreateOutDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return core::Fail(core::Error::Unavailable(fmt::format("--out {}: {}", dir, ec.message())));
  }
  return core::Ok();
}

}  // namespace

ordered_json CharacterizeSummaryJson(const CharacterizeInputs& inputs,
                                     const sim::SimulatedSweep& sweep) {
  CharacterizeReport report;
  report.inputs = inputs;
  for (const sim::SettingSummary& s : sweep.summary) {
    report.settings.push_back({.setting = s.label,
                               .worst_latency_increase = s.worst_slowdown,
                               .peak_power_change = s.peak_change,
                               .energy_change = s.energy_change});
  }
  if (sweep.best) report.best = sweep.summary[*sweep.best].label;
  ordered_json out = ordered_json::object();
  format::WriteFields(out, report, kCharacterizeSummaryFields);
  return out;
}

core::Status WriteCharacterizeDir(const std::string& dir, const sim::SimulatedSweep& sweep,
                                  const ordered_json& summary, bool inference) {
  HEADROOM_RETURN_IF_ERROR(CreateOutDir(dir));
  HEADROOM_RETURN_IF_ERROR(
      core::WriteFileAtomically(dir + "/" + kResultsFile, ResultsCsv(sweep.rows, inference)));
  HEADROOM_RETURN_IF_ERROR(
      core::WriteFileAtomically(dir + "/" + kCharacterizeSummaryFile, summary.dump(2) + "\n"));
  return core::WriteFileAtomically(dir + "/" + kPowerTraceFile, PowerTraceCsv(sweep.traces));
}

std::string CharacterizeText(const CharacterizeInputs& inputs, const sim::SimulatedSweep& sweep,
                             double slo_percent, const format::TextStyle& style) {
  format::TextTable table({{"SETTING", format::TextTable::Align::kLeft},
                           {"WORST LATENCY"},
                           {"PEAK POWER"},
                           {"ENERGY/TOKEN"}});
  for (const sim::SettingSummary& s : sweep.summary) {
    table.AddRow({s.label, format::FormatChange(s.worst_slowdown),
                  format::FormatChange(s.peak_change), format::FormatChange(s.energy_change)});
  }
  std::string out =
      fmt::format("{} {} on simulated {}{} ({} runs, changes vs the default setting):\n",
                  inputs.model, inputs.workload, inputs.gpu,
                  inputs.engine.empty() ? "" : " under engine " + inputs.engine,
                  sweep.rows.size()) +
      table.Render(style);
  if (sweep.best) {
    const sim::SettingSummary& best = sweep.summary[*sweep.best];
    out += fmt::format(
        "Best under a {}% latency SLO: {} (peak power {:+.1f}%, energy per token {:+.1f}%).\n",
        slo_percent, best.label, best.peak_change * 100, best.energy_change * 100);
  }
  return out;
}

ordered_json CommandSweepJson(const std::vector<std::string>& command, const std::string& backend,
                              const std::vector<sim::CommandRun>& runs,
                              std::optional<size_t> best) {
  ordered_json out;
  out["command"] = command;
  out["backend"] = backend;
  for (const sim::CommandRun& r : runs) {
    out["runs"].push_back({{"setting", r.setting.Label()},
                           {"exit_code", r.exit_code},
                           {"duration_s", r.duration_s},
                           {"energy_j", r.energy_j},
                           {"peak_power_w", r.peak_w},
                           {"mean_power_w", r.mean_w},
                           {"p99_power_w", r.p99_w},
                           {"time_capped_s", r.capped_s},
                           {"work", r.work}});
  }
  out["best_under_slo"] = best ? ordered_json(runs[*best].setting.Label()) : nullptr;
  return out;
}

core::Status WriteCommandSweepDir(const std::string& dir, const std::vector<sim::CommandRun>& runs,
                                  const ordered_json& summary) {
  std::string csv =
      "setting,exit_code,duration_s,energy_j,peak_power_w,mean_power_w,p99_power_w,"
      "time_capped_s,work,energy_per_unit_j\n";
  for (const sim::CommandRun& r : runs) {
    const double per_unit = r.work > 0 ? r.energy_j / r.work : 0;
    csv += fmt::format("{},{},{:.3f},{:.2f},{:.2f},{:.2f},{:.2f},{:.3f},{:g},{:.6g}\n",
                       r.setting.Label(), r.exit_code, r.duration_s, r.energy_j, r.peak_w, r.mean_w,
                       r.p99_w, r.capped_s, r.work, per_unit);
  }
  HEADROOM_RETURN_IF_ERROR(CreateOutDir(dir));
  HEADROOM_RETURN_IF_ERROR(core::WriteFileAtomically(dir + "/" + kResultsFile, csv));
  return core::WriteFileAtomically(dir + "/" + kCharacterizeSummaryFile, summary.dump(2) + "\n");
}

std::string CommandSweepText(const std::vector<sim::CommandRun>& runs, std::optional<size_t> best,
                             double slo_percent, const format::TextStyle& style) {
  format::TextTable table({{"SETTING", format::TextTable::Align::kLeft},
                           {"TIME s"},
                           {"TIME CHANGE"},
                           {"PEAK W"},
                           {"PEAK CHANGE"},
                           {"ENERGY J"},
                           {"ENERGY CHANGE"}});
  const sim::CommandRun& base = runs.front();
  for (const sim::CommandRun& r : runs) {
    table.AddRow({r.setting.Label(), fmt::format("{:.2f}", r.duration_s),
                  format::FormatChange(r.duration_s / base.duration_s - 1),
                  fmt::format("{:.0f}", r.peak_w), format::FormatChange(r.peak_w / base.peak_w - 1),
                  fmt::format("{:.0f}", r.energy_j),
                  format::FormatChange(r.energy_j / base.energy_j - 1)});
  }
  std::string out = table.Render(style);
  if (best) {
    out +=
        fmt::format("Best under a {}% latency SLO: {}\n", slo_percent, runs[*best].setting.Label());
  }
  return out;
}

core::Result<CharacterizeReport> ReadCharacterizeDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return core::Fail(core::Error::NotFound(fmt::format("{}: no such directory", dir)));
  }
  const std::string path = fmt::format("{}/{}", dir, kCharacterizeSummaryFile);
  HEADROOM_ASSIGN_OR_RETURN(json j, format::ReadJsonObject(path));
  format::FieldReader r(path, kCharacterizeWriter);
  CharacterizeReport report;
  format::ReadFields(r, j, "", report, kCharacterizeSummaryFields);
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
      r.inputs.model, r.inputs.workload, r.inputs.gpu, format::FormatChange(r.inputs.slo_fraction));
}

std::string CharacterizeAnswer(const CharacterizeReport& r) {
  int keep = 0;
  const SettingVerdict* best = nullptr;
  for (const SettingVerdict& s : r.settings) {
    if (s.worst_latency_increase <= r.inputs.slo_fraction + 1e-9) ++keep;
    if (s.setting == r.best) best = &s;
  }
  if (best == nullptr) {
    return fmt::format("No setting keeps latency within {}",
                       format::FormatChange(r.inputs.slo_fraction));
  }
  return fmt::format(
      "{}: peak power {}, energy per token {}, worst latency {} ({} of {} settings keep the SLO)",
      best->setting, format::FormatChange(best->peak_power_change),
      format::FormatChange(best->energy_change), format::FormatChange(best->worst_latency_increase),
      keep, r.settings.size());
}

}  // namespace headroom::report
