#include "catalog/serving_energy_validation.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace headroom::catalog {
namespace {

constexpr std::string_view kEnergyCsvHeader =
    "dataset,engine,model,gpu,tp,batch,avg_output_tokens,avg_tpot_ms,j_per_output_token,"
    "power_limit_w,task,source\n";

struct Catalogs {
  HardwareCatalog hardware = *HardwareCatalog::Embedded();
  ModelCatalog models = *ModelCatalog::Embedded();
  EngineCatalog engines = *EngineCatalog::Embedded();
  ValidationCatalogs get() const { return {&hardware, &models, &engines}; }
};

const Catalogs& TheCatalogs() {
  static const Catalogs catalogs;
  return catalogs;
}

TEST(ServingEnergyValidationTest, TheBuiltInRowsReadAsEnergyPerTokenAtTheRunsMeanBatch) {
  auto rows = EmbeddedServingEnergyMeasurements();
  ASSERT_TRUE(rows) << rows.error().message();
  ASSERT_EQ(rows->size(), 57u);
  for (const model::Measurement& m : *rows) {
    EXPECT_EQ(m.metric, model::Metric::kJoulesPerToken);
    EXPECT_EQ(m.input, 0) << "the prompt length is not published";
    EXPECT_GE(m.batch, 1);
    EXPECT_GE(m.output, 1);
    EXPECT_NE(m.source.find("mlenergy_v2_a100_h100.csv:"), std::string::npos) << m.source;
  }
  // The first row: gemma-2-27B on two A100-40GBs, a mean running batch of 31.93.
  EXPECT_EQ(rows->front().batch, 32);
  EXPECT_EQ(rows->front().output, 398);
  EXPECT_DOUBLE_EQ(rows->front().value, 0.9321);
}

TEST(ServingEnergyValidationTest, BadRowsNameTheFileLineAndField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"dataset,engine\n", "e.csv:1: expected the header"},
      {std::string(kEnergyCsvHeader) + "d,vllm,m,g,1.5,32,400,60,0.9,400,chat,s\n",
       "e.csv:2: tp '1.5' is not a whole number"},
      {std::string(kEnergyCsvHeader) + "d,vllm,m,g,1,0,400,60,0.9,400,chat,s\n", "e.csv:2: batch '0'"},
      {std::string(kEnergyCsvHeader) + "d,vllm,m,g,1,32,x,60,0.9,400,chat,s\n",
       "e.csv:2: avg_output_tokens 'x'"},
      {std::string(kEnergyCsvHeader) + "d,vllm,m,g,1,32,400,60,nan,400,chat,s\n",
       "e.csv:2: j_per_output_token 'nan'"},
      {std::string(kEnergyCsvHeader) + "d,vllm,m\n", "e.csv:2: expected 12 fields, found 3"},
  };
  for (const auto& [text, want] : cases) {
    auto rows = ParseServingEnergyMeasurements(text, "e.csv");
    ASSERT_FALSE(rows) << text;
    EXPECT_NE(rows.error().message().find(want), std::string::npos) << rows.error().message();
  }
}

// The model's energy per token falls as the running batch shares each decode step's weights,
// and a longer prompt costs more energy per token.
TEST(ServingEnergyValidationTest, EnergyPerTokenFallsWithBatchAndRisesWithThePrompt) {
  const Catalogs& c = TheCatalogs();
  const InferenceFits* vllm = *c.engines.Engine("vllm");
  model::Measurement m{.dataset = "d",
                       .engine = "vllm",
                       .model = "llama3.1-8b",
                       .gpu = "h100-80gb-sxm",
                       .batch = 16,
                       .input = 200,
                       .output = 400,
                       .metric = model::Metric::kJoulesPerToken,
                       .value = 1,
                       .source = "test"};
  const auto at = [&](int batch, int input) {
    model::Measurement row = m;
    row.batch = batch;
    row.input = input;
    const auto predicted = PredictRow(c.get(), *vllm, row);
    EXPECT_TRUE(std::holds_alternative<double>(predicted));
    return std::get<double>(predicted);
  };
  EXPECT_GT(at(16, 200), at(64, 200));
  EXPECT_GT(at(64, 200), at(256, 200));
  EXPECT_LT(at(64, 200), at(64, 1000));
  EXPECT_GT(at(64, 200), 0.01);
  EXPECT_LT(at(64, 200), 1.0);
}

// The error on the rows the prompt length was not fitted on (docs/inference-model.md). It misses
// the 20% target: the bounds are today's figures rounded up, so a change that makes
// either worse fails here, and one that meets the target can tighten them.
TEST(ServingEnergyValidationTest, EnergyPerTokenKeepsItsErrorOnTheModelsItNeverSaw) {
  const Catalogs& c = TheCatalogs();
  auto rows = EmbeddedServingEnergyMeasurements();
  ASSERT_TRUE(rows);
  ValidationReport report;
  ASSERT_TRUE(ValidateServingEnergy(c.get(), "vllm", *rows, kServingEnergyCalibrationModels,
                                    1000, &report));
  ASSERT_EQ(report.fitted_workloads.size(), 1u);
  const model::FittedWorkload& fit = report.fitted_workloads[0];
  EXPECT_EQ(fit.dataset, "mlenergy-v2");
  EXPECT_EQ(fit.calibration_rows, 30);
  EXPECT_GE(fit.value, 1);
  EXPECT_LE(fit.value, 4096);
  ASSERT_EQ(report.cells.size(), 2u);  // vllm, and the default engine on the same rows
  for (const ValidationCell& cell : report.cells) {
    EXPECT_EQ(cell.metric, model::Metric::kJoulesPerToken);
    EXPECT_EQ(cell.rows, 27) << cell.engine;
    EXPECT_EQ(cell.calibration_rows, 30) << cell.engine;
    EXPECT_LE(cell.mape, cell.engine == "vllm" ? 0.35 : 0.245) << cell.engine;
    for (const RowError& e : cell.worst) {
      EXPECT_EQ(std::count(kServingEnergyCalibrationModels.begin(),
                           kServingEnergyCalibrationModels.end(), e.row.model),
                0)
          << e.row.source << ": a calibration row was scored";
      EXPECT_EQ(e.row.input, fit.value);
    }
  }
}

TEST(ServingEnergyValidationTest, AnEngineThatPredictsNoCalibrationRowIsAnError) {
  const Catalogs& c = TheCatalogs();
  auto rows = EmbeddedServingEnergyMeasurements();
  ASSERT_TRUE(rows);
  ValidationReport report;
  // lmdeploy has no calibration for the H100 and borrows none for it; on the A100-40GB rows it
  // does; a model no row measured has no calibration rows at all.
  const core::Status none =
      ValidateServingEnergy(c.get(), "vllm", *rows, {"no-such-model"}, 3, &report);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("predicts none of the 0 calibration rows"),
            std::string::npos)
      << none.error().message();
  EXPECT_FALSE(ValidateServingEnergy(c.get(), "tgi-9", *rows, kServingEnergyCalibrationModels, 3,
                                     &report));
}

}  // namespace
}  // namespace headroom::catalog
