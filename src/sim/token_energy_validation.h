// The agent's energy per token (telemetry::TokenEnergyFit over engine windows, issue 51) against
// ML.ENERGY's published J per output token (data/validation/mlenergy.csv). The leaderboard gives
// one total per run, not windows, so each run is served again in the row simulator as it ran (one
// instance at its tensor parallelism and running batch, chunked prefill off, every request sent
// at once) under the engine that `headroom model validate` calibrates on the Llama-3.1 runs (mean
// prompt and host time, catalog::CalibrateServingEnergy), its GPU energy and token counters read
// every engine window as the agent reads them, and the fit's costs summed as ML.ENERGY counts
// energy: all of the run's GPUs' energy over its output tokens, in its steady state (the batch
// full). So the check covers the model and the attribution together; the attribution alone is
// checked against the simulator's exact energy (AttributedRun::exact_joules_per_output_token).
// Thread-compatible.
#ifndef HEADROOM_SIM_TOKEN_ENERGY_VALIDATION_H_
#define HEADROOM_SIM_TOKEN_ENERGY_VALIDATION_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "catalog/inference_fits.h"
#include "catalog/validation_sets.h"
#include "model/measurement.h"
#include "telemetry/token_energy.h"

namespace headroom::sim {

struct AttributedRun {
  telemetry::TokenEnergy fit;  // over the steady state's windows
  // All in, as ML.ENERGY counts: the fit's prompt and generated tokens' costs and the run's GPUs'
  // idle power over the windows, per output token.
  double joules_per_output_token = 0;
  // The simulator's own energy of the run's GPUs over the same windows, per output token.
  double exact_joules_per_output_token = 0;
  int requests = 0;
  double run_s = 0;  // the whole run, the drain after the steady state included
};

// How many requests a run is sent, per sequence of its running batch: enough for tens of windows
// at a full batch.
inline constexpr int kAttributedRequestsPerSequence = 40;

// ML.ENERGY's run `run` (a j_per_token row, `input` its mean prompt) served under `engine`:
// requests of `run.input` prompt tokens and exponentially distributed output lengths of mean
// `run.output` (at most the runs' 4,096-token context), drawn from `seed`; or why it cannot be.
std::variant<AttributedRun, std::string> AttributeServingRun(
    const catalog::ValidationCatalogs& catalogs, const catalog::InferenceFits& engine,
    const model::Measurement& run, std::uint64_t seed = 1);

// The j_per_token rows of `rows` (ML.ENERGY's) not of catalog::kServingEnergyCalibrationModels,
// each attributed under `engine` calibrated on the others, in one cell of data set "<data set>
// (agent's attribution)" added to `report`; nothing when `only_engine` is set and is not
// `engine`.
[[nodiscard]] core::Status ScoreAttributedTokenEnergy(const catalog::ValidationCatalogs& catalogs,
                                                      const std::vector<model::Measurement>& rows,
                                                      const std::string& engine,
                                                      const std::string& only_engine, int worst,
                                                      catalog::ValidationReport* report);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_TOKEN_ENERGY_VALIDATION_H_
