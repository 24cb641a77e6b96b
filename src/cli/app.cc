#include "cli/app.h"

#include <cstdio>
#include <exception>
#include <string>

#include <fmt/format.h>

#include "cli/common.h"
#include "console/terminal.h"

namespace headroom::cli {
namespace {

// The group that registers the command argv[1] names, if one does and may be registered alone.
const CommandGroup* GroupNamedFirst(int argc, char** argv,
                                    const std::vector<CommandGroup>& commands) {
  if (argc < 2) return nullptr;
  const std::string_view first = argv[1];
  for (const CommandGroup& group : commands) {
    for (std::string_view name : group.names) {
      if (name == first) return group.reads_every_command ? nullptr : &group;
    }
  }
  return nullptr;
}

bool HasCommand(CLI::App& app, std::string_view name) {
  return !app.get_subcommands([name](CLI::App* sub) { return sub->get_name() == name; }).empty();
}

int ParseAndRun(int argc, char** argv, const std::vector<CommandGroup>& commands) {
  CLI::App app{
      "headroom: find and safely use the power headroom of GPU clusters running LLM work.\n"
      "Exit codes: 0 ok, 1 runtime error, 2 usage or input error.",
      "headroom"};
  app.set_version_flag("--version", std::string("headroom ") + HEADROOM_VERSION);
  app.require_subcommand(1);
  // The global flags below also work after the subcommand (`headroom plan -q`); subcommands
  // inherit this when they are added, so it comes first.
  app.fallthrough();
  GlobalOptions global;
  app.add_option("--catalog", global.catalog_dir,
                 "Read the hardware catalog from this directory instead of the built-in one")
      ->envname("HEADROOM_CATALOG_DIR");
  auto* verbose = app.add_flag("-v,--verbose", global.verbose, "Log more detail to stderr");
  app.add_flag("-q,--quiet", global.quiet,
               "Print only results, warnings and errors: no progress bars, notes or info logs")
      ->excludes(verbose);
  app.add_option("--color", global.color,
                 "Colour: auto (a terminal, unless NO_COLOR or CI is set), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();

  RunFunction run;
  const CommandGroup* alone = GroupNamedFirst(argc, argv, commands);
  if (alone != nullptr) alone->add(app, global, &run);
  // A group that does not register the name it is listed under would leave the command unknown:
  // the rest are registered then, so that the command line means what it says.
  if (alone == nullptr || !HasCommand(app, argv[1])) {
    for (const CommandGroup& group : commands) {
      if (&group != alone) group.add(app, global, &run);
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    console::ConfigureTerminal(
        {.color = console::ParseColorMode(global.color).value_or(console::ColorMode::kAuto)});
    PrintError(fmt::format("{}\nRun with --help for usage.", e.what()));
    return kExitUsage;
  }
  // --color was checked by CLI11 already.
  console::ConfigureTerminal(
      {.quiet = global.quiet,
       .verbose = global.verbose,
       .color = console::ParseColorMode(global.color).value_or(console::ColorMode::kAuto)});
  if (!run) return kExitUsage;
  return run();
}

}  // namespace

int RunApp(int argc, char** argv, const std::vector<CommandGroup>& commands) {
  try {
    return ParseAndRun(argc, argv, commands);
  } catch (const std::exception& e) {
    PrintError(fmt::format("internal error: {}", e.what()));
    return kExitRuntime;
  } catch (...) {
    PrintError("internal error");
    return kExitRuntime;
  }
}

}  // namespace headroom::cli
