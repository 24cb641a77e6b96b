// `headroom characterize`: sweeps SM clock locks and power limits over workload shapes on the
// simulated GPU, writes results.csv and a summary, and names the best setting under a latency SLO.
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "catalog/inference_fits.h"
#include "catalog/model_catalog.h"
#include "catalog/training_catalog.h"
#include "cli/commands.h"
#include "cli/measured_run.h"
#include "cli/terminal.h"
#include "core/files.h"
#include "core/parse.h"
#include "gpu/control_restorer.h"
#include "report/characterize_dir.h"
#include "report/characterize_html.h"
#include "report/result_dir.h"
#include "report/table.h"
#include "sim/characterize.h"

namespace headroom::cli {
namespace {

using json = nlohmann::ordered_json;

constexpr core::Duration kSettle = std::chrono::milliseconds(500);

// Where `characterize --report` writes when no --out is given.
constexpr const char* kDefaultCharacterizeDir = "headroom-characterize";

struct CharacterizeOptions {
  std::string workload = "inference";
  std::string model = "llama2-70b";
  std::string gpu = "a100-80gb-sxm";
  int tp = 8;
  std::string sm_clocks;
  std::string power_limits;
  std::string prompts = "256,1024,8192";
  std::string batches = "1,8";
  int output = 128;
  int iterations = 5;
  std::string out;
  std::string slo = "5%";
  std::string interval = "10ms";
  bool json = false;
  bool report = false;
  BackendOptions backend;            // command mode only
  std::vector<std::string> command;  // after --: run it under each setting
};

core::Result<std::vector<int>> Ints(const std::string& text, const char* flag) {
  auto values = core::ParseValueList(text);
  if (!values) return core::Fail(values.error().WithContext(flag));
  std::vector<int> out;
  for (double v : *values) {
    if (v < 1 || v != static_cast<int>(v)) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("{}: {} is not a positive whole number", flag, v)));
    }
    out.push_back(static_cast<int>(v));
  }
  return out;
}

core::Result<std::vector<sim::Setting>> Settings(const model::GpuSpec& gpu,
                                                 const CharacterizeOptions& o) {
  std::vector<sim::Setting> settings{sim::Setting{}};
  if (!o.sm_clocks.empty()) {
    HEADROOM_ASSIGN_OR_RETURN(auto clocks, ParseClockList(o.sm_clocks, gpu));
    for (core::Megahertz f : clocks)
      settings.push_back({sim::Setting::Kind::kClockLock, f.value()});
  }
  if (!o.power_limits.empty()) {
    HEADROOM_ASSIGN_OR_RETURN(auto limits, ParsePowerLimitList(o.power_limits, gpu));
    for (core::Watts w : limits) settings.push_back({sim::Setting::Kind::kPowerLimit, w.value()});
  }
  return settings;
}

std::string Csv(const std::vector<sim::Row>& rows, bool inference) {
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

// Per setting over all shapes: the worst latency increase and peak-power change against the
// default, and the mean energy change.
struct SettingSummary {
  std::string label;
  double worst_slowdown = 0;
  double peak_change = 0;  // the largest peak over shapes, relative to the default's
  double energy_change = 0;
};

std::vector<SettingSummary> Summarize(const std::vector<sim::Row>& rows, size_t shapes) {
  std::vector<SettingSummary> out;
  for (size_t i = 0; i < rows.size(); i += shapes) {
    SettingSummary s{rows[i].setting.Label()};
    double peak = 0, base_peak = 0, energy = 0, base_energy = 0;
    for (size_t k = 0; k < shapes; ++k) {
      const sim::Row& r = rows[i + k];
      const sim::Row& base = rows[k];
      s.worst_slowdown = std::max(s.worst_slowdown, r.latency_s / base.latency_s - 1.0);
      peak = std::max(peak, r.peak_power_w);
      base_peak = std::max(base_peak, base.peak_power_w);
      energy += r.energy_per_unit_j;
      base_energy += base.energy_per_unit_j;
    }
    s.peak_change = peak / base_peak - 1.0;
    s.energy_change = energy / base_energy - 1.0;
    out.push_back(s);
  }
  return out;
}

// results.csv and summary.json in `dir`, created if need be.
core::Status WriteResults(const std::string& dir, const std::string& csv, const json& summary) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return core::Fail(core::Error::Unavailable(fmt::format("--out {}: {}", dir, ec.message())));
  HEADROOM_RETURN_IF_ERROR(core::WriteFileAtomically(dir + "/results.csv", csv));
  return core::WriteFileAtomically(dir + "/summary.json", summary.dump(2) + "\n");
}

