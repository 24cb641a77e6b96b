// model fit below its flags: the result of a profile fit outlives the catalog it was fitted
// against (its GPU types point into the hardware catalog the result keeps; a dangling pointer
// here fails under the sanitizer build).
#include "app/model_fit.h"

#include <string>
#include <variant>

#include <gtest/gtest.h>

namespace headroom::app {
namespace {

TEST(AppModelFitTest, AProfileFitKeepsWhatItsGpuTypesPointTo) {
  ModelFitResult copy;
  {
    auto fit = ModelFit({.catalog_dir = {},
                         .engine = {},
                         .name = std::string(kProfileEngine),
                         .profile = {},
                         .model = "llama2-70b",
                         .write = {}});
    ASSERT_TRUE(fit) << fit.error().message();
    copy = *fit;
  }
  const auto* profile = std::get_if<PerfProfileFit>(&copy);
  ASSERT_NE(profile, nullptr);
  EXPECT_EQ(profile->profile, "data/profiles/perf_model_llama2-70b.csv");
  ASSERT_FALSE(profile->fit.fits.empty());
  EXPECT_EQ(profile->fit.fits.front().gpu->name, "a100-80gb-sxm");
}

}  // namespace
}  // namespace headroom::app
