#include "service/state_file.h"

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/testing/embedded_catalogs.h"
#include "core/time.h"
#include "gpu/sim/sim_device.h"

namespace headroom::service {
namespace {

using catalog::testing::A100;

std::vector<gpu::Device*> Raw(const std::vector<std::unique_ptr<gpu::Device>>& devices) {
  std::vector<gpu::Device*> out;
  for (const auto& d : devices) out.push_back(d.get());
  return out;
}

TEST(StateFileTest, RoundTripsThroughJson) {
  const std::vector<OriginalSettings> originals = {
      {.index = 0, .uuid = "GPU-a", .power_limit = core::Watts(400), .lock = std::nullopt},
      {.index = 1,
       .uuid = "GPU-b",
       .power_limit = core::Watts(300),
       .lock = gpu::ClockLock{core::Megahertz(210), core::Megahertz(1275)}}};
  auto back = OriginalsFromJson(OriginalsToJson(originals));
  ASSERT_TRUE(back) << back.error().message();
  ASSERT_EQ(back->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ((*back)[i].index, originals[i].index);
    EXPECT_EQ((*back)[i].uuid, originals[i].uuid);
    EXPECT_EQ((*back)[i].power_limit, originals[i].power_limit);
    EXPECT_EQ((*back)[i].lock.has_value(), originals[i].lock.has_value());
  }
  EXPECT_EQ((*back)[1].lock->min, core::Megahertz(210));
  EXPECT_EQ((*back)[1].lock->max, core::Megahertz(1275));
  EXPECT_FALSE(OriginalsFromJson("{}"));
  EXPECT_FALSE(OriginalsFromJson("not json"));
}

// Numbers that do not fit the integers they become are errors naming the field, not casts
// (1e300 into an int is undefined behaviour).
TEST(StateFileTest, IntegersOutOfRangeAreErrors) {
  const std::string gpu = R"("uuid": "GPU-a", "power_limit_w": 400, "sm_clock_lock": null)";
  for (const std::string& bad :
       std::vector<std::string>{R"({"version": 1e300, "gpus": []})",
                                R"({"version": 1, "gpus": [{"index": 1e300, )" + gpu + "}]}",
                                R"({"version": 1, "gpus": [{"index": 4294967296, )" + gpu + "}]}",
                                R"({"version": 1, "gpus": [{"index": 0.5, )" + gpu + "}]}"}) {
    auto r = OriginalsFromJson(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message().find("not a whole number"), std::string::npos)
        << r.error().message();
  }
}

TEST(StateFileTest, RestoresWhatDiffersAndRefusesOtherGpus) {
  core::FakeClock clock;
  auto devices = gpu::sim::CreateSimDevices(A100(), 2, &clock, {});
  auto originals = ReadOriginals(Raw(devices));
  ASSERT_TRUE(originals);
  ASSERT_TRUE(devices[1]->SetPowerLimit(core::Watts(250)));
  ASSERT_TRUE(devices[1]->LockSmClocks(core::Megahertz(210), core::Megahertz(1110)));
  auto lines = RestoreOriginals(Raw(devices), *originals);
  ASSERT_TRUE(lines) << lines.error().message();
  EXPECT_EQ(lines->size(), 2u);
  EXPECT_EQ(devices[1]->PowerLimits()->requested, core::Watts(400));
  EXPECT_FALSE(devices[1]->SmClockLock()->has_value());

  auto foreign = *originals;
  foreign[0].uuid = "GPU-elsewhere";
  auto refused = RestoreOriginals(Raw(devices), foreign);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), core::Code::kFailedPrecondition);
}

}  // namespace
}  // namespace headroom::service
