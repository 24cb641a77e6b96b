// The agent's GPUs over a test's simulated devices, all of one type and failsafe clock. Test-only.
#ifndef HEADROOM_SERVICE_TESTING_SIM_AGENT_GPUS_H_
#define HEADROOM_SERVICE_TESTING_SIM_AGENT_GPUS_H_

#include <memory>
#include <vector>

#include "core/units.h"
#include "gpu/device.h"
#include "model/gpu_spec.h"
#include "service/agent.h"

namespace headroom::service::testing {

// REQUIRES: `devices` outlive the agent made of them.
inline std::vector<AgentGpu> SimAgentGpus(const std::vector<std::unique_ptr<gpu::Device>>& devices,
                                          const model::GpuSpec& spec,
                                          core::Megahertz failsafe_clock) {
  std::vector<AgentGpu> gpus;
  for (const auto& d : devices) {
    gpus.push_back(AgentGpu{.device = d.get(), .spec = spec, .failsafe_clock = failsafe_clock});
  }
  return gpus;
}

}  // namespace headroom::service::testing

#endif  // HEADROOM_SERVICE_TESTING_SIM_AGENT_GPUS_H_
