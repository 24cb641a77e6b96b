// ControlRestorer: saves the power limit, SM clock lock and power smoothing of a set of devices and
// puts them back when asked and, at the latest, when it is destroyed, so that every exit path of a
// command that changes GPU settings (success, error, Ctrl-C) leaves the GPUs as it found them. Not
// thread-safe; the devices must outlive it.
#ifndef HEADROOM_GPU_CONTROL_RESTORER_H_
#define HEADROOM_GPU_CONTROL_RESTORER_H_

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "gpu/device.h"

namespace headroom::gpu {

// The power-smoothing settings headroom may change: the feature on or off, the active preset,
// and every preset's parameters (any of them may be updated).
struct SmoothingSettings {
  bool enabled = false;
  int active_profile = 0;
  std::vector<PowerSmoothingProfile> profiles = {};
  bool operator==(const SmoothingSettings&) const = default;
};

// The controls headroom changes on a device: its requested power limit, SM clock lock and, on a
// GPU that has it, power smoothing.
struct ControlSettings {
  core::Watts power_limit{0};
  std::optional<ClockLock> lock = {};  // nullopt: SM clocks unlocked
  // nullopt: the GPU has no power smoothing, or it could not be read; then it is left alone
  // (and must not be changed, since it could not be put back).
  std::optional<SmoothingSettings> smoothing = {};
};

// Reads them. Fails, naming the GPU, if the power limit cannot be read (then nothing could be
// restored, so nothing should be changed); an unreadable clock lock counts as unlocked, and
// unreadable power smoothing as none.
[[nodiscard]] core::Result<ControlSettings> ReadControls(Device& device);
// Puts them back, writing only what differs (a GPU left as found needs no privileges to
// "restore"); keeps going past a failure and returns the first.
[[nodiscard]] core::Status RestoreControls(Device& device, const ControlSettings& settings);
// Puts the power-smoothing settings back, writing only what differs: each preset's parameters,
// then the active preset, then the feature's state. Keeps going past a failure, returns the first.
[[nodiscard]] core::Status RestoreSmoothing(Device& device, const SmoothingSettings& settings);
// "power limit 400 W, SM clocks unlocked" (", power smoothing off, profile 0" where saved).
std::string DescribeControls(const ControlSettings& settings);

class ControlRestorer {
 public:
  // Reads each device's requested power limit and clock lock. Fails if a limit cannot be read
  // (then nothing could be restored, so nothing should be changed).
  [[nodiscard]] static core::Result<ControlRestorer> Save(std::vector<Device*> devices);
  ControlRestorer(ControlRestorer&&) = default;
  ControlRestorer& operator=(ControlRestorer&&) = default;
  ~ControlRestorer();

  // Restores every device; keeps going past failures and returns the first. Idempotent.
  [[nodiscard]] core::Status Restore();

  // One line per device describing what was (or would be) restored.
  std::vector<std::string> Describe() const;

 private:
  struct Saved {
    Device* device;
    ControlSettings settings;
  };
  explicit ControlRestorer(std::vector<Saved> saved) : saved_(std::move(saved)) {}
  std::vector<Saved> saved_;
};

}  // namespace headroom::gpu

#endif  // HEADROOM_GPU_CONTROL_RESTORER_H_
