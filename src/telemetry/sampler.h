// Sampler: the one telemetry loop every command uses. On its own thread it reads all selected
// GPUs every `interval` (10 ms .. 60 s) through TakeSnapshot, keeps the latest samples in a
// bounded ring buffer, feeds one EnergyMeter per GPU, and hands every sample to an optional sink
// (e.g. a file writer) as it is taken. A read error other than "not supported" (GPU lost, driver
// gone) stops sampling and is kept; what was sampled so far stays available. Thread-safe.
#ifndef HEADROOM_TELEMETRY_SAMPLER_H_
#define HEADROOM_TELEMETRY_SAMPLER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/thread_annotations.h"
#include "core/time.h"
#include "gpu/device.h"
#include "gpu/snapshot.h"
#include "telemetry/energy_meter.h"

namespace headroom::telemetry {

struct Sample {
  int gpu = 0;  // the device's index
  gpu::DeviceSnapshot snapshot;
};

struct DriverPowerSample {
  int gpu = 0;
  gpu::PowerSample sample;
};

struct SamplerOptions {
  core::Duration interval{std::chrono::milliseconds(100)};
  size_t ring_capacity = 100000;  // samples kept in memory, oldest dropped first
  // Called on the sampler thread for every sample, in order. Must not call back into the Sampler.
  std::function<void(const Sample&)> sink = {};
};

class Sampler {
 public:
  // REQUIRES: devices and clock outlive the sampler. kInvalidArgument for an interval outside
  // 10 ms .. 60 s or no devices.
  [[nodiscard]] static core::Result<std::unique_ptr<Sampler>> Create(
      std::vector<gpu::Device*> devices, core::Clock* clock, SamplerOptions options);
  ~Sampler();  // stops the thread

  // Takes a first sample at once, then one every interval until Stop().
  void Start() EXCLUDES(mu_);
  // Takes a last sample (so a measurement ends at the stop time) and joins the thread.
  void Stop() EXCLUDES(mu_);

  // Samples every device once now. False when a device failed (the error is recorded and
  // sampling stops). Start() calls it on the sampler thread; tests may call it directly.
  bool SampleOnce() EXCLUDES(mu_);

  // Phase markers apply to every GPU's meter; work counts once for the job, and per phase.
  void MarkPhase(const std::string& phase) EXCLUDES(mu_);
  void AddWork(double units) EXCLUDES(mu_);
  double work() const EXCLUDES(mu_);
  std::vector<std::pair<std::string, double>> work_by_phase() const EXCLUDES(mu_);

  std::vector<Sample> Recent() const EXCLUDES(mu_);
  // Sub-second power history drained from the drivers' sample rings (where supported), newest
  // last, bounded like the snapshot ring.
  std::vector<DriverPowerSample> RecentDriverSamples() const EXCLUDES(mu_);
  std::vector<EnergyReport> Reports() const EXCLUDES(mu_);  // one per device, in device order
  std::vector<std::vector<PhaseEnergy>> Phases() const EXCLUDES(mu_);
  // The error that stopped sampling early, if any.
  std::optional<core::Error> error() const EXCLUDES(mu_);
  const std::vector<gpu::Device*>& devices() const { return devices_; }

 private:
  Sampler(std::vector<gpu::Device*> devices, core::Clock* clock, SamplerOptions options);
  void Run();

  const std::vector<gpu::Device*> devices_;
  core::Clock* const clock_;
  const SamplerOptions options_;
  std::atomic<bool> stop_{false};
  std::thread thread_;

  mutable core::Mutex mu_;
  std::deque<Sample> ring_ GUARDED_BY(mu_);
  std::deque<DriverPowerSample> driver_ring_ GUARDED_BY(mu_);
  // Per device: the newest driver sample seen, and whether the device offers them at all.
  std::vector<std::uint64_t> driver_last_us_ GUARDED_BY(mu_);
  std::vector<bool> driver_samples_supported_ GUARDED_BY(mu_);
  // The first drain only finds where the driver's ring stands: older samples predate us.
  std::vector<bool> driver_primed_ GUARDED_BY(mu_);
  std::vector<EnergyMeter> meters_ GUARDED_BY(mu_);
  std::optional<core::Error> error_ GUARDED_BY(mu_);
  double work_ GUARDED_BY(mu_) = 0;
  std::string phase_ GUARDED_BY(mu_);
  std::vector<std::pair<std::string, double>> work_by_phase_ GUARDED_BY(mu_);
};

}  // namespace headroom::telemetry

#endif  // HEADROOM_TELEMETRY_SAMPLER_H_
