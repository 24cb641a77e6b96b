// DaemonProcess: runs the real `headroom` binary as a daemon for integration tests, reads the
// port it announces, signals it and collects its exit code. Test-only; not thread-safe.
#ifndef HEADROOM_TESTS_DAEMON_PROCESS_H_
#define HEADROOM_TESTS_DAEMON_PROCESS_H_

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace headroom::testing {

using std::chrono::milliseconds;

// One `headroom` daemon process (agent or controller): stdout through a pipe (the first line
// names the port), stderr to a file.
class DaemonProcess {
 public:
  // Runs `binary` (default: the headroom binary under test) with `args`.
  DaemonProcess(const std::vector<std::string>& args, const std::string& stderr_path,
                const std::vector<std::string>& env = {}, const char* binary = HEADROOM_BINARY)
      : stderr_path_(stderr_path) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      const int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(err, STDERR_FILENO);
      close(fds[0]);
      for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(binary));
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(binary, argv.data());
      _exit(127);
    }
    close(fds[1]);
    out_fd_ = fds[0];
  }
  ~DaemonProcess() {
    if (pid_ > 0 && !exit_code_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) close(out_fd_);
  }

  // The port from "listening on HOST:PORT", or nullopt after `timeout`.
  std::optional<int> WaitForPort(milliseconds timeout = milliseconds(8000)) {
    return PortAfter("listening on 127.0.0.1:", timeout);
  }
  // The port of the next line on stdout when it starts with `prefix` and the port follows it.
  std::optional<int> PortAfter(const std::string& prefix,
                               milliseconds timeout = milliseconds(8000)) {
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char c = 0;
      if (read(out_fd_, &c, 1) != 1) return std::nullopt;
      if (c == '\n') break;
      line += c;
    }
    if (line.rfind(prefix, 0) != 0) return std::nullopt;
    return std::stoi(line.substr(prefix.size()));
  }

  void Signal(int sig) { kill(pid_, sig); }
  pid_t pid() const { return pid_; }

  // The exit code (-signal when killed), or nullopt if still running after `timeout`.
  std::optional<int> Wait(milliseconds timeout = milliseconds(5000)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        return exit_code_;
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
    return std::nullopt;
  }

  std::string Stderr() const {
    std::ifstream in(stderr_path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  std::string stderr_path_;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::optional<int> exit_code_;
};

}  // namespace headroom::testing

#endif  // HEADROOM_TESTS_DAEMON_PROCESS_H_
