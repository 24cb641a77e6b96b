// ChildProcess: runs a user's command for `headroom measure`, with extra environment variables,
// optionally capturing its stdout (so its lines can be scanned and passed through), and forwards
// SIGINT/SIGTERM to it. Not thread-safe; one child per process at a time (signal forwarding uses
// process-wide state).
#ifndef HEADROOM_CLI_CHILD_PROCESS_H_
#define HEADROOM_CLI_CHILD_PROCESS_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "core/result.h"

namespace headroom::cli {

class ChildProcess {
 public:
  // Starts `argv` (searched in PATH). With `on_line`, the child's stdout is read line by line,
  // each line passed to on_line and echoed to our stdout. kNotFound when the program is missing.
  [[nodiscard]] static core::Result<std::unique_ptr<ChildProcess>> Start(
      const std::vector<std::string>& argv,
      const std::vector<std::pair<std::string, std::string>>& extra_env,
      std::function<void(const std::string&)> on_line);
  ~ChildProcess();

  // Polls: the exit code once the child has ended (128 + signal if it was killed), else nullopt.
  // Pumps captured output meanwhile.
  std::optional<int> Poll();

 private:
  ChildProcess(pid_t pid, int stdout_fd, std::function<void(const std::string&)> on_line)
      : pid_(pid), stdout_fd_(stdout_fd), on_line_(std::move(on_line)) {}
  void Pump(bool until_eof);

  pid_t pid_;
  int stdout_fd_;  // -1 when not captured
  std::function<void(const std::string&)> on_line_;
  std::string partial_;
};

}  // namespace headroom::cli

#endif  // HEADROOM_CLI_CHILD_PROCESS_H_
