// `headroom agent` and `headroom controller`. Their flags are registered in both executables:
// in `headroom` (so that its help, man pages and completion cover them) and in headroom-daemon,
// which alone links the HTTP and TLS stack and runs them. Run through `headroom`, they exec
// headroom-daemon with the same arguments (same process, same PID), so the other commands do
// not pay that stack's start-up (about 6 ms, docs/row-simulator.md). Not thread-safe (CLI
// start-up).
#ifndef HEADROOM_CLI_DAEMON_COMMANDS_H_
#define HEADROOM_CLI_DAEMON_COMMANDS_H_

#include <functional>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "app/daemons.h"
#include "cli/commands.h"

namespace headroom::cli {

// A daemon's line on stdout, flushed at once: a supervisor or a test waits for it.
inline void PrintLineFlushed(const std::string& line) { std::cout << line << std::endl; }

struct AgentCliOptions {
  BackendOptions backend;
  service::AgentSettingsText settings;
  std::optional<double> failsafe_sm_clock_mhz;
  std::string config;
  std::string sim_load_file;
  std::optional<service::PowerSmoothingConfig> power_smoothing;  // config file only
};

struct ControllerCliOptions {
  std::string config;
  std::string listen = "127.0.0.1:9500";
  std::string audit_log;
  bool dry_run = false;
  bool check = false;
  std::string tls_cert;
  std::string tls_key;
};

// What running each daemon command does. `cmd` is the parsed `agent` subcommand (its config
// file fills only the flags not given).
struct DaemonRuns {
  using AgentRun =
      std::function<int(const GlobalOptions&, const CLI::App& cmd, const AgentCliOptions&)>;
  using ControllerRun = std::function<int(const GlobalOptions&, const ControllerCliOptions&)>;
  AgentRun agent;
  ControllerRun controller;
};

// Registers `agent` and `controller`, run by `runs`. REQUIRES: `global` outlives the run.
void RegisterDaemons(CLI::App& app, const GlobalOptions& global, RunFunction* run, DaemonRuns runs);

// headroom's runs: exec headroom-daemon with `argv` (cli/daemon_exec.cc). It is looked for at
// ../libexec/headroom/headroom-daemon from this executable (the build tree's layout and the
// installed one; CMake's install directories decide), or at $HEADROOM_DAEMON. REQUIRES: `argv`
// outlives the run.
DaemonRuns ExecDaemonRuns(int argc, char** argv);

// The daemons themselves (cli/agent_command.cc, cli/controller_command.cc): headroom-daemon's
// runs, and the only code of cli/ that links the HTTP stack.
int RunAgent(const GlobalOptions& global, const CLI::App& cmd, AgentCliOptions options);
int RunController(const GlobalOptions& global, const ControllerCliOptions& options);

}  // namespace headroom::cli

#endif  // HEADROOM_CLI_DAEMON_COMMANDS_H_
