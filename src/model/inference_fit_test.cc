// FitProfile on the shipped llama2-70b profile: what `model fit` fits and what
// `model fit --write` writes, read back as the product reads its fits.
#include "model/inference_fit.h"

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/inference_fits.h"
#include "catalog/model_catalog.h"
#include "catalog/perf_profile.h"

namespace headroom::model {
namespace {

class FitProfileTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    hardware_ = new catalog::HardwareCatalog(*catalog::HardwareCatalog::Embedded());
    models_ = new catalog::ModelCatalog(*catalog::ModelCatalog::Embedded());
    auto points = catalog::EmbeddedPerfProfile("llama2-70b");
    ASSERT_TRUE(points) << points.error().message();
    points_ = new std::vector<ProfilePoint>(*points);
    auto fit = FitProfile(Spec(), *points_, Lookup());
    ASSERT_TRUE(fit) << fit.error().message();
    fit_ = new ProfileFit(*fit);
  }
  static const ModelSpec& Spec() { return **models_->Model("llama2-70b"); }
  static GpuLookup Lookup() {
    return [](const std::string& name) { return hardware_->Gpu(name); };
  }
  static inline catalog::HardwareCatalog* hardware_ = nullptr;
  static inline catalog::ModelCatalog* models_ = nullptr;
  static inline std::vector<ProfilePoint>* points_ = nullptr;
  static inline ProfileFit* fit_ = nullptr;
};

TEST_F(FitProfileTest, FitsEveryUncappedGpuAndReproducesTheCappedOneUnderALimit) {
  ASSERT_GE(fit_->fits.size(), 2u);
  for (const GpuProfileFit& r : fit_->fits) {
    EXPECT_FALSE(r.profile_hardware.ends_with(kCappedSuffix));
    EXPECT_GT(r.fit.held_out.points, 0) << r.gpu->name;
    EXPECT_LT(r.fit.held_out.decode, 0.15) << r.gpu->name;
    EXPECT_GT(r.fit.efficiency.memory_efficiency, 0) << r.gpu->name;
  }
  ASSERT_EQ(fit_->capped.size(), 1u);
  const CappedProfileFit& capped = fit_->capped.front();
  EXPECT_EQ(capped.profile_hardware, "h100-80gb-pcap");
  EXPECT_GE(capped.cap.limit, capped.gpu->power_limit_min);
  EXPECT_LT(capped.cap.limit, capped.gpu->power_limit_max);
  EXPECT_LE(fit_->kept.size(), points_->size());
  EXPECT_EQ(fit_->kept.size() + fit_->excluded.size(), points_->size());
}

TEST_F(FitProfileTest, AFitWithoutPowerBorrowsTheOverheadActivityOfOneWithPower) {
  const GpuProfileFit* with_power = nullptr;
  for (const GpuProfileFit& r : fit_->fits) {
    if (r.fit.power_points > 0 && with_power == nullptr) with_power = &r;
  }
  ASSERT_NE(with_power, nullptr);
  for (const GpuProfileFit& r : fit_->fits) {
    if (r.fit.power_points > 0) {
      EXPECT_TRUE(r.activity_from.empty()) << r.gpu->name;
      continue;
    }
    EXPECT_EQ(r.activity_from, with_power->gpu->name);
    EXPECT_EQ(r.fit.efficiency.overhead_activity, with_power->fit.efficiency.overhead_activity);
  }
}

TEST_F(FitProfileTest, WhatWriteWritesReadsBackAsTheFitAndMatchesTheShippedFile) {
  const std::string yaml =
      catalog::InferenceFitsYaml(*fit_, "data/profiles/perf_model_llama2-70b.csv", "llama2-70b",
                                 "splitwise-sim", "the profiled stack");
  auto parsed = catalog::InferenceFits::Parse(yaml, "written");
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->engine(), "splitwise-sim");
  EXPECT_EQ(parsed->For("h200-141gb-sxm")->fitted_on, "h100-80gb-sxm");  // borrowed
  for (const GpuProfileFit& r : fit_->fits) {
    auto read = parsed->For(r.gpu->name);
    ASSERT_TRUE(read) << read.error().message();
    EXPECT_NEAR(read->efficiency.memory_efficiency, r.fit.efficiency.memory_efficiency, 1e-6);
    EXPECT_NEAR(read->efficiency.decode_layer_overhead_s, r.fit.efficiency.decode_layer_overhead_s,
                1e-9);
  }
  // The shipped parameters are this fit's (refit rather than edit), within the optimizer's
  // stopping tolerance: the file was written by an earlier build of the same fit.
  auto shipped = catalog::InferenceFits::Embedded();
  ASSERT_TRUE(shipped) << shipped.error().message();
  for (const GpuProfileFit& r : fit_->fits) {
    EXPECT_NEAR(shipped->For(r.gpu->name)->efficiency.memory_efficiency,
                r.fit.efficiency.memory_efficiency, 1e-4)
        << r.gpu->name;
  }
}

TEST_F(FitProfileTest, AHardwareTheCatalogDoesNotKnowIsAnErrorNamingIt) {
  std::vector<ProfilePoint> points = *points_;
  for (ProfilePoint& p : points) {
    if (p.hardware == fit_->fits.front().profile_hardware) p.hardware = "tpu-v9";
  }
  auto fit = FitProfile(Spec(), points, Lookup());
  ASSERT_FALSE(fit);
  EXPECT_NE(fit.error().message().find("profile hardware 'tpu-v9'"), std::string::npos)
      << fit.error().message();
}

}  // namespace
}  // namespace headroom::model
