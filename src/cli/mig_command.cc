// `headroom mig`: the MIG catalog and layouts. `mig profiles` lists a GPU's GPU-instance
// profiles, `mig validate` checks a layout ("3g.40gb@0,2g.20gb@4,1g.10gb@6") against the
// placement rules, `mig layouts` lists every maximal layout of a set of profiles.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/terminal.h"
#include "core/parse.h"
#include "mig/enumerate.h"
#include "mig/layout.h"
#include "report/table.h"

namespace headroom::cli {
namespace {

using nlohmann::ordered_json;

// The profile classes `mig layouts` uses without --profiles: those of the brief's counts.
constexpr const char* kDefaultProfiles = "1g,2g,3g,4g,7g";

struct MigOptions {
  std::string gpu;
  std::string layout;
  std::string profiles = kDefaultProfiles;
  bool json = false;
};

std::string Engines(const mig::Engines& e) {
  return fmt::format("{}/{}/{}/{}/{}", e.copy, e.decoders, e.encoders, e.jpeg, e.ofa);
}

int RunProfiles(const GlobalOptions& global, const MigOptions& o) {
  auto spec = FindMigGpu(global, o.gpu);
  if (!spec) return ReportError(spec.error());
  using Align = report::TextTable::Align;
  report::TextTable table({{"PROFILE", Align::kLeft},
                           {"CLASS", Align::kLeft},
                           {"ID"},
                           {"NVML_ENUM", Align::kLeft},
                           {"SLICES_C/M"},
                           {"SMS"},
                           {"MEMORY_GIB"},
                           {"CE/DEC/ENC/JPG/OFA"},
                           {"STARTS", Align::kLeft},
                           {"MAX"}});
  for (const mig::GiProfile& p : spec->profiles) {
    table.AddRow({p.name, p.short_name, std::to_string(p.id),
                  fmt::format("NVML_{} ({:#x})", p.nvml_enum, p.nvml_value),
                  fmt::format("{}/{}", p.compute_slices, p.memory_slices),
                  std::to_string(p.sm_count), fmt::format("{:.2f}", p.memory_gib),
                  Engines(p.engines), fmt::format("{}", fmt::join(p.starts, ",")),
                  std::to_string(p.max_instances)});
  }
  std::cout << fmt::format("MIG profiles of {}: {} memory slices, {} compute slices\n", spec->name,
                           spec->memory_slices, spec->compute_slices)
            << table.Render(StdoutStyle());
  return kExitOk;
}

int RunValidate(const GlobalOptions& global, const MigOptions& o) {
  auto spec = FindMigGpu(global, o.gpu);
  if (!spec) return ReportError(spec.error());
  auto layout = mig::ParseLayout(o.layout);
  if (!layout) return ReportError(layout.error());
  if (auto valid = mig::ValidateLayout(*spec, *layout); !valid) {
    PrintError(fmt::format("invalid layout on {}: {}", spec->name, valid.error().message()));
    return kExitRuntime;
  }
  int memory = 0;
  int compute = 0;
  for (const mig::GpuInstance& instance : layout->instances) {
    const mig::GiProfile* p = spec->FindProfile(instance.profile);
    memory += p->memory_slices;
    compute += p->compute_slices;
  }
  std::cout << fmt::format("valid on {}: {} ({} of {} memory slices, {} of {} compute slices)\n",
                           spec->name, mig::FormatLayout(*layout), memory, spec->memory_slices,
                           compute, spec->compute_slices);
  return kExitOk;
}

int RunLayouts(const GlobalOptions& global, const MigOptions& o) {
  auto spec = FindMigGpu(global, o.gpu);
  if (!spec) return ReportError(spec.error());
  auto profiles = mig::ProfilesNamed(*spec, o.profiles);
  if (!profiles) return ReportError(profiles.error().WithContext("--profiles"));
  const std::vector<mig::Layout> layouts = mig::EnumerateMaximalLayouts(*spec, *profiles);
  std::vector<std::string> names;
  for (const mig::GiProfile* p : *profiles) names.push_back(p->name);
  if (o.json) {
    ordered_json out;
    out["gpu"] = spec->name;
    out["profiles"] = names;
    out["layouts"] = ordered_json::array();
    for (const mig::Layout& layout : layouts) out["layouts"].push_back(mig::FormatLayout(layout));
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  for (const mig::Layout& layout : layouts) std::cout << mig::FormatLayout(layout) << "\n";
  std::cout << fmt::format("{} maximal layouts ({} distinct multisets) of {} on {}\n",
                           layouts.size(), mig::CountDistinctMultisets(layouts),
                           fmt::join(names, ", "), spec->name);
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
