// What every subcommand shares: global flags, backend selection (the composition root picks
// the Device implementation), exit codes, and error printing. Not thread-safe (CLI start-up).
#ifndef HEADROOM_CLI_COMMON_H_
#define HEADROOM_CLI_COMMON_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/context.h"
#include "console/progress.h"
#include "console/terminal.h"
#include "core/result.h"
#include "core/time.h"
#include "report/result_dir.h"

namespace headroom::cli {

// The console every command prints through (console/terminal.h, console/progress.h).
using console::PrintError;
using console::PrintNote;
using console::PrintNoteOut;
using console::PrintWarning;
using console::ProgressBar;
using console::ProgressWanted;
using console::StdoutStyle;
using console::UseDaemonLogger;

// What the commands compose their work from (app/context.h).
using app::BackendOptions;
using app::DeviceSet;
using app::EngineChoice;
using app::EngineOptions;

// Exit codes (README): 0 ok, 1 runtime error, 2 usage or input error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitUsage = 2;

struct GlobalOptions {
  std::string catalog_dir;  // empty: the catalog compiled into the binary
  bool verbose = false;
  bool quiet = false;
  std::string color = "auto";  // --color: auto, always or never (console/terminal.h decides)
};

// The flags of app::BackendOptions and app::EngineOptions.
void AddBackendOptions(CLI::App* command, BackendOptions* options);
void AddEngineOptions(CLI::App* command, EngineOptions* options);

// What a command that writes a result prints when it is done.
struct ResultOutput {
  bool json = false;  // --json: `json_text` instead of `text`
  std::string json_text = {};
  std::string text = {};
  std::string wrote = {};  // after the text, what was written (a note: nothing under --quiet)
  std::optional<std::string> report = {};  // report.html's path: after the text, or on stderr
};
// Prints `output`; kExitOk.
int PrintResult(const ResultOutput& output);

// app::WriteReport with its warnings printed.
[[nodiscard]] core::Result<std::string> WriteReport(report::ResultKind kind,
                                                    const std::string& dir);

// Prints "headroom: <message>" on stderr (PrintError) and returns the exit code for the error.
int ReportError(const core::Error& error);

// Set by SIGINT/SIGTERM; long-running commands poll it and stop cleanly.
std::atomic<bool>& StopRequested();
// Set by a second SIGINT or SIGTERM after the first: stop without waiting (the agent's drain).
std::atomic<bool>& StopInsisted();
void InstallStopHandlers();

}  // namespace headroom::cli

#endif  // HEADROOM_CLI_COMMON_H_
