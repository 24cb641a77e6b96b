#include "app/model_predict.h"

#include <fmt/format.h>

#include "catalog/inference_fits.h"
#include "catalog/model_catalog.h"
#include "model/inference_model.h"

namespace headroom::app {
namespace {

// The flags' checks that need the model and the GPU.
core::Status CheckPredictQuery(const model::BatchQuery& q, const model::ModelSpec& spec,
                               const model::GpuSpec& g) {
  if (spec.heads % q.tp != 0) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--tp {}: must divide {}'s {} attention heads", q.tp, spec.name, spec.heads)));
  }
  if (q.sm_clock && q.power_limit) {
    return core::Fail(core::Error::InvalidArgument("give --sm-clock or --power-limit, not both"));
  }
  if (q.sm_clock && (*q.sm_clock < g.sm_clock_min || *q.sm_clock > g.sm_clock_max)) {
    return core::Fail(core::Error::OutOfRange(
        fmt::format("--sm-clock {} MHz is outside {}'s range {}-{} MHz", q.sm_clock->value(),
                    g.name, g.sm_clock_min.value(), g.sm_clock_max.value())));
  }
  if (q.power_limit && (*q.power_limit < g.power_limit_min || *q.power_limit > g.power_limit_max)) {
    return core::Fail(core::Error::OutOfRange(fmt::format(
        "--power-limit {} W is outside {}'s settable range {}-{} W", q.power_limit->value(), g.name,
        g.power_limit_min.value(), g.power_limit_max.value())));
  }
  return core::Ok();
}

}  // namespace

core::Result<ModelPredictResult> ModelPredict(const ModelPredictRequest& request) {
  HEADROOM_ASSIGN_OR_RETURN(const catalog::HardwareCatalog hardware,
                            LoadCatalog(request.catalog_dir));
  auto gpu = hardware.Gpu(request.gpu);
  if (!gpu) return core::Fail(gpu.error().WithContext("--gpu"));
  HEADROOM_ASSIGN_OR_RETURN(const catalog::ModelCatalog models, catalog::ModelCatalog::Embedded());
  auto spec = models.Model(request.model);
  if (!spec) return core::Fail(spec.error().WithContext("--model"));
  HEADROOM_RETURN_IF_ERROR(CheckPredictQuery(request.query, **spec, **gpu));
  HEADROOM_ASSIGN_OR_RETURN(const EngineChoice engines,
                            LoadEngines(request.engine, catalog::kDefaultEngine));
  HEADROOM_ASSIGN_OR_RETURN(const catalog::InferenceFits* fits,
                            engines.engines.Engine(engines.engine));
  auto fit = fits->For((*gpu)->name);
  if (!fit) return core::Fail(fit.error().WithContext("--gpu"));
  const model::InferenceModel m(**spec, model::GpuPowerModel(**gpu), fit->efficiency);
  return ModelPredictResult{.context = {.model = (*spec)->name,
                                        .gpu = (*gpu)->name,
                                        .engine = engines.engine,
                                        .engine_version = fits->version(),
                                        .fitted_on = fit->fitted_on,
                                        .max_context = (*spec)->max_context},
                            .query = request.query,
                            .prediction = model::PredictBatch(m, request.query)};
}

}  // namespace headroom::app
