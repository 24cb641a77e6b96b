// What `headroom mig characterize` (on the slice model) prints and plots beside results.csv: per
// workload MIG off against the fastest and the least-energy layout, as JSON or a text table, and
// the two plots of throughput and energy per sample with N equal instances relative to MIG off.
// Pure; thread-compatible.
#ifndef HEADROOM_REPORT_MIG_CHARACTERIZE_SUMMARY_H_
#define HEADROOM_REPORT_MIG_CHARACTERIZE_SUMMARY_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "format/plot.h"
#include "format/text_style.h"
#include "mig/characterize.h"
#include "report/mig_characterize_report.h"

namespace headroom::report {

// What --json prints; "results_csv" names DIR/results.csv.
nlohmann::ordered_json MigCharacterizeSummaryJson(const MigCharacterizeReport& report,
                                                  const std::string& out_dir);

// The heading and one row per workload that runs with MIG off.
std::string MigCharacterizeSummaryText(const MigCharacterizeReport& report,
                                       const format::TextStyle& style);

// mig-throughput and mig-energy: one line per workload over N = 1, 2, 3, 7 equal instances.
std::vector<format::Plot> MigScalingPlots(const std::string& gpu,
                                          const std::vector<mig::EqualInstanceScaling>& scaling);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MIG_CHARACTERIZE_SUMMARY_H_
