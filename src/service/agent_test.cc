#include "service/agent.h"

#include <filesystem>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "catalog/hardware_catalog.h"
#include "catalog/testing/embedded_catalogs.h"
#include "core/files.h"
#include "gpu/sim/sim_device.h"
#include "policy/policy_params.h"
#include "service/testing/sim_agent_gpus.h"

namespace headroom::service {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using catalog::testing::A100;

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("headroom-agent-{}-{}", info->name(), ::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // Only this user may write the state file's directory, whatever the umask (issue 44).
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all);
    options_.state_file = (dir_ / "agent-state.json").string();
    devices_ = gpu::sim::CreateSimDevices(A100(), 4, &clock_, {});
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<AgentGpu> Gpus() {
    return testing::SimAgentGpus(devices_, A100(), policy::DefaultParamsFor(A100()).lp_t2_clock);
  }
  std::unique_ptr<Agent> MakeAgent() {
    auto agent = Agent::Create(Gpus(), options_, &clock_);
    EXPECT_TRUE(agent) << agent.error().message();
    return agent ? std::move(*agent) : nullptr;
  }
  std::optional<gpu::ClockLock> Lock(int i) { return *devices_[i]->SmClockLock(); }
  core::Watts Limit(int i) { return devices_[i]->PowerLimits()->requested; }
  static core::Megahertz Failsafe() { return policy::DefaultParamsFor(A100()).lp_t2_clock; }
  bool StateFileExists() { return std::filesystem::exists(options_.state_file); }

  std::filesystem::path dir_;
  core::FakeClock clock_;
  AgentOptions options_;
  std::vector<std::unique_ptr<gpu::Device>> devices_;
};

constexpr const char* kCap1275 =
    R"({"gpus": [0, 1], "sm_clock_mhz": 1275, "power_limit_w": 300, "lease_s": 30,
        "request_id": "r1"})";

TEST_F(AgentTest, AppliesCapsAndReadsThemBack) {
  auto agent = MakeAgent();
  auto r = agent->PutCaps(kCap1275);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ((*r)["result"], "applied");
  EXPECT_EQ((*r)["gpus"].size(), 2u);
  EXPECT_EQ((*r)["gpus"][0]["confirmed"], true);
  EXPECT_EQ(Lock(0)->max, core::Megahertz(1275));
  EXPECT_EQ(Limit(1), core::Watts(300));
  EXPECT_FALSE(Lock(2).has_value());
  EXPECT_EQ(Limit(2), core::Watts(400));
  const auto state = agent->State();
  EXPECT_EQ(state["gpus"][0]["caps"]["sm_clock_mhz"], 1275.0);
  EXPECT_EQ(state["gpus"][0]["sm_clock_lock"]["max_mhz"], 1275.0);
  EXPECT_EQ(state["gpus"][2]["caps"]["sm_clock_mhz"], nullptr);
  EXPECT_EQ(state["lease"]["expires_in_s"], 30.0);
  EXPECT_EQ(state["last_command"]["request_id"], "r1");
  const std::string metrics = agent->Metrics();
  EXPECT_NE(metrics.find("headroom_agent_sm_clock_cap_hertz{gpu=\"0\"} 1275000000"),
            std::string::npos)
      << metrics;
  EXPECT_EQ(metrics.find("headroom_agent_sm_clock_cap_hertz{gpu=\"2\"}"), std::string::npos);
  EXPECT_NE(metrics.find("headroom_agent_power_limit_target_watts{gpu=\"1\"} 300"),
            std::string::npos);
  EXPECT_NE(metrics.find("headroom_agent_commands_total{result=\"applied\"} 1"), std::string::npos);
  EXPECT_NE(metrics.find("headroom_gpu_power_watts{gpu=\"0\""), std::string::npos);
  EXPECT_NE(metrics.find("headroom_agent_info{priority=\"lp\",backend=\"sim\"} 1"),
            std::string::npos);
}

TEST_F(AgentTest, NullLiftsAndAbsentKeepsACap) {
  auto agent = MakeAgent();
  ASSERT_TRUE(agent->PutCaps(kCap1275));
  ASSERT_TRUE(agent->PutCaps(R"({"sm_clock_mhz": null, "lease_s": 30, "request_id": "r2"})"));
  EXPECT_FALSE(Lock(0).has_value());
  EXPECT_EQ(Limit(0), core::Watts(300));  // untouched
}

