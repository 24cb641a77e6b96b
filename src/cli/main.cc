// headroom: the command-line entry point and composition root.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/common.h"

namespace headroom::cli {
namespace {

int Main(int argc, char** argv) {
  CLI::App app{
      "headroom: find and safely use the power headroom of GPU clusters running LLM work.\n"
      "Exit codes: 0 ok, 1 runtime error, 2 usage or input error.",
      "headroom"};
  app.set_version_flag("--version", std::string("headroom ") + HEADROOM_VERSION);
  app.require_subcommand(1);
  GlobalOptions global;
  app.add_option("--catalog", global.catalog_dir,
                 "Read the hardware catalog from this directory instead of the built-in one")
      ->envname("HEADROOM_CATALOG_DIR");
  app.add_flag("-v,--verbose", global.verbose, "Log more detail to stderr");

  RunFunction run;
  RegisterGpus(app, global, &run);
  RegisterMonitor(app, global, &run);
  RegisterMeasure(app, global, &run);
  RegisterCharacterize(app, global, &run);
  RegisterModel(app, global, &run);
  RegisterSimulate(app, global, &run);
  RegisterPlan(app, global, &run);
  RegisterReport(app, global, &run);
  RegisterTrace(app, global, &run);
  RegisterMig(app, global, &run);
  RegisterAgent(app, global, &run);
  RegisterController(app, global, &run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "headroom: %s\nRun with --help for usage.\n", e.what());
    return kExitUsage;
  }
  spdlog::set_level(global.verbose ? spdlog::level::debug : spdlog::level::warn);
  if (!run) return kExitUsage;
  return run();
}

}  // namespace
}  // namespace headroom::cli

int main(int argc, char** argv) {
  try {
    return headroom::cli::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "headroom: internal error: %s\n", e.what());
    return headroom::cli::kExitRuntime;
  } catch (...) {
    std::fprintf(stderr, "headroom: internal error\n");
    return headroom::cli::kExitRuntime;
  }
}
