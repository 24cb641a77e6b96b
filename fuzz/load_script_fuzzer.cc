// Sim load scripts (`--sim-load`, `--sim-load-file`): parsed, then asked which segment runs at a
// few times, including the largest.
#include "fuzz/fuzz_support.h"
#include "gpu/sim/load_script.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace headroom;
  auto script = gpu::sim::LoadScript::Parse(fuzz::Text(data, size));
  if (!script) return 0;
  for (core::Duration t :
       {core::Duration::zero(), core::Duration(1), script->period(), core::Duration::max()}) {
    HEADROOM_CHECK(script->SegmentIndexAt(t) < script->segments().size());
  }
  return 0;
}
