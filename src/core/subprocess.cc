#include "core/subprocess.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace headroom::core {
namespace {

// The spawn's file actions, destroyed on every path.
class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

}  // namespace

Result<Subprocess> Subprocess::Start(const std::vector<std::string>& argv,
                                     const SpawnOptions& options) {
  if (argv.empty()) return Fail(Error::InvalidArgument("no command to run"));
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (const auto& [key, value] : options.extra_env) env.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (std::string& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  FileActions actions;
  int pipe_fds[2] = {-1, -1};
  switch (options.output) {
    case SpawnOptions::Output::kInherit:
      break;
    case SpawnOptions::Output::kCapture:
    case SpawnOptions::Output::kCaptureBoth:
      if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
        return Fail(Error::Internal(fmt::format("pipe: {}", std::strerror(errno))));
      }
      posix_spawn_file_actions_adddup2(actions.get(), pipe_fds[1], STDOUT_FILENO);
      if (options.output == SpawnOptions::Output::kCaptureBoth) {
        posix_spawn_file_actions_adddup2(actions.get(), pipe_fds[1], STDERR_FILENO);
      }
      break;
    case SpawnOptions::Output::kFile:
      posix_spawn_file_actions_addopen(actions.get(), STDOUT_FILENO, options.output_file.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
      posix_spawn_file_actions_adddup2(actions.get(), STDOUT_FILENO, STDERR_FILENO);
      break;
  }
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, cargv[0], actions.get(), nullptr, cargv.data(), envp.data());
  if (pipe_fds[1] >= 0) close(pipe_fds[1]);
  if (rc != 0) {
    if (pipe_fds[0] >= 0) close(pipe_fds[0]);
    return Fail(Error::NotFound(fmt::format("cannot run '{}': {}", argv[0], std::strerror(rc))));
  }
  return Subprocess(pid, pipe_fds[0]);
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      output_fd_(std::exchange(other.output_fd_, -1)),
      exit_code_(other.exit_code_) {}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    if (output_fd_ >= 0) close(output_fd_);
    pid_ = std::exchange(other.pid_, -1);
    output_fd_ = std::exchange(other.output_fd_, -1);
    exit_code_ = other.exit_code_;
  }
  return *this;
}

Subprocess::~Subprocess() {
  if (output_fd_ >= 0) close(output_fd_);
}

int Subprocess::ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::optional<int> Subprocess::Poll() {
  if (exit_code_ || pid_ < 0) return exit_code_;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0 || (r < 0 && errno == EINTR)) return std::nullopt;
  exit_code_ = r < 0 ? 1 : ExitCode(status);
  return exit_code_;
}

int Subprocess::Wait() {
  if (exit_code_ || pid_ < 0) return exit_code_.value_or(1);
  int status = 0;
  pid_t r = 0;
  while ((r = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  exit_code_ = r < 0 ? 1 : ExitCode(status);
  return *exit_code_;
}

void Subprocess::Signal(int sig) const {
  if (pid_ > 0 && !exit_code_) ::kill(pid_, sig);
}

bool Subprocess::ReadOutput(Duration timeout, std::string* out) {
  if (output_fd_ < 0) return false;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(timeout).count();
  char buffer[4096];
  while (true) {
    pollfd p{output_fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::clamp<long long>(ms, 0, 1'000'000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return true;  // nothing (more) within the timeout
    const ssize_t n = read(output_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(output_fd_);
      output_fd_ = -1;
      return false;
    }
    out->append(buffer, static_cast<std::size_t>(n));
    return true;
  }
}

Result<CapturedRun> RunCaptured(const std::vector<std::string>& argv, Duration timeout,
                                std::size_t max_output, const Clock& clock, bool with_stderr) {
  HEADROOM_ASSIGN_OR_RETURN(
      Subprocess child,
      Subprocess::Start(argv, {.output = with_stderr ? SpawnOptions::Output::kCaptureBoth
                                                     : SpawnOptions::Output::kCapture}));
  CapturedRun run;
  const TimePoint deadline = clock.Now() + timeout;
  while (true) {
    const Duration left = deadline - clock.Now();
    if (left <= Duration::zero()) {
      run.timed_out = true;
      break;
    }
    if (!child.ReadOutput(left, &run.output)) break;  // the command closed its output
    if (run.output.size() > max_output) break;        // do not buffer a runaway
  }
  run.truncated = run.output.size() > max_output;
  if (run.truncated) run.output.resize(max_output);
  if (run.timed_out || run.truncated) child.Signal(SIGKILL);
  run.exit_code = child.Wait();
  return run;
}

namespace {

// The children SignalForwarder passes signals on to: a fixed table, read by the handler
// (async-signal-safe: atomics and kill() only).
constexpr std::size_t kMaxForwarded = 64;
std::array<std::atomic<pid_t>, kMaxForwarded> g_children{};
std::atomic<int> g_last_signal{0};
struct sigaction g_previous_int {};
struct sigaction g_previous_term {};

extern "C" void ForwardToChildren(int sig) {
  g_last_signal.store(sig);
  for (auto& child : g_children) {
    const pid_t pid = child.load();
    if (pid > 0) kill(pid, sig);
  }
}

}  // namespace

SignalForwarder::SignalForwarder() {
  for (auto& child : g_children) child.store(0);
  g_last_signal.store(0);
  struct sigaction action {};
  action.sa_handler = ForwardToChildren;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

SignalForwarder::~SignalForwarder() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
  for (auto& child : g_children) child.store(0);
}

void SignalForwarder::Add(pid_t child) {
  for (auto& slot : g_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, child)) return;
  }
}

void SignalForwarder::Remove(pid_t child) {
  for (auto& slot : g_children) {
    pid_t mine = child;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

int SignalForwarder::LastSignal() { return g_last_signal.load(); }

}  // namespace headroom::core
