// ProgressBar: a one-line progress bar with ETA on stderr, shown only on a terminal and never
// under --quiet, under CI (the CI environment variable) or when stderr is piped. Thread-compatible;
// Update is cheap and rate-limited, so it may be called often.
#ifndef HEADROOM_CONSOLE_PROGRESS_H_
#define HEADROOM_CONSOLE_PROGRESS_H_

#include <string>

#include "core/time.h"

namespace headroom::console {

// True when stderr is a terminal, CI is unset and --quiet is not given.
bool ProgressWanted();

class ProgressBar {
 public:
  // `enabled` false: every call is a no-op. Time (the redraw rate, the ETA) is read from
  // `clock`, the system's by default. REQUIRES: clock outlives the bar.
  ProgressBar(std::string label, bool enabled, const core::Clock* clock = nullptr);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // fraction in [0, 1]; `detail` is shown after the bar.
  void Update(double fraction, const std::string& detail = "");
  // Clears the line.
  void Finish();

 private:
  std::string label_;
  bool enabled_;
  const core::Clock* clock_;
  bool drawn_ = false;
  core::TimePoint start_;
  core::TimePoint last_draw_;
};

}  // namespace headroom::console

#endif  // HEADROOM_CONSOLE_PROGRESS_H_
