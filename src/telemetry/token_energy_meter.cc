#include "telemetry/token_energy_meter.h"

#include <fmt/format.h>

namespace headroom::telemetry {

core::Result<core::Joules> SummedEnergy(const std::vector<gpu::Device*>& devices) {
  double joules = 0;
  for (gpu::Device* d : devices) {
    auto e = d->EnergyCounter();
    if (!e) {
      return core::Fail(
          e.error().WithContext(fmt::format("GPU {}: its energy counter", d->info().index)));
    }
    joules += e->value();
  }
  return core::Joules(joules);
}

void TokenEnergyMeter::Add(const TokenEnergyRead& read) {
  if (last_ && read.at > last_->at) {
    fit_.Add(EnergyWindowSample{.seconds = core::ToSeconds(read.at - last_->at),
                                .energy_j = read.energy.value() - last_->energy.value(),
                                .prompt_tokens = read.prompt_tokens - last_->prompt_tokens,
                                .generated_tokens = read.generated_tokens - last_->generated_tokens,
                                .iterations = read.iterations - last_->iterations});
    ++offered_;
  }
  last_ = read;
}

}  // namespace headroom::telemetry
