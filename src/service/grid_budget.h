// GridBudget: the controller's answer to the grid, which budget the row is asked to keep: the
// provisioned one, a daily window of the schedule (grid.budget_schedule, UTC), or a lower one a
// signal asked for through PUT /v1/budget until it expires (or DELETE /v1/budget ends it). A
// signal's budget wins over the schedule while it lasts. Each accepted or refused request leaves
// an audit record, written by the control loop with its next step's. Thread-safe: requests
// arrive on the HTTP threads, the control loop reads it every step.
#ifndef HEADROOM_SERVICE_GRID_BUDGET_H_
#define HEADROOM_SERVICE_GRID_BUDGET_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "core/thread_annotations.h"
#include "core/units.h"
#include "service/budget_request.h"
#include "service/controller_config.h"

namespace headroom::service {

class GridBudget {
 public:
  GridBudget(GridConfig config, core::Watts provisioned);

  // The budget asked of the row at `now`: nullopt requested for the provisioned one.
  struct InForce {
    std::optional<core::Watts> requested;
    core::Duration comply_within{0};
    std::string source = "provisioned";  // "provisioned", "schedule" or "signal"
    std::string reason;
    std::optional<WallTime> since;
    std::optional<WallTime> until;
  };
  InForce At(WallTime now) const EXCLUDES(mu_);

  // PUT /v1/budget: the accepted budget, or the request's error (nothing changed).
  [[nodiscard]] core::Result<nlohmann::ordered_json> Put(std::string_view body, WallTime now)
      EXCLUDES(mu_);
  // DELETE /v1/budget: the signal's budget ends (kNotFound where none is set).
  [[nodiscard]] core::Result<nlohmann::ordered_json> Delete(WallTime now) EXCLUDES(mu_);
  // GET /v1/budget: in force now, the signal's, the schedule.
  nlohmann::ordered_json Json(WallTime now) const EXCLUDES(mu_);
  // The audit records of requests since the last call.
  std::vector<nlohmann::ordered_json> TakeAudit() EXCLUDES(mu_);
  std::uint64_t accepted() const EXCLUDES(mu_);
  std::uint64_t refused() const EXCLUDES(mu_);
  bool signal_enabled() const { return !config_.token.empty(); }
  const std::string& token() const { return config_.token; }

 private:
  struct Signal {
    core::Watts watts{0};
    WallTime begins;
    WallTime ends;
    core::Duration comply_within{0};
    std::string reason;
  };
  static nlohmann::ordered_json SignalJson(const Signal& s);
  void Audit(nlohmann::ordered_json record) REQUIRES(mu_);

  const GridConfig config_;
  const core::Watts provisioned_;
  mutable core::Mutex mu_;
  std::optional<Signal> signal_ GUARDED_BY(mu_);
  std::optional<WallTime> last_change_ GUARDED_BY(mu_);
  std::uint64_t accepted_ GUARDED_BY(mu_) = 0;
  std::uint64_t refused_ GUARDED_BY(mu_) = 0;
  std::vector<nlohmann::ordered_json> audit_ GUARDED_BY(mu_);
};

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_GRID_BUDGET_H_
