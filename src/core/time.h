// Time as int64 nanoseconds, and the Clock interface through which all code reads time, so
// tests and virtual-time runs never sleep. SystemClock is thread-safe; FakeClock is thread-safe.
#ifndef HEADROOM_CORE_TIME_H_
#define HEADROOM_CORE_TIME_H_

#include <atomic>
#include <chrono>

#include "core/thread_annotations.h"

namespace headroom::core {

using Duration = std::chrono::nanoseconds;
// A point on a monotonic time line. Its epoch is the clock's own; only differences carry meaning.
using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;

inline constexpr double kSecondsPerDay = 86'400;

constexpr double ToSeconds(Duration d) { return std::chrono::duration<double>(d).count(); }
inline Duration FromSeconds(double s) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  // Returns at `deadline` or soon after `*stop` becomes true, whichever comes first.
  // A fake clock jumps to the deadline instead of waiting.
  virtual void SleepUntil(TimePoint deadline, const std::atomic<bool>* stop) = 0;
  // Calendar time, for what people read beside other logs (timestamps); never for intervals.
  virtual std::chrono::system_clock::time_point WallNow() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override;
  void SleepUntil(TimePoint deadline, const std::atomic<bool>* stop) override;
  std::chrono::system_clock::time_point WallNow() const override;
};

// A manually driven clock for deterministic tests and virtual-time simulation. Its calendar time
// is the Unix epoch plus its monotonic time.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint{}) : now_(start) {}
  TimePoint Now() const override EXCLUDES(mu_);
  void SleepUntil(TimePoint deadline, const std::atomic<bool>* stop) override EXCLUDES(mu_);
  std::chrono::system_clock::time_point WallNow() const override EXCLUDES(mu_);
  void Advance(Duration d) EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  TimePoint now_ GUARDED_BY(mu_);
};

}  // namespace headroom::core

#endif  // HEADROOM_CORE_TIME_H_
