// A user's own latency profile in a few columns (prompt, batch, TTFT, TPOT, optional power; see
// docs/guide/own-profile.md), read as Measurements and fitted into an engine calibration that
// every command takes (`--engine-file`), with its error on the configurations held out of the
// fit. Thread-safe (no state).
#ifndef HEADROOM_CATALOG_USER_PROFILE_H_
#define HEADROOM_CATALOG_USER_PROFILE_H_

#include <string>
#include <string_view>
#include <vector>

#include "catalog/inference_fits.h"
#include "catalog/validation_sets.h"
#include "core/result.h"
#include "model/measurement.h"
#include "model/validation_result.h"

namespace headroom::catalog {

// The columns, in any order: model, gpu, tp, batch, prompt, output, ttft_ms, tpot_ms and
// optionally gpu_power_w. ttft_ms is the first token of the whole batch (its prefill); tpot_ms one
// decode step; gpu_power_w one GPU's mean power over the batch. An empty cell is a value not
// measured; a row needs at least one. Errors name file, line and column.
inline constexpr std::string_view kProfileRowColumns =
    "model,gpu,tp,batch,prompt,output,ttft_ms,tpot_ms[,gpu_power_w]";
bool LooksLikeProfileRows(std::string_view header);
[[nodiscard]] core::Result<std::vector<model::Measurement>> ParseProfileRows(
    std::string_view text, const std::string& source, const std::string& engine);

// Whether a configuration (model, GPU, tp, batch, prompt, output) is among the 1 in 5 held out
// of the fit: a fixed hash, the same on every run.
bool IsHeldOutConfiguration(const model::Measurement& m);

struct ProfileEngineFit {
  InferenceFits fits;
  model::ProfileFitErrors summary;  // errors per GPU type and metric; the rows left out
};

// One fit per GPU type of the rows, on the configurations not held out; GPU types without power
// rows keep the default engine's overhead activity. Fails naming a row whose model or GPU is not
// catalogued, and a GPU type with too few rows to fit.
[[nodiscard]] core::Result<ProfileEngineFit> FitProfileEngine(
    const ValidationCatalogs& catalogs, const std::vector<model::Measurement>& rows,
    const std::string& engine, const std::string& description);

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_USER_PROFILE_H_
