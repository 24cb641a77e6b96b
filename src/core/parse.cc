#include "core/parse.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace headroom::core {
namespace {

struct UnitScale {
  std::string_view suffix;
  double seconds;
};

// Longest suffix first so that "ms" is not read as "m" + "s".
constexpr std::array<UnitScale, 7> kDurationUnits = {{
    {"ns", 1e-9},
    {"us", 1e-6},
    {"ms", 1e-3},
    {"s", 1.0},
    {"m", 60.0},
    {"h", 3600.0},
    {"d", 86400.0},
}};

}  // namespace

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

std::string ToLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t pos = text.find(separator, start);
    if (pos == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, pos - start));
    start = pos + 1;
  }
}

Result<double> ParseDouble(std::string_view text) {
  const std::string_view t = Trim(text);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(value)) {
    return Fail(Error::InvalidArgument(fmt::format("'{}' is not a number", text)));
  }
  return value;
}

Result<long long> ParseInteger(std::string_view text) {
  const std::string_view t = Trim(text);
  long long value = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
    return Fail(Error::InvalidArgument(fmt::format("'{}' is not a whole number", text)));
  }
  return value;
}

Result<Duration> ParseDuration(std::string_view text) {
  const std::string_view t = Trim(text);
  for (const UnitScale& unit : kDurationUnits) {
    // Match the suffix only where the character before it is a digit or '.', so "ms" is not
    // taken as "m" followed by a stray "s".
    if (t.size() <= unit.suffix.size() || !t.ends_with(unit.suffix)) continue;
    const std::string_view number = t.substr(0, t.size() - unit.suffix.size());
    const char last = number.back();
    if (!std::isdigit(static_cast<unsigned char>(last)) && last != '.') continue;
    auto value = ParseDouble(number);
    if (!value || *value < 0) break;
    const double ns = *value * unit.seconds * 1e9;
    if (ns > 9.2e18) break;
    return Duration(static_cast<long long>(std::llround(ns)));
  }
  return Fail(Error::InvalidArgument(fmt::format(
      "'{}' is not a duration (expected a non-negative number with a unit: ns, us, ms, s, m, h, "
      "d; e.g. 100ms or 10s)",
      text)));
}

std::string FormatDuration(Duration d) {
  const long long ns = d.count();
  if (ns != 0 && ns % 3'600'000'000'000LL == 0) return fmt::format("{}h", ns / 3'600'000'000'000LL);
  if (ns != 0 && ns % 60'000'000'000LL == 0) return fmt::format("{}m", ns / 60'000'000'000LL);
  if (ns % 1'000'000'000LL == 0) return fmt::format("{}s", ns / 1'000'000'000LL);
  if (ns % 1'000'000LL == 0) return fmt::format("{}ms", ns / 1'000'000LL);
  if (ns % 1'000LL == 0) return fmt::format("{}us", ns / 1'000LL);
  return fmt::format("{}ns", ns);
}

Result<std::vector<double>> ParseValueList(std::string_view text) {
  const std::string_view t = Trim(text);
  std::vector<double> values;
  if (t.find(':') != std::string_view::npos) {
    const auto parts = Split(t, ':');
    if (parts.size() != 3) {
      return Fail(Error::InvalidArgument(
          fmt::format("'{}' is not a range (expected START:STOP:STEP, e.g. 1110:1410:75)", text)));
    }
    std::array<double, 3> v{};
    for (size_t i = 0; i < 3; ++i) {
      auto parsed = ParseDouble(parts[i]);
      if (!parsed) return Fail(parsed.error().WithContext(fmt::format("range '{}'", text)));
      v[i] = *parsed;
    }
    const auto [start, stop, step] = v;
    if (step <= 0 || start > stop) {
      return Fail(
          Error::InvalidArgument(fmt::format("range '{}' needs START <= STOP and STEP > 0", text)));
    }
    if ((stop - start) / step > 100000) {
      return Fail(Error::InvalidArgument(fmt::format("range '{}' has too many values", text)));
    }
    // Tolerance so that 1110:1410:75 includes 1410 despite rounding.
    for (double x = start; x <= stop + step * 1e-9; x += step) values.push_back(x);
    return values;
  }
  for (std::string_view part : Split(t, ',')) {
    auto parsed = ParseDouble(part);
    if (!parsed) return Fail(parsed.error().WithContext(fmt::format("list '{}'", text)));
    values.push_back(*parsed);
  }
  return values;
}

}  // namespace headroom::core
