#include "telemetry/child_process.h"

#include <chrono>
#include <cstdio>

namespace headroom::telemetry {

core::Result<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& extra_env,
    std::function<void(const std::string&)> on_line) {
  HEADROOM_ASSIGN_OR_RETURN(
      core::Subprocess child,
      core::Subprocess::Start(argv, {.extra_env = extra_env,
                                     .output = on_line ? core::SpawnOptions::Output::kCapture
                                                       : core::SpawnOptions::Output::kInherit}));
  return std::unique_ptr<ChildProcess>(new ChildProcess(std::move(child), std::move(on_line)));
}

void ChildProcess::Pump(bool until_eof) {
  if (!on_line_ || !output_open_) return;
  while (true) {
    std::string chunk;
    output_open_ =
        child_.ReadOutput(until_eof ? std::chrono::seconds(1) : core::Duration::zero(), &chunk);
    std::fwrite(chunk.data(), 1, chunk.size(), stdout);
    std::fflush(stdout);
    partial_ += chunk;
    size_t newline = 0;
    while ((newline = partial_.find('\n')) != std::string::npos) {
      on_line_(partial_.substr(0, newline));
      partial_.erase(0, newline + 1);
    }
    if (!output_open_) {
      if (!partial_.empty()) on_line_(partial_);
      partial_.clear();
      return;
    }
    if (chunk.empty()) return;  // nothing more for now
  }
}

std::optional<int> ChildProcess::Poll() {
  Pump(false);
  const std::optional<int> code = child_.Poll();
  if (!code) return std::nullopt;
  Pump(true);  // what the child wrote before it ended
  forwarder_.Remove(child_.pid());
  return code;
}

}  // namespace headroom::telemetry
