#include "policy/capping_ladder.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "core/check.h"
#include "core/parse.h"

namespace headroom::policy {
namespace {

const std::string kNormal = "normal";
const ServerTargets kNoTargets = {};

std::string ClimbReason(const Rung& rung, double p, double seen, const std::string& below,
                        core::Duration held) {
  std::string reason =
      seen > p ? fmt::format("predicted p={:.3f} (p={:.3f})", seen, p) : fmt::format("p={:.3f}", p);
  reason += fmt::format(" > {}={:g}", rung.threshold, rung.enter);
  if (rung.dwell > core::Duration::zero()) {
    reason += fmt::format(" after {} in {}", core::FormatDuration(held), below);
  }
  return reason;
}

std::string DescentReason(const Rung& rung, double seen) {
  return fmt::format("p={:.3f} < {}-{:g}={:g}", seen, rung.threshold, rung.enter - rung.exit,
                     rung.exit);
}

}  // namespace

CappingLadder::CappingLadder(std::vector<Rung> rungs) : rungs_(std::move(rungs)) {
  for (size_t i = 0; i < rungs_.size(); ++i) {
    HEADROOM_CHECK(rungs_[i].exit <= rungs_[i].enter) << "rung " << rungs_[i].state;
    HEADROOM_CHECK(i == 0 || rungs_[i - 1].enter <= rungs_[i].enter) << "rung " << rungs_[i].state;
  }
}

std::optional<CappingLadder::Move> CappingLadder::Step(double p, double predicted,
                                                       core::Duration now, bool may_lift) {
  const int from = level_;
  const int top = static_cast<int>(rungs_.size());
  std::string reason;
  while (level_ < top) {
    const Rung& next = rungs_[level_];
    const double seen = next.predictive ? std::max(p, predicted) : p;
    const core::Duration held = now - since_;
    if (!(seen > next.enter) || held < next.dwell) break;
    reason = ClimbReason(next, p, seen, state(), held);
    ++level_;
    since_ = now;
  }
  if (level_ == from && may_lift) {
    while (level_ > 0) {
      const Rung& here = rungs_[level_ - 1];
      const double seen = here.predictive ? std::max(p, predicted) : p;
      if (!(seen < here.exit)) break;
      reason = DescentReason(here, seen);
      --level_;
      since_ = now;
    }
  }
  if (level_ == from) return std::nullopt;
  return Move{.from = from, .to = level_, .reason = std::move(reason)};
}

const std::string& CappingLadder::state() const {
  return level_ == 0 ? kNormal : rungs_[level_ - 1].state;
}

const ServerTargets& CappingLadder::Targets(ServerPriority priority) const {
  if (level_ == 0) return kNoTargets;
  const Rung& rung = rungs_[level_ - 1];
  return priority == ServerPriority::kHigh ? rung.hp : rung.lp;
}

std::vector<std::string> CappingLadder::states() const {
  std::vector<std::string> names = {kNormal};
  for (const Rung& rung : rungs_) {
    if (std::find(names.begin(), names.end(), rung.state) == names.end()) {
      names.push_back(rung.state);
    }
  }
  return names;
}

}  // namespace headroom::policy
