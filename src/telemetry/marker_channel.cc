#include "telemetry/marker_channel.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/parse.h"

namespace headroom::telemetry {

core::Result<std::unique_ptr<MarkerChannel>> MarkerChannel::Create(Handlers handlers) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = fmt::format("{}/headroom-XXXXXX", tmp != nullptr && *tmp ? tmp : "/tmp");
  if (mkdtemp(templ.data()) == nullptr) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("cannot create a directory for the marker FIFO: {}", std::strerror(errno))));
  }
  const std::string path = templ + "/markers";
  if (mkfifo(path.c_str(), 0600) != 0) {
    rmdir(templ.c_str());
    return core::Fail(core::Error::Unavailable(
        fmt::format("cannot create the marker FIFO {}: {}", path, std::strerror(errno))));
  }
  // Opened read-write so that the FIFO always has a writer: a command that opens and closes it
  // several times never makes us see end-of-file.
  const int fd = open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    unlink(path.c_str());
    rmdir(templ.c_str());
    return core::Fail(core::Error::Unavailable(
        fmt::format("cannot open the marker FIFO {}: {}", path, std::strerror(errno))));
  }
  return std::unique_ptr<MarkerChannel>(new MarkerChannel(templ, path, fd, std::move(handlers)));
}

MarkerChannel::MarkerChannel(std::string dir, std::string path, int fd, Handlers handlers)
    : dir_(std::move(dir)), path_(std::move(path)), fd_(fd), handlers_(std::move(handlers)) {
  thread_ = std::thread([this] { Run(); });
}

MarkerChannel::~MarkerChannel() {
  Close();
  close(fd_);
  unlink(path_.c_str());
  rmdir(dir_.c_str());
}

void MarkerChannel::Close() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

std::string MarkerChannel::Apply(const std::string& line, const Handlers& handlers) {
  const std::string_view text = core::Trim(line);
  if (text.empty()) return "";
  if (text == "phase") return "marker 'phase' needs a name";  // its blanks were trimmed
  if (text.starts_with("phase ")) {
    handlers.phase(std::string(core::Trim(text.substr(6))));
    return "";
  }
  if (text.starts_with("work ")) {
    auto units = core::ParseDouble(text.substr(5));
    if (!units || *units < 0) return fmt::format("marker '{}': work needs a number >= 0", text);
    handlers.work(*units);
    return "";
  }
  return fmt::format("unknown marker '{}' (expected 'phase NAME' or 'work N')", text);
}

void MarkerChannel::Run() {
  std::string partial;
  char buffer[4096];
  while (true) {
    pollfd pfd{fd_, POLLIN, 0};
    const int ready = poll(&pfd, 1, 50);
    if (ready > 0) {
      const ssize_t n = read(fd_, buffer, sizeof buffer);
      if (n > 0) {
        partial.append(buffer, static_cast<size_t>(n));
        size_t newline = 0;
        while ((newline = partial.find('\n')) != std::string::npos) {
          const std::string problem = Apply(partial.substr(0, newline), handlers_);
          if (!problem.empty() && handlers_.warning) handlers_.warning(problem);
          partial.erase(0, newline + 1);
        }
        continue;  // drain before looking at the stop flag
      }
    }
    if (stop_.load()) break;
  }
  if (!partial.empty()) Apply(partial, handlers_);
}

}  // namespace headroom::telemetry
