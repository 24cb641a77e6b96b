// The command line shared by both executables (headroom, headroom-daemon): the global flags,
// parsing, the terminal set-up and the exit codes, around the commands each one registers.
#ifndef HEADROOM_CLI_APP_H_
#define HEADROOM_CLI_APP_H_

#include <functional>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace headroom::cli {

using AddCommands = std::function<void(CLI::App& app, const GlobalOptions& global, RunFunction*)>;

// Top-level commands that one function registers (a few share one: `agent` and `controller`).
struct CommandGroup {
  std::vector<std::string_view> names;  // the top-level commands `add` registers
  // The command walks the whole tree when it runs (completion, man pages): never registered
  // alone.
  bool reads_every_command = false;
  AddCommands add;
};

// Parses argv against the global flags and the commands, and runs the chosen one: its exit
// code, kExitUsage for a usage error, kExitRuntime for an internal error. When argv[1] names a
// command, only its group is registered: building every command's options is a quarter of a
// short command's start-up (heap growth and page faults), and every process of a plan or a test
// pays it. Any other command line (global flags first, --help, an unknown command) registers
// them all, in order.
int RunApp(int argc, char** argv, const std::vector<CommandGroup>& commands);

}  // namespace headroom::cli

#endif  // HEADROOM_CLI_APP_H_