TEST_F(AgentTest, RejectedRequestsChangeNothing) {
  auto agent = MakeAgent();
  for (const char* body :
       {R"({"sm_clock_mhz": 5000, "lease_s": 30, "request_id": "bad1"})",
        R"({"gpus": [0, 9], "sm_clock_mhz": 1275, "lease_s": 30, "request_id": "bad2"})",
        R"({"gpus": [0], "power_limit_w": 900, "lease_s": 30, "request_id": "bad3"})",
        "{not json"}) {
    EXPECT_FALSE(agent->PutCaps(body)) << body;
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Lock(i)->max, Failsafe()) << "still the failsafe held since the start";
    EXPECT_EQ(Limit(i), core::Watts(400));
  }
  EXPECT_EQ(agent->State()["lease"]["expires_in_s"], nullptr);
  EXPECT_TRUE(agent->State()["failsafe_active"].get<bool>());
  EXPECT_NE(agent->Metrics().find("headroom_agent_commands_total{result=\"rejected\"} 4"),
            std::string::npos);
}

TEST_F(AgentTest, RepeatedRequestIdIsIdempotent) {
  auto agent = MakeAgent();
  auto first = agent->PutCaps(kCap1275);
  ASSERT_TRUE(first);
  ASSERT_TRUE(devices_[0]->ResetSmClocks());  // someone else changes the GPU meanwhile
  auto again = agent->PutCaps(kCap1275);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *first);
  EXPECT_FALSE(Lock(0).has_value());  // a duplicate is not re-applied
  auto conflict = agent->PutCaps(R"({"sm_clock_mhz": 1110, "lease_s": 30, "request_id": "r1"})");
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error().code(), core::Code::kFailedPrecondition);
  const std::string metrics = agent->Metrics();
  EXPECT_NE(metrics.find("headroom_agent_commands_total{result=\"duplicate\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.find("headroom_agent_commands_total{result=\"rejected\"} 1"),
            std::string::npos);
}

TEST_F(AgentTest, ExpiredLeaseAppliesTheFailsafeUntilTheNextRequest) {
  auto agent = MakeAgent();
  ASSERT_TRUE(agent->PutCaps(R"({"gpus": [0], "sm_clock_mhz": 1410, "power_limit_w": 350,
                                 "lease_s": 2, "request_id": "a"})"));
  clock_.Advance(milliseconds(1900));
  agent->Tick();
  EXPECT_EQ(agent->State()["failsafe_active"], false);
  clock_.Advance(milliseconds(200));
  agent->Tick();
  const auto state = agent->State();
  EXPECT_EQ(state["failsafe_active"], true);
  EXPECT_EQ(state["lease"]["expired"], true);
  const core::Megahertz failsafe = policy::DefaultParamsFor(A100()).lp_t2_clock;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(Lock(i).has_value()) << i;
    EXPECT_EQ(Lock(i)->max, failsafe) << i;  // capped, not uncapped
  }
  EXPECT_EQ(Limit(0), core::Watts(350));  // the power cap stays
  EXPECT_NE(agent->Metrics().find("headroom_agent_failsafe_active 1"), std::string::npos);

  ASSERT_TRUE(agent->PutCaps(R"({"gpus": [1], "sm_clock_mhz": 1275, "lease_s": 2,
                                 "request_id": "b"})"));
  EXPECT_EQ(agent->State()["failsafe_active"], false);
  EXPECT_EQ(Lock(0)->max, core::Megahertz(1410));
  EXPECT_EQ(Lock(1)->max, core::Megahertz(1275));
  EXPECT_FALSE(Lock(2).has_value());
}

TEST_F(AgentTest, BrakeLocksAtTheBrakeClock) {
  auto agent = MakeAgent();
  ASSERT_TRUE(
      agent->PutCaps(R"({"sm_clock_mhz": 1275, "brake": true, "lease_s": 30, "request_id": "a"})"));
  const core::Megahertz brake = A100().SnapClock(A100().brake_clock);
  EXPECT_EQ(Lock(3)->max, brake);
  EXPECT_EQ(Lock(3)->min, brake);
  EXPECT_NE(agent->Metrics().find("headroom_agent_brake 1"), std::string::npos);
  ASSERT_TRUE(agent->PutCaps(R"({"brake": false, "lease_s": 30, "request_id": "b"})"));
  EXPECT_EQ(Lock(3)->max, core::Megahertz(1275));
}

