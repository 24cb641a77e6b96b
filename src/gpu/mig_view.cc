#include "gpu/mig_view.h"

#include "gpu/mig_apply.h"
#include "mig/layout.h"

namespace headroom::gpu {

core::Result<GpuMigView> ReadMigView(Device& device, const MigSpecLookup& lookup) {
  GpuMigView view{.info = device.info(), .type = device.info().catalog_type.value_or("unknown")};
  auto mode = device.MigMode();
  if (!mode) {
    if (mode.error().code() != core::Code::kUnimplemented) return core::Fail(mode.error());
    view.no_mig_reason = mode.error().message();
    return view;
  }
  view.mode = *mode;
  if (!mode->current) return view;
  HEADROOM_ASSIGN_OR_RETURN(mig::GpuMigSpec spec, lookup(device));
  HEADROOM_ASSIGN_OR_RETURN(view.instances, device.MigInstances());
  HEADROOM_ASSIGN_OR_RETURN(std::vector<mig::GpuInstanceState> state,
                            ToMigState(spec, view.instances));
  for (const mig::GpuInstanceState& gi : state) view.profile_names.push_back(gi.profile);
  view.layout = mig::FormatLayout(mig::ToLayout(spec, state));
  return view;
}

int GpuMigProfileCheck::mismatches() const {
  int n = 0;
  for (const MigProfileComparison& row : rows) n += row.ok() ? 0 : 1;
  return n;
}

core::Result<GpuMigProfileCheck> CheckDeviceMigProfiles(Device& device,
                                                        const MigSpecLookup& lookup) {
  GpuMigProfileCheck check{.info = device.info()};
  if (auto mode = device.MigMode(); mode) check.mode = *mode;
  HEADROOM_ASSIGN_OR_RETURN(std::vector<MigProfileInfo> driver, device.MigProfiles());
  mig::GpuMigSpec spec;
  if (auto found = lookup(device); found) {
    spec = *found;
    check.catalog = spec.name;
  } else {
    spec.name = "none";
    check.no_catalog_reason = found.error().message();
  }
  check.rows = CompareMigProfiles(spec, driver);
  return check;
}

}  // namespace headroom::gpu
