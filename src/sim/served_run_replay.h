// The row simulator on the served runs of the validation suite (catalog/served_runs.h): each run
// replayed as it was measured, on one server holding one instance of the run's tensor
// parallelism, every request arriving at once, no power policy, the engine's scheduler and
// server time as a scenario would take them; its median TTFT, decode span and end-to-end time
// read from the simulated requests. `headroom model validate`'s end-to-end table: the simulator
// itself, not only the per-batch model, against engines others measured. Thread-compatible.
#ifndef HEADROOM_SIM_SERVED_RUN_REPLAY_H_
#define HEADROOM_SIM_SERVED_RUN_REPLAY_H_

#include <string>
#include <variant>
#include <vector>

#include "catalog/inference_fits.h"
#include "catalog/validation_sets.h"
#include "core/result.h"
#include "model/measurement.h"
#include "sim/scenario.h"

namespace headroom::sim {

// One server of the run's GPU type, one instance of the run's TP on it, every server high
// priority, under `engine` alone; a run that went through no HTTP server has no server time.
core::Result<ResolvedScenario> OneInstanceScenario(const catalog::ValidationCatalogs& catalogs,
                                                   const catalog::InferenceFits& engine,
                                                   const model::Measurement& run);

// The run's metric as the row simulator serves it under `engine`, or why it cannot (no server
// of the run's GPU type, the model does not fit). REQUIRES: a served-run metric.
std::variant<double, std::string> SimulateServedRun(const catalog::ValidationCatalogs& catalogs,
                                                    const catalog::InferenceFits& engine,
                                                    const model::Measurement& run);

// Every served run of `rows` simulated and scored as catalog::Validate scores rows (own
// engine's rows, and every row for the default and profile engines; calibration rows never),
// in cells whose data set is "<data set> (row simulator)", added to `report`; `only_engine`,
// when set, keeps that engine's cells alone.
void ScoreServedRunsInSimulator(const catalog::ValidationCatalogs& catalogs,
                                const std::vector<model::Measurement>& rows,
                                const std::string& only_engine, int worst,
                                catalog::ValidationReport* report);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_SERVED_RUN_REPLAY_H_