TEST_F(AgentTest, DeleteRestoresTheOriginalSettings) {
  ASSERT_TRUE(devices_[2]->LockSmClocks(core::Megahertz(210), core::Megahertz(1380)));
  ASSERT_TRUE(devices_[3]->SetPowerLimit(core::Watts(380)));
  auto agent = MakeAgent();
  ASSERT_TRUE(agent->PutCaps(
      R"({"sm_clock_mhz": 1110, "power_limit_w": 200, "lease_s": 30, "request_id": "a"})"));
  EXPECT_TRUE(StateFileExists());
  auto r = agent->DeleteCaps();
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_FALSE(Lock(0).has_value());
  EXPECT_EQ(Lock(2)->max, core::Megahertz(1380));
  EXPECT_EQ(Limit(3), core::Watts(380));
  EXPECT_EQ(Limit(0), core::Watts(400));
  EXPECT_TRUE(StateFileExists()) << "kept until a clean stop";
  EXPECT_EQ(agent->State()["lease"]["expires_in_s"], nullptr);
  clock_.Advance(seconds(60));  // no lease: no failsafe
  agent->Tick();
  EXPECT_FALSE(Lock(0).has_value());
}

TEST_F(AgentTest, StateFileHoldsTheOriginalsFromTheStart) {
  ASSERT_TRUE(devices_[1]->SetPowerLimit(core::Watts(350)));
  auto agent = MakeAgent();
  EXPECT_TRUE(StateFileExists()) << "saved before the first request";
  ASSERT_TRUE(agent->PutCaps(R"({"power_limit_w": 250, "lease_s": 30, "request_id": "a"})"));
  auto saved = OriginalsFromJson(*core::ReadFile(options_.state_file));
  ASSERT_TRUE(saved);
  ASSERT_EQ(saved->size(), 4u);
  EXPECT_EQ((*saved)[1].power_limit, core::Watts(350));
  EXPECT_EQ((*saved)[0].power_limit, core::Watts(400));
  EXPECT_EQ(Limit(1), core::Watts(250));
  // The agent dies here without restoring; the state file is what is left.
  agent.reset();
  EXPECT_EQ(Limit(1), core::Watts(250));
  EXPECT_TRUE(StateFileExists());
  // The next agent restores the originals first, and takes them as its own originals.
  auto next = MakeAgent();
  EXPECT_EQ(Limit(1), core::Watts(350));
  EXPECT_EQ(Limit(0), core::Watts(400));
  EXPECT_EQ(OriginalsFromJson(*core::ReadFile(options_.state_file))->at(1).power_limit,
            core::Watts(350));
  ASSERT_TRUE(next->PutCaps(R"({"power_limit_w": 250, "lease_s": 30, "request_id": "a"})"));
  auto lines = next->Shutdown();
  ASSERT_TRUE(lines);
  EXPECT_EQ(lines->size(), 4u);
  EXPECT_EQ(Limit(1), core::Watts(350));
  EXPECT_FALSE(StateFileExists());
}

// Disk full (or the directory gone) after the start: the originals are already saved, so caps,
// lifts and the failsafe still reach the GPUs, and a clean stop still restores them.
TEST_F(AgentTest, CapsNeedNoWriteAfterTheStart) {
  auto agent = MakeAgent();
  std::filesystem::remove_all(std::filesystem::path(options_.state_file).parent_path());
  auto capped = agent->PutCaps(R"({"power_limit_w": 250, "lease_s": 1, "request_id": "a"})");
  ASSERT_TRUE(capped) << capped.error().message();
  EXPECT_EQ(Limit(0), core::Watts(250));
  ASSERT_TRUE(agent->DeleteCaps());
  EXPECT_EQ(Limit(0), core::Watts(400));
  ASSERT_TRUE(agent->PutCaps(R"({"power_limit_w": 200, "lease_s": 1, "request_id": "b"})"));
  clock_.Advance(seconds(2));
  agent->Tick();
  EXPECT_TRUE(agent->State()["failsafe_active"].get<bool>());
  auto lines = agent->Shutdown();
  ASSERT_TRUE(lines) << lines.error().message();
  EXPECT_EQ(Limit(0), core::Watts(400));
}

