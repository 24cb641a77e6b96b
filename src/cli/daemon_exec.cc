// `headroom agent|controller` and `headroom measure --engine-metrics`: become headroom-daemon
// with the same command line.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "cli/daemon_commands.h"
#include "cli/measure_command.h"

namespace headroom::cli {
namespace {

std::string DaemonPath() {
  if (const char* path = std::getenv("HEADROOM_DAEMON"); path != nullptr && *path != '\0') {
    return path;
  }
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "headroom-daemon";  // no /proc: left to execv's error
  return (self.parent_path() / HEADROOM_DAEMON_FROM_BIN).lexically_normal().string();
}

// Replaces this process (its PID, signals and open files stay: systemd and the tests see one
// daemon); returns only when the exec fails.
int ExecDaemon(int argc, char** argv) {
  const std::string path = DaemonPath();
  std::vector<char*> args(argv, argv + argc);
  args.push_back(nullptr);
  execv(path.c_str(), args.data());
  PrintError(
      fmt::format("cannot start {}: {} (installed with headroom at {} from it; "
                  "HEADROOM_DAEMON names another)",
                  path, std::strerror(errno), HEADROOM_DAEMON_FROM_BIN));
  return kExitRuntime;
}

}  // namespace

DaemonRuns ExecDaemonRuns(int argc, char** argv) {
  return {
      .agent = [argc, argv](const GlobalOptions&, const CLI::App&,
                            const AgentCliOptions&) { return ExecDaemon(argc, argv); },
      .controller = [argc, argv](const GlobalOptions&,
                                 const ControllerCliOptions&) { return ExecDaemon(argc, argv); }};
}

EngineWatchRun ExecDaemonWatch(int argc, char** argv) {
  return [argc, argv](const GlobalOptions&, const MeasureCliOptions&) {
    return ExecDaemon(argc, argv);
  };
}

}  // namespace headroom::cli
