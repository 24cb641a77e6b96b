// `headroom completion bash`: prints the bash completion script generated from the command line
// itself (console/bash_completion.h); `headroom man-pages --out DIR`: writes the man pages
// generated from it (console/man_pages.h).
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "console/bash_completion.h"
#include "console/man_pages.h"

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
      std::cout << console::BashCompletion(app);
      return kExitOk;
    };
  });
}

void RegisterManPages(CLI::App& app, RunFunction* run) {
  auto* cmd = app.add_subcommand(
      "man-pages", "Write the man pages of every command (roff, section 1) into a directory");
  auto out = std::make_shared<std::string>();
  cmd->add_option("--out", *out, "The directory (created if missing)")
      ->required()
      ->option_text("DIR");
  cmd->callback([run, &app, out] {
    *run = [&app, out] {
      const console::Manual manual{
          .version = std::string("headroom ") + HEADROOM_VERSION,
          .exit_status = "0 ok, 1 runtime error, 2 usage or input error.",
          .docs = "The guides and references in /usr/share/doc/headroom/."};
      auto paths = console::WriteManPages(app, manual, *out);
      if (!paths) return ReportError(paths.error().WithContext("--out"));
      for (const std::string& path : *paths) std::cout << path << "\n";
      return kExitOk;
    };
  });
}

}  // namespace headroom::cli
