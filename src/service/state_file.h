// The agent's state file: each GPU's settings as the agent found them (power limit, SM clock
// lock, power smoothing where the GPU has it), written before the agent's first change so that a
// restarted agent can put them back after a crash. Free functions; thread-safe (no state), but the
// devices' own rules apply.
#ifndef HEADROOM_SERVICE_STATE_FILE_H_
#define HEADROOM_SERVICE_STATE_FILE_H_

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/units.h"
#include "gpu/control_restorer.h"
#include "gpu/device.h"

namespace headroom::service {

struct OriginalSettings {
  int index = 0;
  std::string uuid;
  core::Watts power_limit{0};          // the requested (in-band) limit
  std::optional<gpu::ClockLock> lock;  // nullopt: SM clocks unlocked
  // nullopt: the GPU has no power smoothing (or a file from before it was saved); left alone.
  std::optional<gpu::SmoothingSettings> power_smoothing = {};
};

// Reads each device's power limit and clock lock. Fails (naming the GPU) if a power limit cannot
// be read: then nothing could be restored, so nothing may be changed. A missing clock-lock read
// counts as unlocked.
[[nodiscard]] core::Result<std::vector<OriginalSettings>> ReadOriginals(
    const std::vector<gpu::Device*>& devices);

std::string OriginalsToJson(const std::vector<OriginalSettings>& originals);
[[nodiscard]] core::Result<std::vector<OriginalSettings>> OriginalsFromJson(
    const std::string& text);

// Puts each saved setting back on the device with the same index, writing only what differs.
// A saved GPU whose index is missing or whose UUID differs is an error (the file belongs to
// another node or the GPUs changed). Keeps going past failures and returns the first error;
// on success, one line per GPU describing what it restored.
[[nodiscard]] core::Result<std::vector<std::string>> RestoreOriginals(
    const std::vector<gpu::Device*>& devices, const std::vector<OriginalSettings>& originals);

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_STATE_FILE_H_
