#include "gpu/mig_restorer.h"

#include "gpu/mig_apply.h"

namespace headroom::gpu {

mig::Layout RestorableLayout(const std::vector<mig::GpuInstanceState>& state) {
  mig::Layout layout;
  for (const mig::GpuInstanceState& gi : state) {
    mig::GpuInstance instance{.profile = gi.profile, .start = gi.start};
    // A lone compute instance is left implicit, as in the layouts a sweep applies; none gets one.
    if (gi.compute_instances.size() != 1) {
      for (const mig::ComputeInstanceState& ci : gi.compute_instances) {
        instance.compute_instances.push_back(ci.compute_slices);
      }
    }
    layout.instances.push_back(std::move(instance));
  }
  return layout;
}

core::Status LayoutRestorer::Restore() {
  if (restored_) return core::Ok();
  restored_ = true;
  HEADROOM_ASSIGN_OR_RETURN(MigApplyReport report,
                            ApplyMigLayout(device_, spec_, original_, {.force = true}));
  if (!report.ok()) return core::Fail(*report.error);
  return core::Ok();
}

MigModeRestorer::~MigModeRestorer() {
  if (auto off = device_.SetMigMode(false); !off && on_error_) on_error_(off.error());
}

}  // namespace headroom::gpu
