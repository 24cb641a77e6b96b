// MakePolicy: a row policy by name, for the simulator's scenarios, the CLI and the controller
// daemon. Pure functions; thread-safe.
#ifndef HEADROOM_POLICY_POLICY_FACTORY_H_
#define HEADROOM_POLICY_POLICY_FACTORY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "policy/policies.h"
#include "policy/policy_params.h"
#include "policy/row_policy.h"

namespace headroom::policy {

// "none", "brake-only", "polca", "uniform", "power-cap", "polca-ladder", "mix-aware"
// (policies.h).
std::vector<std::string> PolicyNames();

// A fresh policy named `name` over `params`. Unknown name: NotFound listing the valid names;
// invalid params: ValidateParams()'s InvalidArgument, naming the field.
[[nodiscard]] core::Result<std::unique_ptr<RowPolicy>> MakePolicy(std::string_view name,
                                                                  const PolicyParams& params);

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_POLICY_FACTORY_H_