// Applies `setting` to every device. The default setting is what the restorer saved.
core::Status Apply(const sim::Setting& setting, const std::vector<gpu::Device*>& devices,
                   gpu::ControlRestorer& restorer) {
  HEADROOM_RETURN_IF_ERROR(restorer.Restore());
  for (gpu::Device* d : devices) {
    switch (setting.kind) {
      case sim::Setting::Kind::kDefault:
        break;
      case sim::Setting::Kind::kClockLock: {
        HEADROOM_ASSIGN_OR_RETURN(auto clocks, d->SupportedSmClocks());
        HEADROOM_RETURN_IF_ERROR(d->LockSmClocks(clocks.back(), core::Megahertz(setting.value)));
        break;
      }
      case sim::Setting::Kind::kPowerLimit:
        HEADROOM_RETURN_IF_ERROR(d->SetPowerLimit(core::Watts(setting.value)));
        break;
    }
  }
  return core::Ok();
}

struct CommandRow {
  sim::Setting setting;
  int exit_code = 0;
  double duration_s = 0, energy_j = 0, peak_w = 0, mean_w = 0, p99_w = 0, capped_s = 0, work = 0;
};

CommandRow Reduce(const sim::Setting& setting, const MeasuredRunResult& run) {
  CommandRow row{setting, run.exit_code, run.duration_s};
  std::vector<double> instant;
  for (const telemetry::Sample& s : run.sampler->Recent()) {
    if (s.snapshot.power_instant) instant.push_back(s.snapshot.power_instant->value());
  }
  row.p99_w = sim::Percentile(std::move(instant), 0.99);
  const auto reports = run.sampler->Reports();
  for (const telemetry::EnergyReport& r : reports) {
    row.energy_j += r.energy.value();
    row.peak_w = std::max(row.peak_w, r.peak_power.value());
    row.capped_s = std::max(row.capped_s, core::ToSeconds(r.time_power_capped));
  }
  if (row.duration_s > 0 && !reports.empty()) {
    row.mean_w = row.energy_j / row.duration_s / static_cast<double>(reports.size());
  }
  row.work = run.sampler->work();
  return row;
}

