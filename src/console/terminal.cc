#include "console/terminal.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace headroom::console {
namespace {

struct Settings {
  TerminalSettings options;
  bool stdout_color = false;
  bool stderr_color = false;
};

// Written once by ConfigureTerminal before any command runs (see the header).
Settings& Current() {
  static Settings settings;
  return settings;
}

bool StreamColor(ColorMode mode, std::FILE* stream) {
  return ColorWanted(mode, isatty(fileno(stream)) != 0, std::getenv("NO_COLOR"), std::getenv("CI"));
}

}  // namespace

core::Result<ColorMode> ParseColorMode(std::string_view text) {
  if (text == "auto") return ColorMode::kAuto;
  if (text == "always") return ColorMode::kAlways;
  if (text == "never") return ColorMode::kNever;
  return core::Fail(core::Error::InvalidArgument(
      fmt::format("--color '{}' is not one of auto, always, never", text)));
}

bool ColorWanted(ColorMode mode, bool is_terminal, const char* no_color, const char* ci) {
  switch (mode) {
    case ColorMode::kAlways:
      return true;
    case ColorMode::kNever:
      return false;
    case ColorMode::kAuto:
      break;
  }
  const bool no_color_set = no_color != nullptr && no_color[0] != '\0';
  return is_terminal && !no_color_set && ci == nullptr;
}

void ConfigureTerminal(const TerminalSettings& settings) {
  Settings& s = Current();
  s.options = settings;
  s.stdout_color = StreamColor(settings.color, stdout);
  s.stderr_color = StreamColor(settings.color, stderr);
  // Log lines are diagnostics: stderr, never mixed into the results on stdout (spdlog's own
  // default logger writes to stdout).
  spdlog::drop("headroom");
  auto logger = spdlog::stderr_color_mt("headroom", LogColorMode());
  spdlog::set_default_logger(logger);
  spdlog::set_level(LogLevel(spdlog::level::warn));
}

bool Quiet() { return Current().options.quiet; }

format::TextStyle StdoutStyle() { return format::TextStyle(Current().stdout_color); }
format::TextStyle StderrStyle() { return format::TextStyle(Current().stderr_color); }

spdlog::level::level_enum LogLevel(spdlog::level::level_enum normal) {
  if (Current().options.verbose) return spdlog::level::debug;
  if (Current().options.quiet) return std::max(normal, spdlog::level::warn);
  return normal;
}

spdlog::color_mode LogColorMode() {
  return Current().stderr_color ? spdlog::color_mode::always : spdlog::color_mode::never;
}

void UseDaemonLogger(const std::string& name) {
  spdlog::set_default_logger(spdlog::stderr_color_mt(name, LogColorMode()));
  spdlog::set_level(LogLevel(spdlog::level::info));
}

void PrintError(std::string_view message) {
  std::fputs(fmt::format("{} {}\n", StderrStyle().Red("headroom:"), message).c_str(), stderr);
}

void PrintWarning(std::string_view message) {
  std::fputs(fmt::format("headroom: {} {}\n", StderrStyle().Yellow("warning:"), message).c_str(),
             stderr);
}

void PrintNote(std::string_view message) {
  if (Quiet()) return;
  std::fputs(fmt::format("headroom: {}\n", message).c_str(), stderr);
}

void PrintNoteOut(std::string_view text) {
  if (Quiet()) return;
  std::cout << text;
}

}  // namespace headroom::console
