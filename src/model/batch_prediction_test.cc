// PredictBatch: the energy accounting of a batch and the memory and context checks that
// `model predict` reports.
#include "model/batch_prediction.h"

#include <tuple>

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/inference_fits.h"
#include "catalog/model_catalog.h"
#include "catalog/testing/embedded_catalogs.h"
#include "model/dvfs_sweep.h"

namespace headroom::model {
namespace {

InferenceModel Model(const char* model, const char* gpu = "a100-80gb-sxm") {
  static const auto hardware = catalog::HardwareCatalog::Embedded();
  static const auto models = catalog::ModelCatalog::Embedded();
  static const auto fits = catalog::InferenceFits::Embedded();
  const GpuSpec& spec = **hardware->Gpu(gpu);
  return InferenceModel(**models->Model(model), GpuPowerModel(spec),
                        fits->For(spec.name)->efficiency);
}

TEST(PredictBatchTest, EnergyIsPrefillPlusEveryDecodeStepSharedOverRequestsAndTokens) {
  const InferenceModel m = Model("llama2-13b");
  const BatchPrediction p = PredictBatch(m, {.tp = 1, .batch = 4, .prompt = 512, .output = 64});
  ASSERT_TRUE(p.decode);
  EXPECT_EQ(p.context, 512 + 32);
  EXPECT_NEAR(p.batch_energy_j, p.prefill.energy.value() + 64 * p.decode->energy.value(), 1e-9);
  EXPECT_NEAR(p.request_energy_j, p.batch_energy_j / 4, 1e-12);
  EXPECT_NEAR(*p.per_output_token_j, p.batch_energy_j / (4 * 64), 1e-12);
  EXPECT_EQ(p.prefill.clock, m.gpu().spec().sm_clock_max);
  EXPECT_TRUE(p.fits_in_memory);
  EXPECT_FALSE(p.exceeds_max_context);
}

TEST(PredictBatchTest, ALockIsSnappedAndAPowerLimitLowersTheClock) {
  const InferenceModel m = Model("llama2-70b");
  const BatchPrediction locked = PredictBatch(m, {.sm_clock = core::Megahertz(1203)});
  ASSERT_TRUE(locked.locked_clock);
  EXPECT_EQ(*locked.locked_clock, m.gpu().spec().SnapClock(core::Megahertz(1203)));
  EXPECT_EQ(locked.prefill.clock, *locked.locked_clock);
  const BatchPrediction limited =
      PredictBatch(m, {.prompt = 8192, .power_limit = core::Watts(200)});
  EXPECT_LT(limited.prefill.clock, m.gpu().spec().sm_clock_max);
  EXPECT_LE(limited.prefill.power.value(), 200 + 0.5);
}

TEST(PredictBatchTest, ReportsWhatDoesNotFitInMemoryOrInTheTrainedContext) {
  const InferenceModel m = Model("llama2-70b");
  const BatchPrediction one_gpu = PredictBatch(m, {.tp = 1});
  EXPECT_FALSE(one_gpu.fits_in_memory);  // 140 GB of fp16 weights on an 80 GB GPU
  const BatchPrediction long_prompt = PredictBatch(m, {.prompt = 8000, .output = 500});
  EXPECT_EQ(long_prompt.span, 8500);
  EXPECT_TRUE(long_prompt.exceeds_max_context);
}

// No phase is predicted above the GPU's default power limit (TDP): where the clock asked for
// would draw more, the clock is lowered, as the firmware does, and the prediction says so.
TEST(PredictBatchTest, TheGpuHoldsItsDefaultPowerLimit) {
  // Today's vLLM server's calibration, whose large decode batches draw the most.
  const catalog::testing::ValidationSuite& suite = catalog::testing::EmbeddedValidationSuite();
  const GpuSpec& spec = **suite.hardware.Gpu("a100-80gb-sxm");
  const InferenceModel m(**suite.models.Model("llama2-70b"), GpuPowerModel(spec),
                         (*suite.engines.Engine("vllm-server"))->For(spec.name)->efficiency);
  const core::Watts tdp = spec.power_limit_default;
  int held = 0;
  for (const int batch : {1, 16, 64, 128}) {
    const BatchPrediction p = PredictBatch(m, {.batch = batch, .prompt = 128});
    EXPECT_EQ(p.default_power_limit, tdp);
    const InferenceShape shape{.tp = 8, .batch = batch, .prompt = 128, .context = p.context};
    for (const auto& [phase, estimate, was_held] :
         {std::tuple{m.PrefillPhase(shape), p.prefill, p.prefill_held},
          std::tuple{*m.DecodePhase(shape), *p.decode, p.decode_held}}) {
      EXPECT_LE(estimate.power.value(), tdp.value() + 1e-6) << batch;
      // Held exactly where the highest clock would draw more than the limit.
      EXPECT_EQ(was_held, m.gpu().PhasePower(phase, spec.sm_clock_max) > tdp) << batch;
      EXPECT_EQ(was_held, estimate.clock < spec.sm_clock_max) << batch;
      held += was_held;
    }
  }
  EXPECT_GT(held, 0) << "the case the limit is for";
  const BatchPrediction limited =
      PredictBatch(m, {.batch = 128, .prompt = 128, .power_limit = core::Watts(250)});
  EXPECT_FALSE(limited.prefill_held || limited.decode_held);
  EXPECT_LE(limited.decode->power.value(), 250 + 0.5);
}

TEST(PredictBatchTest, AnEncoderOnlyModelHasNoDecode) {
  const BatchPrediction p = PredictBatch(Model("roberta-large"), {.tp = 1});
  EXPECT_FALSE(p.decode);
  EXPECT_FALSE(p.per_output_token_j);
  EXPECT_NEAR(p.batch_energy_j, p.prefill.energy.value(), 1e-12);
  EXPECT_EQ(p.span, 1024);
}

TEST(DefaultSweepTest, ClocksSpanSixtyToAHundredPercentAndLimitsTheSettableRangeHighestFirst) {
  static const auto hardware = catalog::HardwareCatalog::Embedded();
  const GpuSpec& spec = **hardware->Gpu("a100-80gb-sxm");
  const auto clocks = DefaultSweepClocks(spec);
  ASSERT_GE(clocks.size(), 6u);
  EXPECT_EQ(clocks.front(), spec.sm_clock_max);
  EXPECT_GE(clocks.back().value(), 0.6 * spec.sm_clock_max.value() - spec.sm_clock_step.value());
  const auto limits = DefaultSweepLimits(spec);
  EXPECT_EQ(limits.front(), spec.power_limit_max);
  EXPECT_GE(limits.back(), spec.power_limit_min);
  for (size_t i = 1; i < limits.size(); ++i) EXPECT_LT(limits[i], limits[i - 1]);
}

}  // namespace
}  // namespace headroom::model
