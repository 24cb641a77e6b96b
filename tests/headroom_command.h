// Headroom(): runs the headroom binary under test once, as a user would from a shell, and
// returns its exit code and output. Test-only.
#ifndef HEADROOM_TESTS_HEADROOM_COMMAND_H_
#define HEADROOM_TESTS_HEADROOM_COMMAND_H_

#include <array>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <sys/wait.h>

namespace headroom::testing {

struct CommandRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

// Runs `command` through sh: its exit code and stdout (and stderr where the command sends it).
inline CommandRun RunShell(const std::string& command) {
  CommandRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// Runs `env timeout 60 HEADROOM_BINARY args` through the shell; env is e.g. "VAR=value".
inline CommandRun Headroom(const std::string& args, const std::string& env = "") {
  return RunShell(fmt::format("{} timeout 60 {} {} 2>&1", env, HEADROOM_BINARY, args));
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `text` split into its lines (a one-line error is one line).
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace headroom::testing

#endif  // HEADROOM_TESTS_HEADROOM_COMMAND_H_
