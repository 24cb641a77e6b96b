// What the MIG catalog commands print: `mig profiles` (a GPU's GPU-instance profiles as a table),
// `mig validate` (a valid layout and the slices it uses) and `mig layouts` (every maximal layout
// of some profiles, as text or JSON). Pure; thread-compatible.
#ifndef HEADROOM_REPORT_MIG_CATALOG_REPORT_H_
#define HEADROOM_REPORT_MIG_CATALOG_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "format/text_style.h"
#include "mig/layout.h"
#include "mig/profile.h"

namespace headroom::report {

// "MIG profiles of GPU: M memory slices, C compute slices" and one row per profile.
std::string MigProfilesText(const mig::GpuMigSpec& spec, const format::TextStyle& style);

// "valid on GPU: LAYOUT (m of M memory slices, c of C compute slices)".
// REQUIRES: ValidateLayout(spec, layout) succeeded.
std::string ValidLayoutText(const mig::GpuMigSpec& spec, const mig::Layout& layout);

// One layout a line, then "N maximal layouts (K distinct multisets) of PROFILES on GPU".
std::string MigLayoutsText(const mig::GpuMigSpec& spec,
                           const std::vector<const mig::GiProfile*>& profiles,
                           const std::vector<mig::Layout>& layouts);
// {"gpu", "profiles", "layouts"}.
nlohmann::ordered_json MigLayoutsJson(const mig::GpuMigSpec& spec,
                                      const std::vector<const mig::GiProfile*>& profiles,
                                      const std::vector<mig::Layout>& layouts);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MIG_CATALOG_REPORT_H_
