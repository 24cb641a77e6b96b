// ControlRestorer: saves the power limit and SM clock lock of a set of devices and puts them
// back when asked and, at the latest, when it is destroyed, so that every exit path of a command
// that changes GPU settings (success, error, Ctrl-C) leaves the GPUs as it found them.
// Not thread-safe; the devices must outlive it.
#ifndef HEADROOM_GPU_CONTROL_RESTORER_H_
#define HEADROOM_GPU_CONTROL_RESTORER_H_

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "gpu/device.h"

namespace headroom::gpu {

// The controls headroom changes on a device: its requested power limit and SM clock lock.
struct ControlSettings {
  core::Watts power_limit{0};
  std::optional<ClockLock> lock;  // nullopt: SM clocks unlocked
};

// Reads them. Fails, naming the GPU, if the power limit cannot be read (then nothing could be
// restored, so nothing should be changed); an unreadable clock lock counts as unlocked.
[[nodiscard]] core::Result<ControlSettings> ReadControls(Device& device);
// Puts them back, writing only what differs (a GPU left as found needs no privileges to
// "restore"); keeps going past a failure and returns the first.
[[nodiscard]] core::Status RestoreControls(Device& device, const ControlSettings& settings);
// "power limit 400 W, SM clocks unlocked".
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
