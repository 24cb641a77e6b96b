// What the MIG characterization's report is made of (`headroom mig characterize --report`):
// every layout x workload result of the sweep on the slice model (mig::LayoutResult, per
// instance and for the whole GPU, both attribution methods) and the inputs, kept in a directory
// that `headroom report DIR` reads alone:
//   results.csv             one row per instance (the sweep's table, as before)
//   mig-characterize.json   the inputs: GPU and its profiles, power limit, workloads, layouts,
//                           headroom's version
// Reading is strict: a missing file, column or field is an error naming the file and the line or
// field. Also the headline (the question and its answer), derived from the results.
// Thread-compatible.
#ifndef HEADROOM_REPORT_MIG_CHARACTERIZE_REPORT_H_
#define HEADROOM_REPORT_MIG_CHARACTERIZE_REPORT_H_

#include <string>
#include <vector>

#include "core/result.h"
#include "mig/characterize.h"
#include "report/mig_instances.h"

namespace headroom::report {

inline constexpr const char* kMigResultsFile = "results.csv";
inline constexpr const char* kMigCharacterizeFile = "mig-characterize.json";

struct MigCharacterizeInputs {
  double power_limit_w = 0;
  std::string version = {};
  MigGeometry geometry = {};
  std::vector<std::string> workloads = {};  // in sweep order
  std::vector<std::string> layouts = {};    // canonical text or "MIG off", in sweep order
};

struct MigCharacterizeReport {
  MigCharacterizeInputs inputs = {};
  std::vector<mig::LayoutResult> results = {};  // workload-major, layouts in sweep order
};

// Per workload: MIG off, and the layouts with the most whole-GPU samples/s and the fewest J per
// sample (nullptr when nothing runs).
struct MigWorkloadBest {
  std::string workload = {};
  const mig::LayoutResult* off = nullptr;
  const mig::LayoutResult* fastest = nullptr;
  const mig::LayoutResult* leanest = nullptr;
};
std::vector<MigWorkloadBest> BestPerWorkload(const std::vector<mig::LayoutResult>& results);

// results.csv's text: a header, then one row per instance of every layout x workload.
std::string MigResultsCsv(const std::vector<mig::LayoutResult>& results);

// Creates `dir` (--out) if needed; kUnavailable naming it when it cannot be.
[[nodiscard]] core::Status CreateMigOutDir(const std::string& dir);

// Creates `dir` if needed and writes results.csv and mig-characterize.json.
[[nodiscard]] core::Status WriteMigCharacterizeDir(const std::string& dir,
                                                   const MigCharacterizeReport& report);

// kNotFound when `dir` or one of its files is missing; kInvalidArgument, naming the file and the
// line or field, when a file does not hold what WriteMigCharacterizeDir writes.
[[nodiscard]] core::Result<MigCharacterizeReport> ReadMigCharacterizeDir(const std::string& dir);

// "Which MIG layout gives 3 training workloads the most throughput and the least energy per
// sample on one h200-141gb-sxm (power limit 700 W)?"
std::string MigCharacterizeQuestion(const MigCharacterizeReport& report);
// "Least energy per sample: 1g x7 for 2 of 3 workloads (J/sample -55.7% to -10.7% vs MIG off);
// most throughput: 1g x7 for 2 of 3 (+40.2% to +340.0%)".
std::string MigCharacterizeAnswer(const MigCharacterizeReport& report);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MIG_CHARACTERIZE_REPORT_H_
