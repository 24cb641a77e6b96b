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
    EXPECT_NE(r.error().message().find("(expected a whole number from -2147483648 to 2147483647"),
              std::string::npos)
        << r.error().message();
  }
}

// Issue 46: the state file's writer and reader share one field table. The text is what agents
// wrote before (a restarted agent reads its predecessor's file), and every field reads back.
TEST(StateFileTest, TheFileIsWhatEarlierAgentsWroteAndReadsBack) {
  const std::vector<OriginalSettings> originals = {
      {.index = 0, .uuid = "GPU-a", .power_limit = core::Watts(400), .lock = std::nullopt},
      {.index = 3,
       .uuid = "GPU-b\"q",
       .power_limit = core::Watts(312.5),
       .lock = gpu::ClockLock{core::Megahertz(210), core::Megahertz(1275.5)}}};
  const std::string text = OriginalsToJson(originals);
  EXPECT_EQ(text, R"({
  "gpus": [
    {
      "index": 0,
      "power_limit_w": 400.0,
      "sm_clock_lock": null,
      "uuid": "GPU-a"
    },
    {
      "index": 3,
      "power_limit_w": 312.5,
      "sm_clock_lock": {
        "max_mhz": 1275.5,
        "min_mhz": 210.0
      },
      "uuid": "GPU-b\"q"
    }
  ],
  "version": 1
}
)");
  auto back = OriginalsFromJson(text);
  ASSERT_TRUE(back) << back.error().message();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[1].index, 3);
  EXPECT_EQ((*back)[1].uuid, "GPU-b\"q");
  EXPECT_EQ((*back)[1].power_limit, core::Watts(312.5));
  ASSERT_TRUE((*back)[1].lock);
  EXPECT_EQ((*back)[1].lock->min, core::Megahertz(210));
  EXPECT_EQ((*back)[1].lock->max, core::Megahertz(1275.5));
  EXPECT_FALSE((*back)[0].lock);

  auto other_version = OriginalsFromJson(R"({"version": 2, "gpus": []})");
  ASSERT_FALSE(other_version);
  EXPECT_EQ(other_version.error().message(), "unsupported state file version 2");
  auto missing = OriginalsFromJson(R"({"version": 1, "gpus": [{"index": 0}]})");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(),
            "bad state file: field 'gpus[0].uuid' is missing (expected a string; the file "
            "`headroom agent` writes)");
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

// A crashed agent's successor puts power smoothing back from the file, as it does the limits.
TEST(StateFileTest, SavesAndRestoresPowerSmoothingThroughTheFile) {
  core::FakeClock clock;
  gpu::sim::SimOptions options;
  options.power_smoothing = true;
  auto devices = gpu::sim::CreateSimDevices(A100(), 2, &clock, options);
  ASSERT_TRUE(devices[1]->ActivatePowerSmoothingProfile(2));
  auto originals = ReadOriginals(Raw(devices));
  ASSERT_TRUE(originals) << originals.error().message();
  ASSERT_TRUE((*originals)[1].power_smoothing.has_value());
  const std::string json = OriginalsToJson(*originals);
  EXPECT_NE(json.find("\"ramp_down_hysteresis_ms\""), std::string::npos) << json;
  auto back = OriginalsFromJson(json);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ((*back)[1].power_smoothing, (*originals)[1].power_smoothing);

  ASSERT_TRUE(devices[1]->UpdatePowerSmoothingProfile(2, {.floor_percent = 75}));
  ASSERT_TRUE(devices[1]->ActivatePowerSmoothingProfile(4));
  ASSERT_TRUE(devices[1]->SetPowerSmoothingEnabled(true));
  auto lines = RestoreOriginals(Raw(devices), *back);
  ASSERT_TRUE(lines) << lines.error().message();
  EXPECT_NE((*lines)[1].find("power smoothing off, profile 2"), std::string::npos) << (*lines)[1];
  const gpu::PowerSmoothingState now = *devices[1]->PowerSmoothing();
  EXPECT_FALSE(now.enabled);
  EXPECT_EQ(now.active_profile, 2);
  EXPECT_EQ(now.profiles, gpu::sim::kSimPowerSmoothingPresets);
}

// A GPU without power smoothing writes no key for it, so the file reads as before.
TEST(StateFileTest, AGpuWithoutPowerSmoothingWritesNothingForIt) {
  core::FakeClock clock;
  auto devices = gpu::sim::CreateSimDevices(A100(), 1, &clock, {});
  auto originals = ReadOriginals(Raw(devices));
  ASSERT_TRUE(originals);
  EXPECT_FALSE((*originals)[0].power_smoothing.has_value());
  EXPECT_EQ(OriginalsToJson(*originals).find("power_smoothing"), std::string::npos);
}

}  // namespace
}  // namespace headroom::service