int RunCommandSweep(const GlobalOptions& global, const CharacterizeOptions& o, double slo) {
  if (o.backend.backend == "nvml" && geteuid() != 0) {
    return ReportError(core::Error::PermissionDenied(
        "characterize -- CMD changes GPU power limits and clocks: run it as root (it restores "
        "every GPU's settings afterwards)"));
  }
  auto interval = core::ParseDuration(o.interval);
  if (!interval) return ReportError(interval.error().WithContext("--interval"));
  core::SystemClock clock;
  auto set = OpenDevices(global, o.backend, &clock);
  if (!set) return ReportError(set.error());
  std::vector<gpu::Device*> devices;
  for (auto& d : set->devices) devices.push_back(d.get());
  auto limits = devices.front()->PowerLimits();
  auto clocks = devices.front()->SupportedSmClocks();
  if (!limits || !clocks || clocks->empty()) {
    return ReportError(core::Error::Unimplemented(
        "these GPUs do not report their power-limit range and clocks, so nothing can be swept"));
  }
  // The sweep's bounds come from the device itself, not the catalog.
  model::GpuSpec bounds;
  bounds.name = devices.front()->info().name;
  bounds.power_limit_min = limits->min;
  bounds.power_limit_max = limits->max;
  bounds.sm_clock_min = clocks->back();
  bounds.sm_clock_max = clocks->front();
  bounds.sm_clock_step = clocks->size() > 1 ? (*clocks)[0] - (*clocks)[1] : core::Megahertz(1);
  auto settings = Settings(bounds, o);
  if (!settings) return ReportError(settings.error());

  auto restorer = gpu::ControlRestorer::Save(devices);
  if (!restorer) return ReportError(restorer.error());
  std::vector<CommandRow> rows;
  for (const sim::Setting& setting : *settings) {
    if (auto st = Apply(setting, devices, *restorer); !st) {
      return ReportError(st.error().WithContext(setting.Label()));
    }
    // Let the clocks and the sensor's 25-100 ms windows settle, so the first readings are not
    // of the previous setting.
    clock.SleepUntil(clock.Now() + kSettle, &StopRequested());
    PrintNote("running under " + setting.Label());
    auto run = RunMeasured(devices, &clock, {.command = o.command, .interval = *interval});
    if (!run) return ReportError(run.error());
    if (auto error = run->sampler->error()) return ReportError(error->WithContext(setting.Label()));
    rows.push_back(Reduce(setting, *run));
    const int code = run->exit_code;
    if (code == 128 + SIGINT || code == 128 + SIGTERM) {
      PrintNote("interrupted; restoring GPU settings");
      break;
    }
    if (code != 0) {
      return ReportError(core::Error::Internal(fmt::format(
          "the command exited with {} under {}; stopping the sweep", code, setting.Label())));
    }
  }
  if (auto st = restorer->Restore(); !st) return ReportError(st.error());
  for (const std::string& line : restorer->Describe()) {
    PrintNote("restored " + line);
  }

  std::string csv =
      "setting,exit_code,duration_s,energy_j,peak_power_w,mean_power_w,p99_power_w,"
      "time_capped_s,work,energy_per_unit_j\n";
  json out;
  out["command"] = o.command;
  out["backend"] = set->backend;
  const CommandRow& base = rows.front();
  const CommandRow* best = nullptr;
  report::TextTable table({{"SETTING", report::TextTable::Align::kLeft},
                           {"TIME s"},
                           {"TIME CHANGE"},
                           {"PEAK W"},
                           {"PEAK CHANGE"},
                           {"ENERGY J"},
                           {"ENERGY CHANGE"}});
  for (const CommandRow& r : rows) {
    const double per_unit = r.work > 0 ? r.energy_j / r.work : 0;
    csv += fmt::format("{},{},{:.3f},{:.2f},{:.2f},{:.2f},{:.2f},{:.3f},{:g},{:.6g}\n",
                       r.setting.Label(), r.exit_code, r.duration_s, r.energy_j, r.peak_w, r.mean_w,
                       r.p99_w, r.capped_s, r.work, per_unit);
    const double slow = r.duration_s / base.duration_s - 1;
    if (slow <= slo / 100.0 + 1e-9 && (best == nullptr || r.peak_w < best->peak_w)) best = &r;
    table.AddRow(
        {r.setting.Label(), fmt::format("{:.2f}", r.duration_s), report::FormatChange(slow),
         fmt::format("{:.0f}", r.peak_w), report::FormatChange(r.peak_w / base.peak_w - 1),
         fmt::format("{:.0f}", r.energy_j), report::FormatChange(r.energy_j / base.energy_j - 1)});
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
  out["best_under_slo"] = best != nullptr ? json(best->setting.Label()) : json(nullptr);
  if (!o.out.empty()) {
    if (auto st = WriteResults(o.out, csv, out); !st) return ReportError(st.error());
  }
  if (o.json) {
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << table.Render(StdoutStyle());
    if (best != nullptr) {
      std::cout << fmt::format("Best under a {}% latency SLO: {}\n", slo, best->setting.Label());
    }
  }
  return kExitOk;
}

// The settings drawn over time: the default, and the lowest clock and power limit swept.
std::vector<sim::Setting> ShownSettings(const std::vector<sim::Setting>& settings) {
  std::vector<sim::Setting> shown{settings.front()};
  for (auto kind : {sim::Setting::Kind::kClockLock, sim::Setting::Kind::kPowerLimit}) {
    const sim::Setting* lowest = nullptr;
    for (const sim::Setting& st : settings) {
      if (st.kind == kind && (lowest == nullptr || st.value < lowest->value)) lowest = &st;
    }
    if (lowest != nullptr) shown.push_back(*lowest);
  }
  return shown;
}

// The traced runs as power-trace.csv: setting,time_s,power_w.
std::string TraceCsv(const std::vector<sim::Trace>& traces) {
  std::string out = "setting,time_s,power_w\n";
  for (const sim::Trace& t : traces) {
    for (const auto& [time, watts] : t.power) {
      out += fmt::format("{},{:.4f},{:.2f}\n", t.label, time, watts);
    }
  }
  return out;
}

int RunCharacterize(const GlobalOptions& global, const CharacterizeOptions& o) {
  const bool inference = o.workload == "inference";
  auto hardware = LoadCatalog(global);
  if (!hardware) return ReportError(hardware.error());
  auto gpu = hardware->Gpu(o.gpu);
  if (!gpu) return ReportError(gpu.error().WithContext("--gpu"));
  auto fits = catalog::InferenceFits::Embedded();
  if (!fits) return ReportError(fits.error());
  auto fit = fits->For((*gpu)->name);
  if (!fit) return ReportError(fit.error());
  auto settings = Settings(**gpu, o);
  if (!settings) return ReportError(settings.error());
  auto interval = core::ParseDuration(o.interval);
  if (!interval) return ReportError(interval.error().WithContext("--interval"));
  std::string slo_text = o.slo;
  if (slo_text.ends_with('%')) slo_text.pop_back();
  auto slo = core::ParseDouble(slo_text);
  if (!slo || *slo < 0) {
    return ReportError(core::Error::InvalidArgument(
        fmt::format("--slo '{}' is not a latency increase such as 5%", o.slo)));
  }
  if (!o.command.empty()) {
    if (o.report) {
      return ReportError(core::Error::InvalidArgument(
          "--report: only the simulated sweep has a report; a command's sweep writes "
          "results.csv and summary.json with --out"));
    }
    return RunCommandSweep(global, o, *slo);
  }
  const std::string out_dir = o.out.empty() && o.report ? kDefaultCharacterizeDir : o.out;
  const model::GpuPowerModel gpu_model(**gpu);
  core::Result<std::vector<sim::Row>> rows = core::Fail(core::Error::Internal("not run"));
  std::vector<sim::Trace> traces;
  size_t shapes = 1;
  if (inference) {
    auto models = catalog::ModelCatalog::Embedded();
    auto spec = models->Model(o.model);
    if (!spec) return ReportError(spec.error().WithContext("--model"));
    auto prompts = Ints(o.prompts, "--prompts");
    if (!prompts) return ReportError(prompts.error());
    auto batches = Ints(o.batches, "--batches");
    if (!batches) return ReportError(batches.error());
    std::vector<sim::InferenceCase> cases;
    for (int b : *batches) {
      for (int p : *prompts)
        cases.push_back({.tp = o.tp, .batch = b, .prompt = p, .output = o.output});
    }
    shapes = cases.size();
    const model::InferenceModel m(**spec, gpu_model, fit->efficiency);
    rows = sim::CharacterizeInference(m, *settings, cases, *interval);
    if (rows && !out_dir.empty()) {
      for (const sim::Setting& st : ShownSettings(*settings)) {
        auto trace = sim::TraceInference(m, st, cases.back(), *interval);
        if (!trace) return ReportError(trace.error());
        traces.push_back(std::move(*trace));
      }
    }
  } else {
    auto workloads = catalog::TrainingCatalog::Embedded();
    if (!workloads) return ReportError(workloads.error());
    auto w = workloads->Workload(o.model);
    if (!w) return ReportError(w.error().WithContext("--model"));
    const model::TrainingModel m(*w, gpu_model, fit->efficiency);
    rows = sim::CharacterizeTraining(m, *settings, o.iterations, *interval);
    if (rows && !out_dir.empty()) {
      for (const sim::Setting& st : ShownSettings(*settings)) {
        auto trace = sim::TraceTraining(m, st, o.iterations, *interval);
        if (!trace) return ReportError(trace.error());
        traces.push_back(std::move(*trace));
      }
    }
  }
  if (!rows) return ReportError(rows.error());

  const auto summary = Summarize(*rows, shapes);
  const SettingSummary* best = nullptr;
  for (const SettingSummary& s : summary) {
    if (s.worst_slowdown > *slo / 100.0 + 1e-9) continue;
    if (best == nullptr || s.peak_change < best->peak_change) best = &s;
  }
  json out;
  out["workload"] = o.workload;
  out["model"] = o.model;
  out["gpu"] = (*gpu)->name;
  out["slo_latency_increase"] = *slo / 100.0;
  for (const SettingSummary& s : summary) {
    out["settings"].push_back({{"setting", s.label},
                               {"worst_latency_increase", s.worst_slowdown},
                               {"peak_power_change", s.peak_change},
                               {"energy_per_token_change", s.energy_change}});
  }
  out["best_under_slo"] = best != nullptr ? json(best->label) : json(nullptr);
  out["inputs"] = report::CharacterizeInputsJson({.tp = o.tp,
                                                  .prompts = o.prompts,
                                                  .batches = o.batches,
                                                  .output = o.output,
                                                  .iterations = o.iterations,
                                                  .interval = o.interval,
                                                  .version = HEADROOM_VERSION});
  std::optional<report::WrittenReport> written;
  if (!out_dir.empty()) {
    if (auto st = WriteResults(out_dir, Csv(*rows, inference), out); !st) {
      return ReportError(st.error());
    }
    if (auto st =
            core::WriteFileAtomically(out_dir + "/" + report::kPowerTraceFile, TraceCsv(traces));
        !st) {
      return ReportError(st.error());
    }
    if (o.report) {
      auto w = report::WriteResultReport(report::ResultKind::kCharacterize, out_dir);
      if (!w) return ReportError(w.error());
      for (const std::string& warning : w->warnings) {
        PrintWarning(warning);
      }
      written = std::move(*w);
    }
  }
  if (o.json) {
    std::cout << out.dump(2) << "\n";
    if (written) std::fprintf(stderr, "report: %s\n", written->path.c_str());
    return kExitOk;
  }
  report::TextTable table({{"SETTING", report::TextTable::Align::kLeft},
                           {"WORST LATENCY"},
                           {"PEAK POWER"},
                           {"ENERGY/TOKEN"}});
  for (const SettingSummary& s : summary) {
    table.AddRow({s.label, report::FormatChange(s.worst_slowdown),
                  report::FormatChange(s.peak_change), report::FormatChange(s.energy_change)});
  }
  std::cout << fmt::format("{} {} on simulated {} ({} runs, changes vs the default setting):\n",
                           o.model, o.workload, (*gpu)->name, rows->size())
            << table.Render(StdoutStyle());
  if (best != nullptr) {
    std::cout << fmt::format(
        "Best under a {}% latency SLO: {} (peak power {:+.1f}%, energy per token {:+.1f}%).\n",
        *slo, best->label, best->peak_change * 100, best->energy_change * 100);
  }
  if (!out_dir.empty()) {
    PrintNoteOut(fmt::format("Wrote {}/results.csv, summary.json and {}\n", out_dir,
                             report::kPowerTraceFile));
  }
  if (written) std::cout << fmt::format("report: {}\n", written->path);
  return kExitOk;
}

}  // namespace

