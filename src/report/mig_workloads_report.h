// What `headroom mig workloads` prints: the measured training workloads and what the slice model
// derives from them on one GPU (mig::SummarizeWorkloads), as a table or JSON. Pure;
// thread-compatible.
#ifndef HEADROOM_REPORT_MIG_WORKLOADS_REPORT_H_
#define HEADROOM_REPORT_MIG_WORKLOADS_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "format/text_style.h"
#include "mig/workload_summary.h"

namespace headroom::report {

// A heading naming both GPUs, then one row per workload ("OOM" where the smallest instance is
// too small).
std::string MigWorkloadsText(const mig::WorkloadsOnGpu& summary, const std::string& reference_gpu,
                             const format::TextStyle& style);
// {"gpu", "reference_gpu", "workloads": [...]}, null where the smallest instance is too small.
nlohmann::ordered_json MigWorkloadsJson(const mig::WorkloadsOnGpu& summary,
                                        const std::string& reference_gpu);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MIG_WORKLOADS_REPORT_H_
