// `headroom completion bash`: prints the bash completion script generated from the command line
// itself (cli/bash_completion.h).
#include <iostream>
#include <memory>

#include "cli/bash_completion.h"
#include "cli/commands.h"

namespace headroom::cli {

void RegisterCompletion(CLI::App& app, RunFunction* run) {
  auto* cmd = app.add_subcommand(
      "completion",
      "Print a shell completion script: source <(headroom completion bash) (docs/cli.md)");
  auto shell = std::make_shared<std::string>();
  cmd->add_option("SHELL", *shell, "The shell (bash)")->required()->check(CLI::IsMember({"bash"}));
  // `app` outlives the run: main() owns both. The callback holds `shell`, which CLI11 writes.
  cmd->callback([run, &app, shell] {
    *run = [&app] {
      std::cout << BashCompletion(app);
      return kExitOk;
    };
  });
}

}  // namespace headroom::cli