// Issue 46: the agent takes a clock lock as the target when it is the same clock of the GPU's own
// grid (policy::SameClock, the rule the row controller compares targets by), not within a fixed
// tolerance. The agent's GPU steps by 5 MHz here; the device below it keeps whatever clock it is
// given (a 1 MHz grid), as a driver that keeps an outside lock unrounded would.
TEST_F(AgentTest, ClockLocksAreComparedOnTheGpusOwnGrid) {
  model::GpuSpec driver = **catalog::HardwareCatalog::Embedded()->Gpu("h100-80gb-sxm");
  driver.sm_clock_step = core::Megahertz(1);
  model::GpuSpec grid = driver;
  grid.sm_clock_step = core::Megahertz(5);
  devices_ = gpu::sim::CreateSimDevices(driver, 1, &clock_, {});
  const std::vector<AgentGpu> gpus = {
      {.device = devices_[0].get(), .spec = grid, .failsafe_clock = grid.sm_clock_max}};
  auto agent = Agent::Create(gpus, options_, &clock_);
  ASSERT_TRUE(agent) << agent.error().message();
  const core::Megahertz floor = grid.sm_clock_min;
  auto cap_1400 = [&](const std::string& id) {
    auto r = (*agent)->PutCaps(
        fmt::format(R"({{"sm_clock_mhz": 1400, "lease_s": 30, "request_id": "{}"}})", id));
    EXPECT_TRUE(r) << r.error().message();
    return r ? (*r)["gpus"][0] : nlohmann::ordered_json();
  };
  // 1401 MHz is within half a step of 1400: the same clock, nothing to rewrite, confirmed.
  ASSERT_TRUE(devices_[0]->LockSmClocks(floor, core::Megahertz(1401)));
  EXPECT_EQ(cap_1400("within-half-a-step")["confirmed"], true);
  EXPECT_EQ(Lock(0)->max, core::Megahertz(1401));
  // 1405 MHz is a step away, though within 8 MHz: another clock, locked back to 1400.
  ASSERT_TRUE(devices_[0]->LockSmClocks(floor, core::Megahertz(1405)));
  EXPECT_EQ(cap_1400("a-step-away")["confirmed"], true);
  EXPECT_EQ(Lock(0)->max, core::Megahertz(1400));
}

TEST_F(AgentTest, BadStateFileStopsTheStart) {
  ASSERT_TRUE(core::WriteFileAtomically(options_.state_file, "garbage"));
  auto agent = Agent::Create(Gpus(), options_, &clock_);
  EXPECT_FALSE(agent);
  EXPECT_TRUE(StateFileExists());  // kept for a person to look at
}

// Finding 2 of issue 44: an agent started while no controller reaches it (a restart during an
// outage) holds the failsafe cap from its start, not the GPUs' own settings; a caps request
// (the controller's first) lifts it.
TEST_F(AgentTest, StartsInTheFailsafeUntilACapsRequestArrives) {
  auto agent = MakeAgent();
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(Lock(i).has_value()) << i;
    EXPECT_EQ(Lock(i)->max, Failsafe()) << i;
  }
  auto state = agent->State();
  EXPECT_TRUE(state["failsafe_active"].get<bool>());
  EXPECT_EQ(state["failsafe_reason"], "started: no controller's PUT yet");
  EXPECT_NE(agent->Metrics().find("headroom_agent_failsafe_active 1"), std::string::npos);
  clock_.Advance(seconds(600));
  agent->Tick();
  EXPECT_EQ(Lock(3)->max, Failsafe()) << "held however long no controller speaks";
  ASSERT_TRUE(agent->PutCaps(R"({"lease_s": 30, "request_id": "renew"})"));
  EXPECT_FALSE(agent->State()["failsafe_active"].get<bool>());
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(Lock(i).has_value()) << i;
}