void RegisterCharacterize(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  auto o = std::make_shared<CharacterizeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "characterize", "Sweep SM clocks and power limits over workload shapes on a simulated GPU");
  cmd->add_option("--workload", o->workload, "inference or training")
      ->check(CLI::IsMember({"inference", "training"}))
      ->capture_default_str();
  cmd->add_option("--model", o->model, "Model (inference) or training workload")
      ->capture_default_str();
  cmd->add_option("--gpu", o->gpu, "GPU type")->capture_default_str();
  cmd->add_option("--tp", o->tp, "Tensor parallelism (inference)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--sm-clocks", o->sm_clocks,
                  "Clock locks to try, MHz: START:STOP:STEP or a list");
  cmd->add_option("--power-limits", o->power_limits,
                  "Power limits to try, W: START:STOP:STEP or a list");
  cmd->add_option("--prompts", o->prompts, "Prompt lengths (inference)")->capture_default_str();
  cmd->add_option("--batches", o->batches, "Batch sizes (inference)")->capture_default_str();
  cmd->add_option("--output", o->output, "Output tokens per request (inference)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--iterations", o->iterations, "Iterations per run (training)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--interval", o->interval, "Telemetry sampling interval (virtual time)")
      ->capture_default_str();
  cmd->add_option("--out", o->out,
                  "Write results.csv, summary.json (and for the simulated sweep power-trace.csv) "
                  "into this directory");
  cmd->add_flag("--report", o->report,
                fmt::format("Also write report.html (self-contained HTML, plots inline) into --out "
                            "(default {}/) and print its path",
                            kDefaultCharacterizeDir));
  cmd->add_option("--slo", o->slo, "Largest acceptable latency increase, e.g. 5%")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the summary as JSON");
  AddBackendOptions(cmd, &o->backend);
  cmd->add_option("command", o->command,
                  "With a command after --: run it under each setting on the --backend GPUs "
                  "(nvml needs root; every GPU's settings are restored afterwards)")
      ->expected(-1);
  cmd->callback([run, o, &global] { *run = [o, &global] { return RunCharacterize(global, *o); }; });
}

}  // namespace headroom::cli
