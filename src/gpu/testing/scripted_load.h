// ScriptedLoad: SimDevice options running a load script ("prefill:1s,decode:3s"), for tests.
#ifndef HEADROOM_GPU_TESTING_SCRIPTED_LOAD_H_
#define HEADROOM_GPU_TESTING_SCRIPTED_LOAD_H_

#include "gpu/sim/load_script.h"
#include "gpu/sim/sim_device.h"

namespace headroom::gpu::testing {

// REQUIRES: `script` parses.
inline sim::SimOptions ScriptedLoad(const char* script) {
  sim::SimOptions options;
  options.script = *sim::LoadScript::Parse(script);
  return options;
}

}  // namespace headroom::gpu::testing

#endif  // HEADROOM_GPU_TESTING_SCRIPTED_LOAD_H_
