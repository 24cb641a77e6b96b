// What `headroom mig profiles`, `mig validate`, `mig layouts` and `mig workloads` do below their
// flags: a GPU type's MIG entry from the catalogs (--gpu), a layout checked against its placement
// rules, every maximal layout of some profiles, and the measured training workloads summarized
// on the slice model of a GPU type. No device is opened. Thread-compatible.
#ifndef HEADROOM_APP_MIG_CATALOG_H_
#define HEADROOM_APP_MIG_CATALOG_H_

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "mig/layout.h"
#include "mig/profile.h"
#include "mig/workload_summary.h"

namespace headroom::app {

struct MigGpuRequest {
  std::string catalog_dir = {};  // empty: the built-in catalogs
  std::string gpu = {};          // as --gpu: a MIG-catalog name or alias, or a hardware alias
};

// `mig profiles`: the GPU type's MIG entry; errors name --gpu.
[[nodiscard]] core::Result<mig::GpuMigSpec> MigProfiles(const MigGpuRequest& request);

struct MigValidateRequest {
  std::string catalog_dir = {};
  std::string gpu = {};
  std::string layout = {};  // as given: "3g.40gb@0,2g.20gb@4,1g.10gb@6"
};

struct MigValidateResult {
  mig::GpuMigSpec spec;
  mig::Layout layout;
  std::string violation = {};  // the first placement rule the layout breaks; empty: valid
};

// Errors name --gpu, or the layout's text that does not parse; a layout that parses but breaks
// a rule is a result (its violation), not an error.
[[nodiscard]] core::Result<MigValidateResult> MigValidate(const MigValidateRequest& request);

struct MigLayoutsRequest {
  std::string catalog_dir = {};
  std::string gpu = {};
  std::string profiles = {};  // as --profiles: classes (1g, 3g, ...) or names, comma-separated
};

struct MigLayoutsResult {
  // Owned here so that `profiles`, which point into it, survive a move.
  std::unique_ptr<const mig::GpuMigSpec> spec;
  std::vector<const mig::GiProfile*> profiles;
  std::vector<mig::Layout> layouts;  // every maximal layout of `profiles`
};

// Errors name --gpu or --profiles.
[[nodiscard]] core::Result<MigLayoutsResult> MigLayouts(const MigLayoutsRequest& request);

struct MigWorkloadsResult {
  mig::WorkloadsOnGpu summary;
  std::string reference_gpu;  // the GPU the workloads were measured on
};

// `mig workloads`: the measured workloads and what the slice model of --gpu derives from them.
// Errors name --gpu.
[[nodiscard]] core::Result<MigWorkloadsResult> MigWorkloads(const MigGpuRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_MIG_CATALOG_H_
