#include "cli/child_process.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace headroom::cli {
namespace {

std::atomic<pid_t> g_child{0};

extern "C" void ForwardSignal(int signal) {
  const pid_t child = g_child.load();
  if (child > 0) kill(child, signal);  // async-signal-safe
}

}  // namespace

core::Result<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& extra_env,
    std::function<void(const std::string&)> on_line) {
  if (argv.empty()) return core::Fail(core::Error::InvalidArgument("no command to run"));
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (const auto& [key, value] : extra_env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  int pipe_fds[2] = {-1, -1};
  if (on_line) {
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
      posix_spawn_file_actions_destroy(&actions);
      return core::Fail(core::Error::Internal(fmt::format("pipe: {}", std::strerror(errno))));
    }
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  }
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (pipe_fds[1] >= 0) close(pipe_fds[1]);
  if (rc != 0) {
    if (pipe_fds[0] >= 0) close(pipe_fds[0]);
    return core::Fail(
        core::Error::NotFound(fmt::format("cannot run '{}': {}", argv[0], std::strerror(rc))));
  }
  g_child.store(pid);
  std::signal(SIGINT, ForwardSignal);
  std::signal(SIGTERM, ForwardSignal);
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, pipe_fds[0], std::move(on_line)));
}

ChildProcess::~ChildProcess() {
  if (stdout_fd_ >= 0) close(stdout_fd_);
  g_child.store(0);
}

void ChildProcess::Pump(bool until_eof) {
  if (stdout_fd_ < 0) return;
  char buffer[4096];
  while (true) {
    pollfd pfd{stdout_fd_, POLLIN, 0};
    if (poll(&pfd, 1, until_eof ? 1000 : 0) <= 0) return;
    const ssize_t n = read(stdout_fd_, buffer, sizeof buffer);
    if (n <= 0) {
      if (!partial_.empty()) on_line_(partial_);
      partial_.clear();
      close(stdout_fd_);
      stdout_fd_ = -1;
      return;
    }
    std::fwrite(buffer, 1, static_cast<size_t>(n), stdout);
    std::fflush(stdout);
    partial_.append(buffer, static_cast<size_t>(n));
    size_t newline = 0;
    while ((newline = partial_.find('\n')) != std::string::npos) {
      on_line_(partial_.substr(0, newline));
      partial_.erase(0, newline + 1);
    }
  }
}

std::optional<int> ChildProcess::Poll() {
  Pump(false);
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0 || (r < 0 && errno == EINTR)) return std::nullopt;
  Pump(true);  // what the child wrote before it ended
  g_child.store(0);
  if (r < 0) return 1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace headroom::cli
