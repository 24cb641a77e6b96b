// FormatAzureTimestamp (trace_writer.h): compiled into headroom_sim_results, which report/ links
// to print a trace's times without linking the simulator.
#include <chrono>
#include <cstdint>
#include <ratio>
#include <string>

#include <fmt/format.h>

#include "sim/trace_writer.h"

namespace headroom::sim {
namespace {

// The Azure traces' timestamp resolution.
using TimestampTicks = std::chrono::duration<std::int64_t, std::ratio<1, 10'000'000>>;  // 100 ns

}  // namespace

std::string FormatAzureTimestamp(core::Duration since_epoch) {
  const std::chrono::sys_time<core::Duration> t(since_epoch);
  const auto day = std::chrono::floor<std::chrono::days>(t);
  const std::chrono::year_month_day date(day);
  const std::chrono::hh_mm_ss<TimestampTicks> time(std::chrono::floor<TimestampTicks>(t - day));
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:07}", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                     time.hours().count(), time.minutes().count(), time.seconds().count(),
                     time.subseconds().count());
}

}  // namespace headroom::sim