// Issue 44, finding 7: the settings in the state file are restored onto the GPUs, so a
// directory or a file another user can write, or a link, is refused, and nothing is restored.
TEST_F(AgentTest, StateFileInADirectoryOthersCanWriteIsRefused) {
  std::filesystem::permissions(dir_,
                               std::filesystem::perms::all | std::filesystem::perms::sticky_bit);
  auto agent = Agent::Create(Gpus(), options_, &clock_);
  ASSERT_FALSE(agent);
  EXPECT_EQ(agent.error().code(), core::Code::kInvalidArgument);
  EXPECT_EQ(agent.error().message().rfind("--state-file " + options_.state_file + ": refused: " +
                                              dir_.string() + ": writable by its group and others",
                                          0),
            0u)
      << agent.error().message();
  EXPECT_NE(agent.error().message().find("install -d -m 0700"), std::string::npos);
  EXPECT_FALSE(StateFileExists());
}

TEST_F(AgentTest, StateFileOthersCanWriteIsNotRestored) {
  ASSERT_TRUE(MakeAgent()->PutCaps(R"({"power_limit_w": 250, "lease_s": 30, "request_id": "a"})"));
  ASSERT_EQ(Limit(0), core::Watts(250));  // the agent died without restoring
  std::filesystem::permissions(options_.state_file, std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  auto agent = Agent::Create(Gpus(), options_, &clock_);
  ASSERT_FALSE(agent);
  EXPECT_NE(agent.error().message().find(options_.state_file + ": writable by others (mode 0602)"),
            std::string::npos)
      << agent.error().message();
  EXPECT_NE(agent.error().message().find("chmod 0600"), std::string::npos);
  EXPECT_EQ(Limit(0), core::Watts(250)) << "nothing restored from a file others could forge";
  EXPECT_TRUE(StateFileExists());
}

TEST_F(AgentTest, StateFileThatIsALinkIsNotFollowed) {
  ASSERT_TRUE(MakeAgent()->PutCaps(R"({"power_limit_w": 250, "lease_s": 30, "request_id": "a"})"));
  const std::string elsewhere = (dir_ / "elsewhere.json").string();
  std::filesystem::rename(options_.state_file, elsewhere);
  std::filesystem::create_symlink(elsewhere, options_.state_file);
  auto agent = Agent::Create(Gpus(), options_, &clock_);
  ASSERT_FALSE(agent);
  EXPECT_NE(agent.error().message().find("a symbolic link; refused"), std::string::npos)
      << agent.error().message();
  EXPECT_EQ(Limit(0), core::Watts(250));
}

// Issue 44, finding 8: a FIFO as the state file hung the start, deaf to SIGTERM.
TEST_F(AgentTest, StateFileThatIsAFifoIsRefusedAtOnce) {
  ASSERT_EQ(::mkfifo(options_.state_file.c_str(), 0600), 0);
  auto agent = Agent::Create(Gpus(), options_, &clock_);
  ASSERT_FALSE(agent);
  EXPECT_NE(agent.error().message().find(options_.state_file + ": not a regular file (a FIFO)"),
            std::string::npos)
      << agent.error().message();
}

TEST_F(AgentTest, StateFileIsWrittenForTheAgentAlone) {
  auto agent = MakeAgent();
  struct stat st {};
  ASSERT_EQ(::stat(options_.state_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(AgentTest, ActuationDelayQueuesTheChange) {
  options_.actuation_delay = seconds(2);
  auto agent = MakeAgent();
  auto r = agent->PutCaps(kCap1275);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["result"], "scheduled");
  EXPECT_EQ(Lock(0)->max, Failsafe());
  auto state = agent->State();
  ASSERT_EQ(state["pending"].size(), 1u);
  EXPECT_EQ(state["pending"][0]["request_id"], "r1");
  clock_.Advance(milliseconds(1999));
  agent->Tick();
  EXPECT_EQ(Lock(0)->max, Failsafe());
  clock_.Advance(milliseconds(1));
  agent->Tick();
  EXPECT_EQ(Lock(0)->max, core::Megahertz(1275));
  EXPECT_TRUE(agent->State()["pending"].empty());
  EXPECT_EQ((*agent->PutCaps(kCap1275))["result"], "applied");  // the repeat sees the outcome
}

// GPUs 0 and 1 have power smoothing (as Blackwell does), 2 and 3 do not.
std::vector<std::unique_ptr<gpu::Device>> MixedSmoothingGpus(core::Clock* clock) {
  gpu::sim::SimOptions with;
  with.power_smoothing = true;
  std::vector<std::unique_ptr<gpu::Device>> out;
  for (int i = 0; i < 4; ++i) {
    out.push_back(std::make_unique<gpu::sim::SimDevice>(i, A100(), clock,
                                                        i < 2 ? with : gpu::sim::SimOptions{}));
  }
  return out;
}

TEST_F(AgentTest, AppliesPowerSmoothingWhereSupportedAndRestoresItAtStop) {
  devices_ = MixedSmoothingGpus(&clock_);
  options_.power_smoothing = PowerSmoothingConfig{.profile = 2, .update = {.floor_percent = 40}};
  auto agent = MakeAgent();
  ASSERT_NE(agent, nullptr);
  for (int i : {0, 1}) {
    const gpu::PowerSmoothingState s = *devices_[i]->PowerSmoothing();
    EXPECT_TRUE(s.enabled);
    EXPECT_EQ(s.active_profile, 2);
    EXPECT_EQ(s.profiles[2].floor_percent, 40);
    EXPECT_EQ(s.applied_floor, core::Watts(160));
  }
  // The GPUs without it: nothing of it changed, and the agent runs.
  for (int i : {2, 3}) {
    EXPECT_EQ(devices_[i]->PowerSmoothing().error().code(), core::Code::kUnimplemented);
  }
  agent->Tick();
  const auto state = agent->State();
  EXPECT_EQ(state["gpus"][0]["power_smoothing"]["supported"], true);
  EXPECT_EQ(state["gpus"][0]["power_smoothing"]["enabled"], true);
  EXPECT_EQ(state["gpus"][0]["power_smoothing"]["profile"], 2);
  EXPECT_EQ(state["gpus"][0]["power_smoothing"]["floor_percent"], 40);
  EXPECT_EQ(state["gpus"][2]["power_smoothing"]["supported"], false);
  const std::string metrics = agent->Metrics();
  EXPECT_NE(metrics.find("headroom_gpu_power_smoothing_enabled{gpu=\"1\""), std::string::npos);
  EXPECT_NE(metrics.find("headroom_gpu_power_smoothing_floor_watts{gpu=\"0\""), std::string::npos);
  EXPECT_NE(metrics.find("headroom_gpu_power_smoothing_supported{gpu=\"3\""), std::string::npos);
  EXPECT_EQ(metrics.find("headroom_gpu_power_smoothing_enabled{gpu=\"3\""), std::string::npos);

  // Lifting the caps keeps the config's smoothing; stopping puts the originals back.
  ASSERT_TRUE(agent->DeleteCaps());
  EXPECT_TRUE(devices_[0]->PowerSmoothing()->enabled);
  auto lines = agent->Shutdown();
  ASSERT_TRUE(lines) << lines.error().message();
  for (int i : {0, 1}) {
    const gpu::PowerSmoothingState s = *devices_[i]->PowerSmoothing();
    EXPECT_FALSE(s.enabled);
    EXPECT_EQ(s.active_profile, 0);
    EXPECT_EQ(s.profiles, gpu::sim::kSimPowerSmoothingPresets);
  }
  EXPECT_FALSE(StateFileExists());
}

TEST_F(AgentTest, GpusWithoutPowerSmoothingKeepTheAgentRunning) {
  options_.power_smoothing = PowerSmoothingConfig{.profile = 1};
  auto agent = MakeAgent();  // four A100s: none has it, and the agent starts
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(agent->State()["gpus"][0]["power_smoothing"]["supported"], false);
  ASSERT_TRUE(agent->Shutdown());
}

TEST_F(AgentTest, APowerSmoothingGpuThatRefusesFailsTheStartAndIsRestored) {
  gpu::sim::SimOptions denied;
  denied.power_smoothing = true;
  denied.controls_denied = true;
  devices_.clear();
  devices_.push_back(std::make_unique<gpu::sim::SimDevice>(0, A100(), &clock_, denied));
  options_.power_smoothing = PowerSmoothingConfig{.profile = 1};
  auto agent = Agent::Create(Gpus(), options_, &clock_);
  ASSERT_FALSE(agent);
  EXPECT_EQ(agent.error().code(), core::Code::kPermissionDenied);
  EXPECT_NE(agent.error().message().find("power_smoothing"), std::string::npos)
      << agent.error().message();
  EXPECT_FALSE(devices_[0]->PowerSmoothing()->enabled);
}

}  // namespace
}  // namespace headroom::service
