#include "core/time.h"

#include <algorithm>
#include <thread>

namespace headroom::core {

TimePoint SystemClock::Now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::steady_clock::now());
}

std::chrono::system_clock::time_point SystemClock::WallNow() const {
  return std::chrono::system_clock::now();
}

void SystemClock::SleepUntil(TimePoint deadline, const std::atomic<bool>* stop) {
  // Sleep in slices so that a stop request (Ctrl-C) is honoured within ~50 ms even during a
  // 60 s sampling interval.
  constexpr Duration kSlice = std::chrono::milliseconds(50);
  while (true) {
    if (stop != nullptr && stop->load()) return;
    const TimePoint now = Now();
    if (now >= deadline) return;
    std::this_thread::sleep_for(std::min<Duration>(deadline - now, kSlice));
  }
}

TimePoint FakeClock::Now() const {
  MutexLock lock(&mu_);
  return now_;
}

void FakeClock::SleepUntil(TimePoint deadline, const std::atomic<bool>* /*stop*/) {
  MutexLock lock(&mu_);
  now_ = std::max(now_, deadline);
}

std::chrono::system_clock::time_point FakeClock::WallNow() const {
  MutexLock lock(&mu_);
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(now_.time_since_epoch()));
}

void FakeClock::Advance(Duration d) {
  MutexLock lock(&mu_);
  now_ += d;
}

}  // namespace headroom::core
