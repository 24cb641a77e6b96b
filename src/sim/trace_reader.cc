#include "sim/trace_reader.h"

#include <array>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "core/files.h"
#include "core/parse.h"

namespace headroom::sim {
namespace {

constexpr std::string_view kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens";
constexpr std::string_view kGenericHeader = "arrival_s,prompt_tokens,output_tokens";

// The number the `count` digits at `pos` spell, or -1 when they are not all digits (the caller
// has checked that they are in the text).
int Digits(std::string_view text, size_t pos, size_t count) {
  int value = 0;
  for (size_t i = pos; i < pos + count; ++i) {
    const unsigned digit = static_cast<unsigned char>(text[i]) - unsigned{'0'};
    if (digit > 9) return -1;
    value = value * 10 + static_cast<int>(digit);
  }
  return value;
}

core::Result<int> Tokens(std::string_view text, std::string_view name) {
  // A trace's every line holds two: plain digits (all of them, in the traces) read directly; all
  // else (spaces, signs, junk, too long) as core::ParseInteger reads it.
  if (!text.empty() && text.size() <= 8) {
    const int digits = Digits(text, 0, text.size());
    if (digits >= 0) return digits;
  }
  auto v = core::ParseInteger(text);
  if (!v || *v < 0 || *v > 100'000'000) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} '{}' is not a token count", name, core::Trim(text))));
  }
  return static_cast<int>(*v);
}

// An input stream over text it does not own. Written here because the standard's own
// (std::ispanstream) is C++23; a read-only get area over the text is all it takes.
class ViewStream final : public std::istream {
 public:
  explicit ViewStream(std::string_view text) : std::istream(nullptr), buffer_(text) {
    rdbuf(&buffer_);
  }

 private:
  struct Buffer final : std::streambuf {
    explicit Buffer(std::string_view text) {
      // The get area is only read from: setg takes char*, the text is never written.
      char* begin = const_cast<char*>(text.data());
      setg(begin, begin, begin + text.size());
    }
  };
  Buffer buffer_;
};

// A row's priority column: hp/high, lp/low (any case), or empty for none.
core::Result<Priority> ParsePriority(std::string_view field) {
  const std::string p = core::ToLower(core::Trim(field));
  if (p == "hp" || p == "high") return Priority::kHigh;
  if (p == "lp" || p == "low") return Priority::kLow;
  if (p.empty()) return Priority::kUnspecified;
  return core::Fail(core::Error::InvalidArgument(
      fmt::format("priority '{}' is not hp or lp", core::Trim(field))));
}

// A row's cached_tokens column: a token count no larger than the row's prompt, or empty where
// the log did not record it for that request.
core::Result<std::optional<int>> CachedTokens(std::string_view field, const TraceRequest& r) {
  if (core::Trim(field).empty()) return std::optional<int>();
  HEADROOM_ASSIGN_OR_RETURN(const int cached, Tokens(field, "cached_tokens"));
  if (cached > r.prompt_tokens) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "cached_tokens {} is more than the prompt's {} tokens", cached, r.prompt_tokens)));
  }
  return std::optional<int>(cached);
}

// Whether a generic header has the cached_tokens column; nullopt when it is not one of the four
// generic headers. The columns' order is fixed, so that a row's fields are read by position.
std::optional<bool> GenericHeaderHasCached(std::string_view header) {
  const std::string base(kGenericHeader);
  if (header == base || header == base + ",priority") return false;
  if (header == base + ",cached_tokens" || header == base + ",cached_tokens,priority") return true;
  return std::nullopt;
}

}  // namespace

core::Result<core::Duration> ParseAzureTimestamp(std::string_view text) {
  const std::string_view t = core::Trim(text);
  auto bad = [&] {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("'{}' is not a timestamp like 2023-11-16 18:17:03.9799600", t)));
  };
  if (t.size() < 19 || t[4] != '-' || t[7] != '-' || (t[10] != ' ' && t[10] != 'T') ||
      t[13] != ':' || t[16] != ':') {
    return bad();
  }
  const int y = Digits(t, 0, 4), mo = Digits(t, 5, 2), d = Digits(t, 8, 2);
  const int h = Digits(t, 11, 2), mi = Digits(t, 14, 2), s = Digits(t, 17, 2);
  if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || s < 0 || h > 23 || mi > 59 || s > 60) {
    return bad();
  }
  const std::chrono::year_month_day date{std::chrono::year(y),
                                         std::chrono::month(static_cast<unsigned>(mo)),
                                         std::chrono::day(static_cast<unsigned>(d))};
  if (!date.ok()) return bad();
  // Nanoseconds since 1970 in int64 reach 2262; a year past that wrapped (2263 read as 1678).
  // Traces are recent: 1970 to 2200 keeps every difference of two stamps in range too.
  if (y < 1970 || y > 2200) {
    return core::Fail(
        core::Error::InvalidArgument(fmt::format("'{}': year {} is outside 1970-2200", t, y)));
  }
  long long fraction_ns = 0;
  size_t pos = 19;
  if (pos < t.size() && t[pos] == '.') {
    // The first nine fractional digits are the nanoseconds (tenths of a second first); any after
    // them are below a nanosecond and dropped.
    constexpr std::array<long long, 10> kScale = {
        1'000'000'000, 100'000'000, 10'000'000, 1'000'000, 100'000, 10'000, 1'000, 100, 10, 1};
    ++pos;
    const size_t start = pos;
    while (pos < t.size() && static_cast<unsigned char>(t[pos]) - unsigned{'0'} <= 9) {
      if (pos - start < 9) fraction_ns = fraction_ns * 10 + (t[pos] - '0');
      ++pos;
    }
    if (pos == start) return bad();
    fraction_ns *= kScale[std::min<size_t>(pos - start, 9)];
  }
  // Both years' traces are UTC; 2024 says so with "+00:00" (or "Z" in later datasets).
  const std::string_view zone = t.substr(pos);
  if (!zone.empty() && zone != "+00:00" && zone != "Z") return bad();
  const std::chrono::seconds whole = std::chrono::sys_days(date).time_since_epoch() +
                                     std::chrono::hours(h) + std::chrono::minutes(mi) +
                                     std::chrono::seconds(s);
  return std::chrono::duration_cast<core::Duration>(whole) + core::Duration(fraction_ns);
}

