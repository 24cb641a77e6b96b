// The command line shared by both executables (headroom, headroom-daemon): the global flags,
// parsing, the terminal set-up and the exit codes, around the commands each one registers.
#ifndef HEADROOM_CLI_APP_H_
#define HEADROOM_CLI_APP_H_

#include <functional>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace headroom::cli {

using AddCommands = std::function<void(CLI::App& app, const GlobalOptions& global, RunFunction*)>;

// Parses argv against the global flags and the commands `add` registers, and runs the chosen
// one: its exit code, kExitUsage for a usage error, kExitRuntime for an internal error.
int RunApp(int argc, char** argv, const AddCommands& add);

}  // namespace headroom::cli

#endif  // HEADROOM_CLI_APP_H_
