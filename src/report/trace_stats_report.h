// What `headroom trace stats` prints of a trace's statistics: JSON, or text with the token
// distributions, requests by hour of day and, over several days, by date. Pure functions.
#ifndef HEADROOM_REPORT_TRACE_STATS_REPORT_H_
#define HEADROOM_REPORT_TRACE_STATS_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "format/text_style.h"
#include "sim/trace_stats.h"

namespace headroom::report {

// `trace`: the trace's name or path as given.
nlohmann::ordered_json TraceStatsJson(const std::string& trace, const sim::TraceStats& stats);
std::string TraceStatsText(const std::string& trace, const sim::TraceStats& stats,
                           const format::TextStyle& style = format::TextStyle());

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_TRACE_STATS_REPORT_H_
