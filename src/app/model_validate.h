// What `headroom model validate` does below its flags: the built-in validation suite
// (catalog::ValidateBuiltInSuite: latency, power, energy and time per token per engine, training
// throughput, MIG slice scaling) and the served runs replayed in the row simulator, each scored on
// the rows no calibration was fitted on. Thread-compatible.
#ifndef HEADROOM_APP_MODEL_VALIDATE_H_
#define HEADROOM_APP_MODEL_VALIDATE_H_

#include <string>

#include "app/context.h"
#include "core/result.h"
#include "model/validation_result.h"

namespace headroom::app {

struct ModelValidateRequest {
  std::string catalog_dir = {};  // empty: the built-in catalog
  EngineOptions engine = {};     // --engine: only it; --engine-file: it beside the built-in ones
  int worst = 3;                 // rows listed per data set and metric
};

// Errors name the flag (--engine, --engine-file).
[[nodiscard]] core::Result<model::ValidationReport> ModelValidate(
    const ModelValidateRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_MODEL_VALIDATE_H_
