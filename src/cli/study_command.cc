// `headroom study FILE`: several capacity plans side by side (app/study.h).
#include <fmt/format.h>

#include "app/study.h"
#include "cli/cluster_commands.h"
#include "cli/common.h"
#include "console/progress.h"

namespace headroom::cli {
namespace {

struct StudyCliOptions {
  std::string file;
  std::string out;
  bool report = false;
  bool json = false;
  int threads = 0;
  app::ExecutorRequest executor;
};

int RunStudy(const StudyCliOptions& cli) {
  InstallStopHandlers();
  ProgressBar bar("studying", ProgressWanted());
  std::string current;
  app::StudyRequest request{.file = cli.file,
                            .executor = cli.executor,
                            .threads = cli.threads,
                            .out = cli.out,
                            .report = cli.report,
                            .version = HEADROOM_VERSION,
                            .stop = &StopRequested(),
                            .on_warning = PrintWarning};
  request.on_plan = [&](int plan, int plans, const std::string& name) {
    current = fmt::format("plan {} of {}: {}", plan + 1, plans, name);
    bar.Update(static_cast<double>(plan) / plans, current);
  };
  auto study = app::RunStudy(request);
  bar.Finish();
  if (!study) return ReportError(study.error());
  const std::string& out = study->out_dir;
  return PrintResult(
      {.json = cli.json,
       .json_text = report::StudyJson(study->data).dump(2),
       .text = report::StudyText(study->data, StdoutStyle()),
       .wrote = out.empty() ? "" : fmt::format("wrote {}/{}\n", out, report::kStudyFile),
       .report = study->report});
}

}  // namespace

void RegisterStudy(CLI::App& app, const GlobalOptions&, RunFunction* run) {
  auto* cmd = app.add_subcommand(
      "study",
      "Several capacity plans side by side: a study file's plans (scenarios with their "
      "overrides), each under every combination of its grid, compared in one table and report");
  auto* options = OptionsRunBy(cmd, run, RunStudy);
  cmd->add_option("file", options->file, "The study file (YAML; docs/row-simulator.md)")
      ->required();
  cmd->add_option("--out", options->out,
                  "Write study.json and each plan's directory (plans/NN-NAME/plan.json) here");
  cmd->add_flag("--report", options->report,
                fmt::format("Also write report.html into --out (default {}/) and print its path",
                            app::kDefaultStudyDir));
  cmd->add_flag("--json", options->json, "Print the study as JSON");
  cmd->add_option("--threads", options->threads,
                  "Each plan's simulations in parallel, locally (default: all cores)")
      ->check(CLI::Range(1, 1024));
  AddExecutorOptions(cmd, &options->executor);
}

}  // namespace headroom::cli
