// Terminal: the process's output settings (--quiet, --verbose, --color) and the one place that
// decides whether stdout and stderr get colour. Commands never decide colour themselves: they
// ask for StdoutStyle() / StderrStyle() and print errors, warnings and notes through the Print*
// functions here.
//
// The settings are process-wide because errors are printed from everywhere (ReportError): main()
// calls ConfigureTerminal once, right after parsing the command line and before any command runs;
// afterwards they are only read. Thread-safe to read after ConfigureTerminal; ConfigureTerminal
// itself is not thread-safe (start-up only).
#ifndef HEADROOM_CONSOLE_TERMINAL_H_
#define HEADROOM_CONSOLE_TERMINAL_H_

#include <string>
#include <string_view>

#include <spdlog/common.h>

#include "core/result.h"
#include "format/text_style.h"

namespace headroom::console {

enum class ColorMode { kAuto, kAlways, kNever };

// "auto", "always", "never" (the values of --color); kInvalidArgument otherwise.
[[nodiscard]] core::Result<ColorMode> ParseColorMode(std::string_view text);

// Whether a stream gets colour. kAlways and kNever as told (a flag on the command line overrides
// NO_COLOR, as https://no-color.org asks); kAuto only when the stream is a terminal, `no_color`
// (the NO_COLOR variable) is unset or empty, and `ci` (the CI variable) is unset. Pure.
bool ColorWanted(ColorMode mode, bool is_terminal, const char* no_color, const char* ci);

struct TerminalSettings {
  bool quiet = false;    // only results, warnings and errors
  bool verbose = false;  // debug log lines
  ColorMode color = ColorMode::kAuto;
};

// Decides colour for stdout and stderr from `settings`, the streams and the environment, and
// points spdlog's default logger at stderr with that colour and the level of LogLevel.
void ConfigureTerminal(const TerminalSettings& settings);

// --quiet: no progress bars, notes or informational log lines; results, warnings and errors
// only.
bool Quiet();

format::TextStyle StdoutStyle();
format::TextStyle StderrStyle();

// The log level: debug under --verbose, `normal` but at least warn under --quiet, `normal`
// otherwise.
spdlog::level::level_enum LogLevel(spdlog::level::level_enum normal);
// Colour for a daemon's spdlog stderr sink, as decided for stderr.
spdlog::color_mode LogColorMode();
// Makes a daemon's logger, `name`, on stderr the default: LogColorMode, LogLevel(info).
void UseDaemonLogger(const std::string& name);

// On stderr: "headroom: <message>", the prefix red where stderr has colour.
void PrintError(std::string_view message);
// On stderr: "headroom: warning: <message>", "warning" yellow; printed even under --quiet.
void PrintWarning(std::string_view message);
// On stderr: "headroom: <message>"; nothing under --quiet (progress and side effects).
void PrintNote(std::string_view message);
// On stdout: `text` as given (e.g. "wrote DIR/plan.json\n"); nothing under --quiet.
void PrintNoteOut(std::string_view text);

}  // namespace headroom::console

#endif  // HEADROOM_CONSOLE_TERMINAL_H_
