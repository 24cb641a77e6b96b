#include "policy/policy_factory.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "policy/policies.h"

namespace headroom::policy {
namespace {

struct Entry {
  std::string_view name;
  std::unique_ptr<RowPolicy> (*make)(const PolicyParams&);
};

constexpr Entry kPolicies[] = {
    {kUncappedPolicy, &MakeNonePolicy}, {"brake-only", &MakeBrakeOnlyPolicy},
    {"polca", &MakePolcaPolicy},        {"uniform", &MakeUniformPolicy},
    {"power-cap", &MakePowerCapPolicy}, {"polca-ladder", &MakePolcaLadderPolicy},
    {"mix-aware", &MakeMixAwarePolicy},
};

}  // namespace

std::vector<std::string> PolicyNames() {
  std::vector<std::string> names;
  for (const Entry& entry : kPolicies) names.emplace_back(entry.name);
  return names;
}

core::Result<std::unique_ptr<RowPolicy>> MakePolicy(std::string_view name,
                                                    const PolicyParams& params) {
  for (const Entry& entry : kPolicies) {
    if (entry.name != name) continue;
    if (auto valid = ValidateParams(params); !valid) {
      return core::Fail(valid.error().WithContext(fmt::format("policy {}", name)));
    }
    return entry.make(params);
  }
  return core::Fail(core::Error::NotFound(
      fmt::format("unknown policy '{}' (valid: {})", name, fmt::join(PolicyNames(), ", "))));
}

}  // namespace headroom::policy