core::Result<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path) {
  // Refused first if it is not a regular file: a FIFO would block the stream's open for ever.
  // (A file swapped for one in between is the user's own doing, and a regular one is read.)
  if (auto file = core::RegularFile::Open(path); !file) return core::Fail(file.error());
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) return core::Fail(core::Error::NotFound(fmt::format("{}: cannot open", path)));
  return FromStream(path, std::move(in));
}

core::Result<std::unique_ptr<TraceReader>> TraceReader::FromText(std::string name,
                                                                 std::string text) {
  return FromStream(std::move(name), std::make_unique<std::istringstream>(std::move(text)));
}

core::Result<std::unique_ptr<TraceReader>> TraceReader::FromView(std::string name,
                                                                 std::string_view text) {
  return FromStream(std::move(name), std::make_unique<ViewStream>(text));
}

core::Result<std::unique_ptr<TraceReader>> TraceReader::FromStream(
    std::string path, std::unique_ptr<std::istream> in) {
  std::string header;
  std::getline(*in, header);
  const std::string_view h = core::Trim(header);
  Format format;
  bool cached_column = false;
  if (h == kAzureHeader) {
    format = Format::kAzure;
  } else if (auto cached = GenericHeaderHasCached(h)) {
    format = Format::kGeneric;
    cached_column = *cached;
  } else {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "{}:1: unknown trace header '{}' (expected '{}' or '{}[,cached_tokens][,priority]')", path,
        h, kAzureHeader, kGenericHeader)));
  }
  return std::unique_ptr<TraceReader>(
      new TraceReader(std::move(path), std::move(in), format, cached_column));
}

core::Result<TraceRequest> TraceReader::ParseAzure(std::string_view line) {
  std::array<std::string_view, 3> f;
  const std::size_t fields = core::SplitInto(line, ',', f);
  if (fields != 3) {
    return core::Fail(
        core::Error::InvalidArgument(fmt::format("expected 3 fields, found {}", fields)));
  }
  TraceRequest r;
  HEADROOM_ASSIGN_OR_RETURN(const core::Duration stamp, ParseAzureTimestamp(f[0]));
  // Relative to the trace's first request, in exact nanoseconds before converting.
  if (!first_epoch_) first_epoch_ = stamp;
  r.arrival_s = core::ToSeconds(stamp - *first_epoch_);
  HEADROOM_ASSIGN_OR_RETURN(r.prompt_tokens, Tokens(f[1], "ContextTokens"));
  HEADROOM_ASSIGN_OR_RETURN(r.output_tokens, Tokens(f[2], "GeneratedTokens"));
  return r;
}

core::Result<TraceRequest> TraceReader::ParseGeneric(std::string_view line) const {
  std::array<std::string_view, 5> f;
  const std::size_t fields = core::SplitInto(line, ',', f);
  // Without its header naming it, a row may still end in a priority (as before the cached
  // column existed): the fixed columns, then the priority or not.
  const std::size_t fixed = cached_column_ ? 4 : 3;
  if (fields != fixed && fields != fixed + 1) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("expected {} or {} fields, found {}", fixed, fixed + 1, fields)));
  }
  TraceRequest r;
  auto arrival = core::ParseDouble(f[0]);
  if (!arrival || *arrival < 0) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("arrival_s '{}' is not a time in seconds", core::Trim(f[0]))));
  }
  r.arrival_s = *arrival;
  HEADROOM_ASSIGN_OR_RETURN(r.prompt_tokens, Tokens(f[1], "prompt_tokens"));
  HEADROOM_ASSIGN_OR_RETURN(r.output_tokens, Tokens(f[2], "output_tokens"));
  if (cached_column_) {
    HEADROOM_ASSIGN_OR_RETURN(r.cached_tokens, CachedTokens(f[3], r));
  }
  if (fields == fixed + 1) {
    HEADROOM_ASSIGN_OR_RETURN(r.priority, ParsePriority(f[fixed]));
  }
  return r;
}

core::Result<std::optional<TraceRequest>> TraceReader::Next() {
  while (std::getline(*in_, raw_)) {
    ++line_;
    const std::string_view line = core::Trim(raw_);  // drops the CR of CRLF endings
    if (line.empty()) continue;
    auto parsed = format_ == Format::kAzure ? ParseAzure(line) : ParseGeneric(line);
    if (!parsed) return core::Fail(parsed.error().WithContext(fmt::format("{}:{}", path_, line_)));
    const TraceRequest r = *parsed;
    if (r.arrival_s < last_arrival_s_) {
      return core::Fail(core::Error::InvalidArgument(fmt::format(
          "{}:{}: arrival goes back in time ({:.6f} s after {:.6f} s): the trace must be sorted",
          path_, line_, r.arrival_s, last_arrival_s_)));
    }
    last_arrival_s_ = r.arrival_s;
    return std::optional<TraceRequest>(r);
  }
  if (in_->bad()) return core::Fail(core::Error::DataLoss(fmt::format("{}: read failed", path_)));
  return std::optional<TraceRequest>();
}

}  // namespace headroom::sim
