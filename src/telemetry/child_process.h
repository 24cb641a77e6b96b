// ChildProcess: the user's command under `headroom measure` (core::Subprocess), with extra
// environment variables, optionally its stdout read line by line (each line passed on and echoed
// to ours, so that markers can be scanned), and SIGINT/SIGTERM forwarded to it while it runs.
// Not thread-safe; one at a time per process (core::SignalForwarder).
#ifndef HEADROOM_TELEMETRY_CHILD_PROCESS_H_
#define HEADROOM_TELEMETRY_CHILD_PROCESS_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/subprocess.h"

namespace headroom::telemetry {

class ChildProcess {
 public:
  // Starts `argv` (searched in PATH). With `on_line`, the child's stdout is read line by line,
  // each line passed to on_line and echoed to our stdout. kNotFound when the program is missing.
  [[nodiscard]] static core::Result<std::unique_ptr<ChildProcess>> Start(
      const std::vector<std::string>& argv,
      const std::vector<std::pair<std::string, std::string>>& extra_env,
      std::function<void(const std::string&)> on_line);

  // Polls: the exit code once the child has ended (128 + signal if it was killed), else nullopt.
  // Pumps captured output meanwhile.
  std::optional<int> Poll();

 private:
  ChildProcess(core::Subprocess child, std::function<void(const std::string&)> on_line)
      : child_(std::move(child)), on_line_(std::move(on_line)) {
    forwarder_.Add(child_.pid());
  }
  void Pump(bool until_eof);

  core::SignalForwarder forwarder_;
  core::Subprocess child_;
  std::function<void(const std::string&)> on_line_;
  std::string partial_;
  bool output_open_ = true;
};

}  // namespace headroom::telemetry

#endif  // HEADROOM_TELEMETRY_CHILD_PROCESS_H_
