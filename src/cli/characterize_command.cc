// `headroom characterize`: sweeps SM clock locks and power limits over workload shapes on the
// simulated GPU, writes results.csv and a summary, and names the best setting under a latency SLO.
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/characterize.h"
#include "cli/commands.h"
#include "console/terminal.h"
#include "report/characterize_dir.h"

namespace headroom::cli {
namespace {

struct CharacterizeOptions {
  app::CharacterizeRequest request;
  bool json = false;
};

int RunCharacterize(const GlobalOptions& global, const CharacterizeOptions& o) {
  app::CharacterizeRequest request = o.request;
  request.catalog_dir = global.catalog_dir;
  request.version = HEADROOM_VERSION;
  request.stop = &StopRequested();
  request.note = PrintNote;
  request.on_warning = PrintWarning;
  auto result = app::Characterize(request);
  if (!result) return ReportError(result.error());
  if (!request.command.empty()) {
    std::cout << (o.json ? result->summary.dump(2) + "\n"
                         : report::CommandSweepText(result->runs, result->best, result->slo_percent,
                                                    StdoutStyle()));
    return kExitOk;
  }
  const std::string& out_dir = result->out_dir;
  return PrintResult(
      {.json = o.json,
       .json_text = result->summary.dump(2),
       .text = report::CharacterizeText(result->inputs, *result->sweep, result->slo_percent,
                                        StdoutStyle()),
       .wrote = out_dir.empty()
                    ? ""
                    : fmt::format("Wrote {}/{}, {} and {}\n", out_dir, report::kResultsFile,
                                  report::kCharacterizeSummaryFile, report::kPowerTraceFile),
       .report = result->report});
}

}  // namespace

void RegisterCharacterize(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  CLI::App* cmd = app.add_subcommand(
      "characterize", "Sweep SM clocks and power limits over workload shapes on a simulated GPU");
  auto* options = OptionsRunBy(cmd, run, global, RunCharacterize);
  app::CharacterizeRequest* o = &options->request;
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
                            app::kDefaultCharacterizeDir));
  cmd->add_option("--slo", o->slo, "Largest acceptable latency increase, e.g. 5%")
      ->capture_default_str();
  AddEngineOptions(cmd, &o->engine);
  cmd->add_flag("--json", options->json, "Print the summary as JSON");
  AddBackendOptions(cmd, &o->backend);
  cmd->add_option("command", o->command,
                  "With a command after --: run it under each setting on the --backend GPUs "
                  "(nvml needs root; every GPU's settings are restored afterwards)")
      ->expected(-1);
}

}  // namespace headroom::cli
