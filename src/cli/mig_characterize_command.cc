// `headroom mig characterize`: every MIG layout x training workload on the slice model (every
// instance runs its own copy of the workload), written as a CSV with per-instance and whole-GPU
// throughput, power and energy per sample, plots, and a summary table (docs/mig.md).
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/mig_training_catalog.h"
#include "cli/commands.h"
#include "cli/mig_catalogs.h"
#include "cli/mig_characterize_device.h"
#include "cli/progress.h"
#include "cli/terminal.h"
#include "core/files.h"
#include "core/parse.h"
#include "mig/characterize.h"
#include "mig/enumerate.h"
#include "report/mig_characterize_html.h"
#include "report/mig_characterize_report.h"
#include "report/plot.h"
#include "report/result_dir.h"
#include "report/table.h"

namespace headroom::cli {
namespace {

using nlohmann::ordered_json;

struct MigCharacterizeOptions {
  std::string gpu = "h200";
  std::string workloads = "all";
  std::string profiles = "1g,2g,3g,4g,7g";
  std::vector<std::string> layouts;  // empty: one per multiset of maximal layouts, plus MIG off
  std::optional<double> power_limit_w;
  std::string out = "mig-characterize";
  bool json = false;
  bool report = false;  // also report.html in --out
  // A command after "--": measure it on the selected GPU instead of the model.
  MigDeviceSweepOptions device;
};

core::Result<std::vector<mig::MeasuredWorkload>> SelectWorkloads(
    const catalog::MigTrainingCatalog& catalog, const std::string& names) {
  if (names == "all") return catalog.workloads();
  std::vector<mig::MeasuredWorkload> out;
  for (std::string_view name : core::Split(names, ',')) {
    auto w = catalog.Workload(core::Trim(name));
    if (!w) return core::Fail(w.error().WithContext("--workloads"));
    out.push_back(*w);
  }
  return out;
}

// MIG off first, then the layouts given, or one per multiset of the profiles' maximal layouts.
core::Result<std::vector<std::optional<mig::Layout>>> SelectLayouts(
    const mig::GpuMigSpec& spec, const MigCharacterizeOptions& o) {
  std::vector<mig::Layout> layouts;
  if (!o.layouts.empty()) {
    auto given = mig::ParseValidLayouts(spec, o.layouts);
    if (!given) return core::Fail(given.error().WithContext("--layout"));
    layouts = std::move(*given);
  } else {
    auto profiles = mig::ProfilesNamed(spec, o.profiles);
    if (!profiles) return core::Fail(profiles.error().WithContext("--profiles"));
    layouts = mig::OnePerMultiset(mig::EnumerateMaximalLayouts(spec, *profiles));
  }
  std::vector<std::optional<mig::Layout>> out = {std::nullopt};
  out.insert(out.end(), layouts.begin(), layouts.end());
  return out;
}

// Throughput and energy per sample with 1, 2, 3 and 7 equal instances (7g, 3g, 2g, 1g) relative
// to MIG off, one line per workload.
std::vector<report::Plot> Plots(const mig::SliceModel& model,
                                const std::vector<mig::MeasuredWorkload>& workloads,
                                const std::vector<mig::WorkloadFit>& fits) {
  const mig::GpuMigSpec& spec = model.mig();
  report::Plot throughput{
      .name = "mig-throughput",
      .title = fmt::format("Whole-GPU throughput with N equal MIG instances, {}", spec.name),
      .x_label = "equal instances (1 = 7g, 2 = 3g, 3 = 2g, 7 = 1g)",
      .y_label = "samples/s relative to MIG off"};
  report::Plot energy{
      .name = "mig-energy",
      .title = fmt::format("Energy per sample with N equal MIG instances, {}", spec.name),
      .x_label = "equal instances (1 = 7g, 2 = 3g, 3 = 2g, 7 = 1g)",
      .y_label = "J/sample relative to MIG off"};
  for (size_t w = 0; w < workloads.size(); ++w) {
    const int batch = workloads[w].default_batch;
    const mig::LayoutResult off =
        mig::CharacterizeLayout(model, std::nullopt, workloads[w], fits[w], batch);
    if (off.gpu_samples_per_s <= 0) continue;
    report::Series t{.label = workloads[w].name}, e{.label = workloads[w].name};
    for (const auto& [count, layout] : mig::EqualInstanceLayouts(spec)) {
      const mig::LayoutResult r =
          mig::CharacterizeLayout(model, layout, workloads[w], fits[w], batch);
      // Only where every instance fits: a half-empty layout says nothing about scaling.
      bool all_fit = true;
      for (const mig::InstanceResult& in : r.per_instance) all_fit = all_fit && in.fits;
      if (!all_fit) continue;
      t.points.emplace_back(count, r.gpu_samples_per_s / off.gpu_samples_per_s);
      e.points.emplace_back(count, r.gpu_j_per_sample / off.gpu_j_per_sample);
    }
    throughput.series.push_back(t);
    energy.series.push_back(e);
  }
  return {throughput, energy};
}

int RunMigCharacterize(const GlobalOptions& global, const MigCharacterizeOptions& o) {
  if (!o.device.command.empty()) {
    if (o.report) {
      return ReportError(core::Error::InvalidArgument(
          "--report: only for the sweep on the model (no command after --) for now"));
    }
    MigDeviceSweepOptions device = o.device;
    device.layouts = o.layouts;
    device.out = o.out;
    device.json = o.json;
    return RunMigCharacterizeOnDevice(global, device);
  }
  if (o.device.backend.backend != "sim" || !o.device.backend.gpus.empty()) {
    return ReportError(core::Error::InvalidArgument(
        "--backend/--gpus: give the command to run on each instance after --"));
  }
  auto catalogs = LoadMigCatalogs(global);
  if (!catalogs) return ReportError(catalogs.error());
  auto model = catalogs->Model(o.gpu, o.power_limit_w);
  if (!model) return ReportError(model.error());
  auto workloads = SelectWorkloads(catalogs->workloads, o.workloads);
  if (!workloads) return ReportError(workloads.error());
  auto layouts = SelectLayouts(model->mig(), o);
  if (!layouts) return ReportError(layouts.error());

  std::vector<mig::LayoutResult> results;
  std::vector<mig::WorkloadFit> fits;
  ProgressBar progress("mig characterize", ProgressWanted());
  const size_t total = workloads->size() * layouts->size();
  for (const mig::MeasuredWorkload& w : *workloads) {
    auto fit = catalogs->Fit(w);
    if (!fit) return ReportError(fit.error());
    fits.push_back(*fit);
    for (const auto& layout : *layouts) {
      results.push_back(mig::CharacterizeLayout(*model, layout, w, *fit, w.default_batch));
      progress.Update(static_cast<double>(results.size()) / total, w.name);
    }
  }
  progress.Finish();

  report::MigCharacterizeReport data{.inputs = {.power_limit_w = model->power_limit().value(),
                                                .version = HEADROOM_VERSION,
                                                .geometry = report::GeometryOf(model->mig())},
                                     .results = std::move(results)};
  for (const mig::MeasuredWorkload& w : *workloads) data.inputs.workloads.push_back(w.name);
  for (const auto& layout : *layouts) {
    data.inputs.layouts.push_back(layout ? mig::FormatLayout(*layout) : "MIG off");
  }
  if (auto st = report::WriteMigCharacterizeDir(o.out, data); !st) return ReportError(st.error());
  std::string report_path;
  if (o.report) {
    auto written = report::WriteResultReport(report::ResultKind::kMigCharacterize, o.out);
    if (!written) return ReportError(written.error());
    for (const std::string& warning : written->warnings) {
      std::cerr << "headroom: " << warning << "\n";
    }
    report_path = written->path;
  }
  bool plotted = true;
  for (const report::Plot& plot : Plots(*model, *workloads, fits)) {
    if (auto st = report::RenderPlot(o.out, plot); !st) {
      PrintWarning(st.error().message());
      plotted = false;
      break;
    }
  }

  // Per workload: MIG off against the best layout by throughput and by energy per sample.
  struct Best {
    const mig::LayoutResult* off = nullptr;
    const mig::LayoutResult* fastest = nullptr;
    const mig::LayoutResult* leanest = nullptr;
  };
  std::map<std::string, Best> best;
  std::vector<std::string> order;
  for (const mig::LayoutResult& r : data.results) {
    Best& b = best[r.workload];
    if (b.off == nullptr) order.push_back(r.workload);
    if (r.layout == "MIG off") b.off = &r;
    if (r.gpu_samples_per_s <= 0) continue;
    if (b.fastest == nullptr || r.gpu_samples_per_s > b.fastest->gpu_samples_per_s) b.fastest = &r;
    if (b.leanest == nullptr || r.gpu_j_per_sample < b.leanest->gpu_j_per_sample) b.leanest = &r;
  }
  if (o.json) {
    ordered_json list = ordered_json::array();
    for (const std::string& name : order) {
      const Best& b = best[name];
      auto entry = [](const mig::LayoutResult* r) {
        return r == nullptr ? ordered_json(nullptr)
                            : ordered_json{{"layout", r->layout},
                                           {"gpu_samples_per_s", r->gpu_samples_per_s},
                                           {"gpu_power_w", r->gpu_power_w},
                                           {"gpu_j_per_sample", r->gpu_j_per_sample}};
      };
      list.push_back({{"workload", name},
                      {"mig_off", entry(b.off)},
                      {"fastest", entry(b.fastest)},
                      {"least_energy", entry(b.leanest)}});
    }
    std::cout << ordered_json{{"gpu", model->mig().name},
                              {"power_limit_w", model->power_limit().value()},
                              {"layouts", layouts->size()},
                              {"results_csv", o.out + "/results.csv"},
                              {"workloads", list}}
                     .dump(2)
              << "\n";
    if (!report_path.empty()) std::cerr << "report: " << report_path << "\n";
    return kExitOk;
  }
  using Align = report::TextTable::Align;
  report::TextTable table({{"WORKLOAD", Align::kLeft},
                           {"MIG_OFF_SAMPLES/S"},
                           {"MIG_OFF_J/SAMPLE"},
                           {"FASTEST_LAYOUT", Align::kLeft},
                           {"THROUGHPUT"},
                           {"LEAST_ENERGY_LAYOUT", Align::kLeft},
                           {"ENERGY/SAMPLE"}});
  for (const std::string& name : order) {
    const Best& b = best[name];
    if (b.off == nullptr || b.fastest == nullptr || b.off->gpu_samples_per_s <= 0) continue;
    table.AddRow({name, fmt::format("{:.1f}", b.off->gpu_samples_per_s),
                  fmt::format("{:.4f}", b.off->gpu_j_per_sample), b.fastest->layout,
                  report::FormatChange(b.fastest->gpu_samples_per_s / b.off->gpu_samples_per_s - 1),
                  b.leanest->layout,
                  report::FormatChange(b.leanest->gpu_j_per_sample / b.off->gpu_j_per_sample - 1)});
  }
  std::cout << fmt::format(
      "MIG characterization on {} (simulated, power limit {:.0f} W): {} layouts x {} workloads, "
      "every instance running its own copy\n",
      model->mig().name, model->power_limit().value(), layouts->size(), workloads->size());
  std::cout << table.Render(StdoutStyle());
  PrintNoteOut(fmt::format("Wrote {}/results.csv{}\n", o.out,
                           plotted ? " and the plots (mig-throughput.svg, mig-energy.svg)" : ""));
  if (!report_path.empty()) std::cout << fmt::format("report: {}\n", report_path);
  return kExitOk;
}

}  // namespace

void AddMigCharacterize(CLI::App* mig, const GlobalOptions& global, RunFunction* run) {
  auto o = std::make_shared<MigCharacterizeOptions>();
  CLI::App* cmd = mig->add_subcommand(
      "characterize", "Throughput, power and energy per sample of MIG layouts x workloads");
  cmd->add_option("--gpu", o->gpu, "GPU type")->capture_default_str();
  cmd->add_option("--workloads", o->workloads, "Workloads, comma-separated, or all")
      ->capture_default_str();
  cmd->add_option("--profiles", o->profiles,
                  "Profile classes whose maximal layouts are swept (one per multiset)")
      ->capture_default_str();
  cmd->add_option("--layout", o->layouts, "Sweep these layouts instead (repeatable)");
  cmd->add_option("--power-limit", o->power_limit_w, "Power limit in W (default: the GPU's)");
  cmd->add_option("--out", o->out,
                  "Directory for results.csv, mig-characterize.json (the inputs) and the plots")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the summary as JSON");
  cmd->add_flag("--report", o->report,
                "Also write report.html (self-contained HTML: layouts drawn as slots, plots "
                "inline) into --out and print its path (the model sweep only)");
  cmd->add_option("--backend", o->device.backend.backend,
                  "With a command: nvml (a real GPU in MIG mode) or sim")
      ->check(CLI::IsMember({"sim", "nvml"}));
  cmd->add_option("--gpus", o->device.backend.gpus, "With a command: the GPU to use (one)");
  cmd->add_option("--samples", o->device.samples,
                  "With a command: samples each copy processes, for J/sample")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--idle", o->device.idle_s,
                  "With a command: seconds of idle measured first (idle power for attribution)")
      ->check(CLI::Range(0.1, 600.0))
      ->capture_default_str();
  cmd->add_flag("--enable-mig", o->device.enable_mig,
                "With a command: turn MIG mode on for the sweep if it is off, and off after "
                "(refused when the GPU would need a reset)");
  cmd->add_option("command", o->device.command,
                  "Run this on every MIG instance of each layout (after --), measured on a real "
                  "GPU; without it, the slice model is swept")
      ->expected(1, -1);
  cmd->callback(
      [run, o, &global] { *run = [o, &global] { return RunMigCharacterize(global, *o); }; });
}

}  // namespace headroom::cli
