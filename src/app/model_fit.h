// What `headroom model fit` does below its flags: a serving engine's calibration (the inference
// model's efficiency parameters per GPU type) fitted on a measured latency profile (SplitwiseSim's
// format, the built-in one or the user's, or the user's few-column rows), or a built-in engine
// refitted on its calibration rows of the validation suite; the calibration written as YAML
// (data/fits/) when asked. Thread-compatible.
#ifndef HEADROOM_APP_MODEL_FIT_H_
#define HEADROOM_APP_MODEL_FIT_H_

#include <memory>
#include <string>
#include <variant>

#include "catalog/hardware_catalog.h"
#include "catalog/inference_fits.h"
#include "catalog/user_profile.h"
#include "core/result.h"
#include "model/inference_fit.h"
#include "model/model_spec.h"
#include "model/validation_result.h"

namespace headroom::app {

using catalog::kProfileEngine;      // the built-in profile's engine (data/fits/splitwise-sim.yaml)
using catalog::kProfileRowColumns;  // the columns of a user's few-column profile

struct ModelFitRequest {
  std::string catalog_dir = {};  // empty: the built-in catalog
  std::string engine = {};       // as --engine: refit this built-in engine; wins over the rest
  std::string name = {};         // as --name: the engine the calibration is named
  std::string profile = {};      // as --profile; empty: the built-in llama2-70b profile
  std::string model = {};        // as --model: whose rows of a SplitwiseSim profile to fit
  std::string write = {};        // as --write: the calibration's YAML file; empty: none written
};

// --engine: the refitted engine's error on the rows of the suite it was not fitted on.
struct EngineRefit {
  model::ValidationReport validation = {};
};

// --profile in the few-column format: the error on the fitted and the held-out configurations.
struct ProfileRowsFit {
  model::ProfileFitErrors errors = {};
};

// A profile in SplitwiseSim's format, the built-in one or --profile's.
struct PerfProfileFit {
  std::shared_ptr<const catalog::HardwareCatalog> hardware = {};  // what fit's GPU specs point to
  model::ProfileFit fit = {};
  model::ModelSpec model = {};
  std::string profile = {};  // the file, as the report names it
};

using ModelFitResult = std::variant<EngineRefit, ProfileRowsFit, PerfProfileFit>;

// Errors name the flag (--engine, --profile, --name, --model) or the profile's file and line;
// kUnavailable naming --write's file when it cannot be written.
[[nodiscard]] core::Result<ModelFitResult> ModelFit(const ModelFitRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_MODEL_FIT_H_
