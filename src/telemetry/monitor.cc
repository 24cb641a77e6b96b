#include "telemetry/monitor.h"

namespace headroom::telemetry {

core::Status RunMonitor(const std::vector<gpu::Device*>& devices, core::Clock& clock,
                        const MonitorOptions& options,
                        const std::function<void(const MonitorSample&)>& on_sample) {
  std::vector<std::optional<core::Joules>> start_energy;
  for (gpu::Device* device : devices) {
    auto energy = device->EnergyCounter();
    start_energy.push_back(energy ? std::optional(*energy) : std::nullopt);
  }
  const auto stopped = [&options] { return options.stop != nullptr && options.stop->load(); };
  const core::TimePoint start = clock.Now();
  for (long k = 1;; ++k) {
    const core::TimePoint deadline = start + options.interval * k;
    if (options.duration && deadline - start > *options.duration) break;
    clock.SleepUntil(deadline, options.stop);
    if (stopped()) break;
    for (size_t i = 0; i < devices.size(); ++i) {
      HEADROOM_ASSIGN_OR_RETURN(gpu::DeviceSnapshot snapshot,
                                gpu::TakeSnapshot(*devices[i], clock.Now()));
      MonitorSample sample{.time_s = core::ToSeconds(snapshot.time - start),
                           .gpu = devices[i]->info().index};
      if (snapshot.energy_counter && start_energy[i]) {
        sample.energy_since_start = *snapshot.energy_counter - *start_energy[i];
      }
      sample.snapshot = std::move(snapshot);
      on_sample(sample);
    }
  }
  return core::Ok();
}

}  // namespace headroom::telemetry
