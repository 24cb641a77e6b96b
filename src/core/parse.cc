#include "core/parse.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace headroom::core {
namespace {

struct UnitScale {
  std::string_view suffix;
  long long ns;
};

// Longest suffix first so that "ms" is not read as "m" + "s".
constexpr std::array<UnitScale, 7> kDurationUnits = {{
    {"ns", 1},
    {"us", 1'000},
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
    {"d", 86'400'000'000'000},
}};

constexpr long long kMaxNs = std::numeric_limits<long long>::max();
// Wide enough for a whole number of nanoseconds times a 19-digit fraction (GCC and clang).
__extension__ typedef __int128 Int128;  // NOLINT(modernize-use-using): __extension__ needs typedef

// "12" or "12.345" times a unit, in whole nanoseconds, exactly (a double would be off by a
// nanosecond or more beyond 2^53 ns, about 104 days); nullopt when it does not fit int64 ns or is
// not plain decimal (an exponent goes through ApproximateNs).
std::optional<long long> ExactNs(std::string_view number, long long unit_ns) {
  const size_t dot = number.find('.');
  const std::string_view whole = number.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? "" : number.substr(dot + 1);
  if (whole.empty() && frac.empty()) return std::nullopt;
  auto digits = [](std::string_view t) {
    return std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(whole) || !digits(frac)) return std::nullopt;
  long long w = 0;
  if (!whole.empty()) {
    const auto [ptr, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), w);
    if (ec != std::errc() || ptr != whole.data() + whole.size()) return std::nullopt;
  }
  if (w > kMaxNs / unit_ns) return std::nullopt;
  // The fraction, rounded to the nanosecond: at most 19 digits matter for any unit here.
  Int128 f = 0, scale = 1;
  for (char c : frac.substr(0, 19)) {
    f = f * 10 + (c - '0');
    scale *= 10;
  }
  const Int128 frac_ns = (f * unit_ns * 2 + scale) / (scale * 2);
  const Int128 total = static_cast<Int128>(w) * unit_ns + frac_ns;
  if (total > kMaxNs) return std::nullopt;
  return static_cast<long long>(total);
}

}  // namespace

namespace {

// std::isspace in the "C" locale (the only one headroom runs in: it never sets one), inline: a
// trace's every line and field is trimmed, and the library call cost more than the parse.
constexpr bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

}  // namespace

std::string_view Trim(std::string_view text) {
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
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

std::size_t SplitInto(std::string_view text, char separator, std::span<std::string_view> fields) {
  std::size_t count = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = text.find(separator, start);
    const std::string_view field =
        text.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start);
    if (count < fields.size()) fields[count] = field;
    ++count;
    if (pos == std::string_view::npos) return count;
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
    if (auto exact = ExactNs(number, unit.ns)) return Duration(*exact);
    auto value = ParseDouble(number);  // "1e3s" and the like
    if (!value || *value < 0) break;
    const double ns = *value * static_cast<double>(unit.ns);
    if (ns >= 9.2e18) break;  // below int64's 9.22e18 with room for rounding
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

Result<std::vector<int>> ParseCountList(std::string_view text) {
  HEADROOM_ASSIGN_OR_RETURN(std::vector<double> values, ParseValueList(text));
  std::vector<int> out;
  for (double v : values) {
    if (v < 1 || v > std::numeric_limits<int>::max() || v != std::floor(v)) {
      return Fail(Error::InvalidArgument(fmt::format("{} is not a positive whole number", v)));
    }
    out.push_back(static_cast<int>(v));
  }
  return out;
}

Result<double> ParsePercent(std::string_view text) {
  std::string_view t = Trim(text);
  if (t.ends_with('%')) t = Trim(t.substr(0, t.size() - 1));
  return ParseDouble(t);
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
    // Counted, not accumulated: `x += step` stops moving x where step is below x's precision
    // (1e20:1e20:1). The tolerance lets 1110:1410:75 include 1410 despite rounding.
    const auto count = static_cast<long long>(std::floor((stop - start) / step + 1e-9)) + 1;
    for (long long i = 0; i < count; ++i) values.push_back(start + static_cast<double>(i) * step);
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
