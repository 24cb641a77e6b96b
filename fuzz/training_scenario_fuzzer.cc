// Training-row scenario YAML (`headroom simulate --config FILE` with `kind: training-row`):
// parsed against the embedded catalogs; a file that parses and is small enough is simulated
// under its first two mitigations, so the engine meets the parser's every corner (a zero skew,
// a checkpoint as long as the run, a ramp window of one step).
#include "fuzz/fuzz_support.h"
#include "sim/training_row.h"
#include "sim/training_scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace headroom;
  static const catalog::TrainingCatalog workloads = *catalog::TrainingCatalog::Embedded();
  auto s =
      sim::ParseTrainingScenario(fuzz::Text(data, size), "fuzz.yaml", fuzz::Hardware(), workloads);
  if (!s) return 0;
  // Keep an execution within milliseconds: at most 20,000 server-steps.
  if (s->servers * static_cast<double>(s->duration / s->step) > 2e4) return 0;
  const sim::IterationProfile profile = {
      .compute_s = 0.7, .sync_s = 0.3, .compute_w = 400, .sync_w = 150};
  sim::TrainingRowConfig config{.servers = s->servers,
                                .step = s->step,
                                .duration = s->duration,
                                .checkpoint_every = s->checkpoint_every,
                                .checkpoint_for = s->checkpoint_for,
                                .checkpoint_w = 60,
                                .skew = s->skew,
                                .ramp_window = s->ramp_window,
                                .seed = s->seed};
  const sim::PowerSmoothing smoothing{
      .floor_w = 200, .ramp_up_w_per_s = 100, .ramp_down_w_per_s = 100};
  const sim::TrainingRowRun run = sim::SimulateTrainingRow(config, profile, &smoothing);
  HEADROOM_CHECK(run.low_band.share >= 0 && run.low_band.share <= 1 + 1e-9)
      << "a band's share outside [0, 1]: " << run.low_band.share;
  return 0;
}
