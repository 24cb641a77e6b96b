#include "report/plot.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/files.h"

extern char** environ;

namespace headroom::report {
namespace {

// gnuplot strings are single-quoted; a quote inside is doubled.
std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

core::Status RenderPlot(const std::string& dir, const Plot& plot) {
  const std::string stem = dir + "/" + plot.name;
  std::string data;
  std::string plots;
  for (size_t i = 0; i < plot.series.size(); ++i) {
    const Series& s = plot.series[i];
    data += fmt::format("# {}\n", s.label);
    for (const auto& [x, y] : s.points) data += fmt::format("{} {}\n", x, y);
    data += "\n\n";  // gnuplot data blocks are separated by two blank lines
    plots +=
        fmt::format("{}{} index {} using 1:2 with {} lw 2 title {}", i == 0 ? "" : ", ",
                    Quote(stem + ".dat"), i, s.lines ? "linespoints" : "points", Quote(s.label));
  }
  HEADROOM_RETURN_IF_ERROR(core::WriteFileAtomically(stem + ".dat", data));
  const std::string script = fmt::format(
      "set terminal svg size 800,480 dynamic enhanced font 'sans,12' background '#ffffff'\n"
      "set output {}\nset title {}\nset xlabel {}\nset ylabel {}\nset grid\n"
      "set key outside right top\nplot {}\n",
      Quote(stem + ".svg"), Quote(plot.title), Quote(plot.x_label), Quote(plot.y_label), plots);
  HEADROOM_RETURN_IF_ERROR(core::WriteFileAtomically(stem + ".gp", script));

  const std::string gp_path = stem + ".gp";
  char* argv[] = {const_cast<char*>("gnuplot"), const_cast<char*>(gp_path.c_str()), nullptr};
  // gnuplot's own messages (e.g. "empty x range" for a one-point plot) go to <stem>.log, not
  // into the command's output.
  const std::string log_path = stem + ".log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (const int rc = spawned; rc != 0) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("{}.svg not drawn: cannot run gnuplot ({}); install Debian's gnuplot-nox", stem,
                    std::strerror(rc))));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return core::Fail(
        core::Error::Internal(fmt::format("gnuplot failed on {} (see {})", gp_path, log_path)));
  }
  return core::Ok();
}

}  // namespace headroom::report
