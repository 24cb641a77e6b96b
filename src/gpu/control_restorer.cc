#include "gpu/control_restorer.h"

#include <cstdio>

#include <fmt/format.h>

namespace headroom::gpu {

core::Result<ControlRestorer> ControlRestorer::Save(std::vector<Device*> devices) {
  std::vector<Saved> saved;
  for (Device* d : devices) {
    auto limits = d->PowerLimits();
    if (!limits) {
      return core::Fail(limits.error().WithContext(fmt::format(
          "GPU {}: cannot save its power limit, so nothing will be changed", d->info().index)));
    }
    auto lock = d->SmClockLock();
    saved.push_back({d, limits->requested, lock ? *lock : std::nullopt});
  }
  return ControlRestorer(std::move(saved));
}

ControlRestorer::~ControlRestorer() {
  if (auto st = Restore(); !st) {
    std::fprintf(stderr, "headroom: restoring GPU settings: %s\n", st.error().message().c_str());
  }
}

core::Status ControlRestorer::Restore() {
  std::optional<core::Error> first;
  auto keep = [&first](core::Status st) {
    if (!st && !first) first = st.error();
  };
  // Only what differs is written: a GPU left as found needs no privileges to "restore".
  for (const Saved& s : saved_) {
    auto limits = s.device->PowerLimits();
    if (!limits || limits->requested != s.power_limit) keep(s.device->SetPowerLimit(s.power_limit));
    auto lock = s.device->SmClockLock();
    const bool same_lock =
        lock && lock->has_value() == s.lock.has_value() &&
        (!s.lock || ((*lock)->min == s.lock->min && (*lock)->max == s.lock->max));
    if (!same_lock) {
      keep(s.lock ? s.device->LockSmClocks(s.lock->min, s.lock->max) : s.device->ResetSmClocks());
    }
  }
  if (first) return core::Fail(*first);
  return core::Ok();
}

std::vector<std::string> ControlRestorer::Describe() const {
  std::vector<std::string> out;
  for (const Saved& s : saved_) {
    out.push_back(fmt::format(
        "GPU {}: power limit {:.0f} W, SM clocks {}", s.device->info().index, s.power_limit.value(),
        s.lock ? fmt::format("locked {:.0f}-{:.0f} MHz", s.lock->min.value(), s.lock->max.value())
               : std::string("unlocked")));
  }
  return out;
}

}  // namespace headroom::gpu
