// Putting a GPU's MIG configuration back after a sweep changed it: the layout found before
// (LayoutRestorer) and MIG mode, when the sweep turned it on (MigModeRestorer). Both restore on
// every exit path, so an error or Ctrl-C part-way through a sweep leaves the GPU as it was found.
// Not thread-safe; each holds a reference to its device, which must outlive it.
#ifndef HEADROOM_GPU_MIG_RESTORER_H_
#define HEADROOM_GPU_MIG_RESTORER_H_

#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "gpu/device.h"
#include "mig/layout.h"
#include "mig/profile.h"

namespace headroom::gpu {

// The layout that recreates `state`. Not mig::ToLayout: that writes a GPU instance without
// compute instances as "/0c", which ApplyMigLayout refuses; here such an instance gets one
// compute instance, the closest state apply can reach.
mig::Layout RestorableLayout(const std::vector<mig::GpuInstanceState>& state);

// Puts `original` back (ApplyMigLayout with force) on Restore() or, at the latest, on
// destruction; only once. Invariant: after the first Restore() nothing is applied again.
class LayoutRestorer {
 public:
  // REQUIRES: `spec` outlives the restorer.
  LayoutRestorer(Device& device, const mig::GpuMigSpec& spec, mig::Layout original)
      : device_(device), spec_(spec), original_(std::move(original)) {}
  LayoutRestorer(const LayoutRestorer&) = delete;
  LayoutRestorer& operator=(const LayoutRestorer&) = delete;
  // A failure here has no one to tell; callers that care call Restore() first.
  ~LayoutRestorer() { (void)Restore(); }

  // The error of the apply, or of its failed step; Ok once restored (and on every later call).
  [[nodiscard]] core::Status Restore();
  const mig::Layout& original() const { return original_; }

 private:
  Device& device_;
  const mig::GpuMigSpec& spec_;
  mig::Layout original_;
  bool restored_ = false;
};

// Turns MIG mode back off on destruction (it was off before the sweep turned it on). Destroy it
// after the LayoutRestorer: the driver refuses to turn MIG off while GPU instances exist.
class MigModeRestorer {
 public:
  // `on_error` hears why turning MIG off failed (a destructor cannot return it).
  MigModeRestorer(Device& device, std::function<void(const core::Error&)> on_error)
      : device_(device), on_error_(std::move(on_error)) {}
  MigModeRestorer(const MigModeRestorer&) = delete;
  MigModeRestorer& operator=(const MigModeRestorer&) = delete;
  ~MigModeRestorer();

 private:
  Device& device_;
  std::function<void(const core::Error&)> on_error_;
};

}  // namespace headroom::gpu

#endif  // HEADROOM_GPU_MIG_RESTORER_H_
