// What `headroom mig show --profiles` prints: per GPU the driver's GPU-instance profiles beside
// the MIG catalog's, one row per profile with a verdict, as text or JSON, and the closing line
// over all GPUs. Pure; thread-compatible.
#ifndef HEADROOM_REPORT_MIG_PROFILES_REPORT_H_
#define HEADROOM_REPORT_MIG_PROFILES_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "format/text_style.h"
#include "gpu/mig_view.h"

namespace headroom::report {

// The GPU's heading and its table; a differing cell reads "<driver> vs <catalog>".
std::string MigProfileCheckText(const gpu::GpuMigProfileCheck& check,
                                const format::TextStyle& style);
// One GPU: {"gpu", "catalog", "profiles", "match"}.
nlohmann::ordered_json MigProfileCheckJson(const gpu::GpuMigProfileCheck& check);
// What --json prints: one GPU's object, or an array of several.
nlohmann::ordered_json MigProfileChecksJson(const std::vector<gpu::GpuMigProfileCheck>& checks);
// The last line: all agree, or which profiles differ.
std::string MigProfileCheckSummary(const std::vector<gpu::GpuMigProfileCheck>& checks);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MIG_PROFILES_REPORT_H_
