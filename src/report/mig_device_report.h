// What `headroom mig show` and `headroom mig apply` print: a GPU's MIG mode, layout and instances
// as text or JSON, and an apply's plan and outcome. Pure; thread-compatible.
#ifndef HEADROOM_REPORT_MIG_DEVICE_REPORT_H_
#define HEADROOM_REPORT_MIG_DEVICE_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "format/text_style.h"
#include "gpu/device.h"
#include "gpu/mig_apply.h"
#include "gpu/mig_view.h"

namespace headroom::report {

// "GPU 0 (NAME, TYPE): MIG enabled", the layout and a table of GPU and compute instances.
std::string MigShowText(const gpu::GpuMigView& view, const format::TextStyle& style);
// One element of `mig show --json`'s "gpus".
nlohmann::ordered_json MigShowJson(const gpu::GpuMigView& view);

// The GPU, the layout before and after, the plan's steps and what became of them.
std::string MigApplyText(const gpu::MigApplyReport& report, int gpu_index,
                         const std::string& target, bool dry_run);
// One element of `mig apply --json`'s "gpus".
nlohmann::ordered_json MigApplyJson(const gpu::MigApplyReport& report, const gpu::DeviceInfo& info,
                                    const std::string& target, bool dry_run);
// The failed step's error with whether the rollback restored the layout, or what it left.
// REQUIRES: !report.ok().
std::string MigApplyFailure(const gpu::MigApplyReport& report);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MIG_DEVICE_REPORT_H_
