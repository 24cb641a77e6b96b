#include "console/progress.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <unistd.h>

#include "console/terminal.h"

namespace headroom::console {

bool ProgressWanted() {
  return !Quiet() && isatty(fileno(stderr)) != 0 && std::getenv("CI") == nullptr;
}

namespace {
const core::SystemClock kSystemClock{};
}  // namespace

ProgressBar::ProgressBar(std::string label, bool enabled, const core::Clock* clock)
    : label_(std::move(label)),
      enabled_(enabled),
      clock_(clock != nullptr ? clock : &kSystemClock),
      start_(clock_->Now()) {}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::Update(double fraction, const std::string& detail) {
  if (!enabled_) return;
  const core::TimePoint now = clock_->Now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  fraction = std::clamp(fraction, 0.0, 1.0);
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  const double elapsed = core::ToSeconds(now - start_);
  const std::string eta =
      fraction > 0.01 ? fmt::format("ETA {:.0f} s", elapsed * (1 - fraction) / fraction) : "";
  std::fprintf(stderr, "\r%s [%s%s] %3.0f%% %s %s\x1b[K", label_.c_str(),
               std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(kWidth - filled), '.').c_str(), fraction * 100,
               eta.c_str(), detail.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::Finish() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace headroom::console
