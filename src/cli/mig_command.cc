// `headroom mig`: the MIG catalog and layouts. `mig profiles` lists a GPU's GPU-instance
// profiles, `mig validate` checks a layout ("3g.40gb@0,2g.20gb@4,1g.10gb@6") against the
// placement rules, `mig layouts` lists every maximal layout of a set of profiles.
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/mig_catalog.h"
#include "cli/commands.h"
#include "console/terminal.h"
#include "report/mig_catalog_report.h"

namespace headroom::cli {
namespace {

// The profile classes `mig layouts` uses without --profiles: those of the brief's counts.
constexpr const char* kDefaultProfiles = "1g,2g,3g,4g,7g";

struct MigOptions {
  std::string gpu;
  std::string layout;
  std::string profiles = kDefaultProfiles;
  bool json = false;
};

int RunProfiles(const GlobalOptions& global, const MigOptions& o) {
  auto spec = app::MigProfiles({.catalog_dir = global.catalog_dir, .gpu = o.gpu});
  if (!spec) return ReportError(spec.error());
  std::cout << report::MigProfilesText(*spec, StdoutStyle());
  return kExitOk;
}

int RunValidate(const GlobalOptions& global, const MigOptions& o) {
  auto checked =
      app::MigValidate({.catalog_dir = global.catalog_dir, .gpu = o.gpu, .layout = o.layout});
  if (!checked) return ReportError(checked.error());
  if (!checked->violation.empty()) {
    PrintError(fmt::format("invalid layout on {}: {}", checked->spec.name, checked->violation));
    return kExitRuntime;
  }
  std::cout << report::ValidLayoutText(checked->spec, checked->layout);
  return kExitOk;
}

int RunLayouts(const GlobalOptions& global, const MigOptions& o) {
  auto found =
      app::MigLayouts({.catalog_dir = global.catalog_dir, .gpu = o.gpu, .profiles = o.profiles});
  if (!found) return ReportError(found.error());
  const auto& [spec, profiles, layouts] = *found;
  std::cout << (o.json ? report::MigLayoutsJson(*spec, profiles, layouts).dump(2) + "\n"
                       : report::MigLayoutsText(*spec, profiles, layouts));
  return kExitOk;
}

void AddGpuOption(CLI::App* command, MigOptions* o) {
  command->add_option("--gpu", o->gpu, "GPU type (catalog name or alias), e.g. a100-80gb-sxm")
      ->required();
}

}  // namespace

void RegisterMig(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  CLI::App* mig = app.add_subcommand("mig", "MIG profiles and layouts (catalog, validation)");
  mig->require_subcommand(1);

  CLI::App* profiles = mig->add_subcommand("profiles", "List a GPU's MIG GPU-instance profiles");
  AddGpuOption(profiles, OptionsRunBy(profiles, run, global, RunProfiles));

  CLI::App* validate = mig->add_subcommand(
      "validate", "Check a layout, e.g. 3g.40gb@0,2g.20gb@4,1g.10gb@6 (exit 1 if invalid)");
  auto* o = OptionsRunBy(validate, run, global, RunValidate);
  validate->add_option("layout", o->layout, "GPU instances as <profile>@<start slot>[/<n>c+...]")
      ->required();
  AddGpuOption(validate, o);

  CLI::App* layouts = mig->add_subcommand("layouts", "List every maximal layout of some profiles");
  o = OptionsRunBy(layouts, run, global, RunLayouts);
  AddGpuOption(layouts, o);
  layouts
      ->add_option("--profiles", o->profiles,
                   "Profile classes (1g, 1g+me, 1g.2x, 2g, 3g, 4g, 7g) or names, comma-separated")
      ->capture_default_str();
  layouts->add_flag("--json", o->json, "Print {\"gpu\", \"profiles\", \"layouts\"} as JSON");

  AddMigShow(mig, global, run);
  AddMigApply(mig, global, run);
  AddMigWorkloads(mig, global, run);
  AddMigPlan(mig, global, run);
  AddMigCharacterize(mig, global, run);
}

}  // namespace headroom::cli
