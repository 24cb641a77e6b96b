// `headroom completion bash`: prints the bash completion script generated from the command line
// itself (cli/bash_completion.h); `headroom man-pages --out DIR`: writes the man pages generated
// from it (cli/man_pages.h).
#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>

#include <fmt/format.h>

#include "cli/bash_completion.h"
#include "cli/commands.h"
#include "cli/man_pages.h"
#include "core/files.h"

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

void RegisterManPages(CLI::App& app, RunFunction* run) {
  auto* cmd = app.add_subcommand(
      "man-pages", "Write the man pages of every command (roff, section 1) into a directory");
  auto out = std::make_shared<std::string>();
  cmd->add_option("--out", *out, "The directory (created if missing)")
      ->required()
      ->option_text("DIR");
  cmd->callback([run, &app, out] {
    *run = [&app, out] {
      std::error_code ec;
      std::filesystem::create_directories(*out, ec);
      if (ec) {
        return ReportError(core::Error::InvalidArgument(
            fmt::format("--out {}: cannot create the directory: {}", *out, ec.message())));
      }
      for (const ManPage& page : ManPages(app, std::string("headroom ") + HEADROOM_VERSION)) {
        const std::string path = (std::filesystem::path(*out) / page.file).string();
        if (auto written = core::WriteFileAtomically(path, page.text); !written) {
          return ReportError(written.error());
        }
        std::cout << path << "\n";
      }
      return kExitOk;
    };
  });
}

}  // namespace headroom::cli
