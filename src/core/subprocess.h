// Subprocess: the one way headroom starts a child process (a user's command under `measure` or
// `mig characterize`, a meter command of the controller, gnuplot for the reports): spawn with
// extra environment variables, the child's stdout inherited, captured through a pipe, or written
// to a file with its stderr; poll or wait for its exit code; signal it. RunCaptured runs a
// command to its end under a timeout and a size bound on what it prints. SignalForwarder passes
// SIGINT and SIGTERM on to the children it holds, so that Ctrl-C stops the measured command, not
// only headroom. A Subprocess is thread-compatible; SignalForwarder is thread-safe.
#ifndef HEADROOM_CORE_SUBPROCESS_H_
#define HEADROOM_CORE_SUBPROCESS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "core/result.h"
#include "core/time.h"

namespace headroom::core {

struct SpawnOptions {
  std::vector<std::pair<std::string, std::string>> extra_env = {};  // added to ours
  // kCapture: stdout to a pipe (ReadOutput); kCaptureBoth: stdout and stderr to it.
  enum class Output { kInherit, kCapture, kCaptureBoth, kFile };
  Output output = Output::kInherit;
  std::string output_file = {};  // kFile: stdout and stderr, created or truncated
};

class Subprocess {
 public:
  // Starts `argv` (argv[0] searched in PATH). kInvalidArgument for an empty argv, kNotFound when
  // the program cannot be run, kInternal when no pipe can be made.
  [[nodiscard]] static Result<Subprocess> Start(const std::vector<std::string>& argv,
                                                const SpawnOptions& options = {});
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  // Closes the captured output. A child still running is left to run (Kill() it first).
  ~Subprocess();

  // The exit code once the child has ended (128 + the signal if one ended it), else nullopt.
  // Never blocks.
  std::optional<int> Poll();
  // Blocks until the child ends; its exit code as Poll() gives it.
  int Wait();
  // Sends `sig` unless the child has been reaped.
  void Signal(int sig) const;

  // Captured output (Output::kCapture): appends what the child printed within `timeout` (zero:
  // only what is there now) to `*out`; false once its output is closed and drained.
  bool ReadOutput(Duration timeout, std::string* out);

  pid_t pid() const { return pid_; }

 private:
  Subprocess(pid_t pid, int output_fd) : pid_(pid), output_fd_(output_fd) {}
  static int ExitCode(int status);

  pid_t pid_ = -1;
  int output_fd_ = -1;  // the read end of the capture pipe, or -1
  std::optional<int> exit_code_;
};

struct CapturedRun {
  int exit_code = 0;
  std::string output;      // its stdout, at most max_output bytes
  bool timed_out = false;  // killed (SIGKILL) at the timeout
  bool truncated = false;  // printed more than max_output: killed (SIGKILL)
};

// Runs `argv` to its end with its stdout captured: killed with SIGKILL once `timeout` has passed
// on `clock`, and stopped reading (and killed) once it printed more than `max_output` bytes.
// `with_stderr`: its stderr captured too, interleaved (a tool's error messages).
[[nodiscard]] Result<CapturedRun> RunCaptured(const std::vector<std::string>& argv,
                                              Duration timeout, std::size_t max_output,
                                              const Clock& clock, bool with_stderr = false);

// While it lives, SIGINT and SIGTERM sent to this process are passed on to every child added
// (the previous handlers come back when it is destroyed). One at a time per process.
class SignalForwarder {
 public:
  SignalForwarder();
  ~SignalForwarder();
  SignalForwarder(const SignalForwarder&) = delete;
  SignalForwarder& operator=(const SignalForwarder&) = delete;

  void Add(pid_t child);
  void Remove(pid_t child);
  // The last of SIGINT/SIGTERM passed on, 0 if none.
  static int LastSignal();
};

}  // namespace headroom::core

#endif  // HEADROOM_CORE_SUBPROCESS_H_
