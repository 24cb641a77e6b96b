// Strict parsers for the values users type (durations, numbers, ranges). Each returns an
// InvalidArgument error naming the bad text, never a silent default. Pure functions.
#ifndef HEADROOM_CORE_PARSE_H_
#define HEADROOM_CORE_PARSE_H_

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/time.h"

namespace headroom::core {

// "100ms", "10s", "1.5s", "2m", "1h", "250us", "1d". A bare number is rejected: units are
// required so that "10" is never read as the wrong one.
[[nodiscard]] Result<Duration> ParseDuration(std::string_view text);
// "1.5s", "100ms", "2h" etc.: a compact human form, exact for the values ParseDuration reads.
std::string FormatDuration(Duration d);

[[nodiscard]] Result<double> ParseDouble(std::string_view text);
[[nodiscard]] Result<long long> ParseInteger(std::string_view text);
// ParseValueList's values, each a whole number >= 1 (kInvalidArgument naming one that is not).
[[nodiscard]] Result<std::vector<int>> ParseCountList(std::string_view text);
// "30%", "30" or " 30 % " -> 30 (percent); ParseDouble's error otherwise.
[[nodiscard]] Result<double> ParsePercent(std::string_view text);

// "1110:1410:75" -> {1110, 1185, ..., 1410}; "250,300,400" -> as listed; "400" -> {400}.
// REQUIRES: for a range, step > 0 and start <= stop.
[[nodiscard]] Result<std::vector<double>> ParseValueList(std::string_view text);

std::vector<std::string_view> Split(std::string_view text, char separator);
// Split without allocating, for per-line parsing: the first fields go to `fields` (as many as
// fit), and the result is how many fields `text` has in all.
std::size_t SplitInto(std::string_view text, char separator, std::span<std::string_view> fields);
std::string_view Trim(std::string_view text);
std::string ToLower(std::string_view text);

}  // namespace headroom::core

#endif  // HEADROOM_CORE_PARSE_H_
