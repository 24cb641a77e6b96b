#include "service/controller.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "catalog/hardware_catalog.h"
#include "core/check.h"
#include "service/caps_request.h"

namespace headroom::service {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// An in-memory agent: answers from `report`, takes caps into it, and can fail or block.
class FakeAgent final : public AgentLink {
 public:
  explicit FakeAgent(double gpu_w) { report.gpu_power = core::Watts(gpu_w); }
  core::Result<AgentReport> GetState() override {
    if (blocker.valid()) blocker.wait();
    if (fail_get) return core::Fail(core::Error::Unavailable("connection refused"));
    return report;
  }
  core::Result<CapsOutcome> PutCaps(const CapsCommand& command) override {
    puts.push_back(command);
    if (fail_put) return core::Fail(core::Error::Unavailable("connection refused"));
    if (command.targets && !ignore_caps) report.caps = *command.targets;
    report.has_lease = true;
    report.failsafe_active = false;
    return CapsOutcome{.result = "applied", .confirmed = true, .mismatch = ""};
  }
  int CapsCommands() const {
    int n = 0;
    for (const CapsCommand& c : puts) n += c.targets.has_value();
    return n;
  }
  int LeaseOnlyCommands() const { return static_cast<int>(puts.size()) - CapsCommands(); }

  AgentReport report;
  std::vector<CapsCommand> puts;
  bool fail_get = false;
  bool fail_put = false;
  bool ignore_caps = false;  // answers "applied" and keeps what it held
  std::shared_future<void> blocker;
};

const catalog::HardwareCatalog& Catalog() {
  static const auto catalog = catalog::HardwareCatalog::Embedded();
  return *catalog;
}

class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("headroom-controller-{}-{}",
                       ::testing::UnitTest::GetInstance()->current_test_info()->name(), getpid());
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "token") << "t0ken\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Three DGX-A100 servers (hp, lp, lp), budget 3 x 6.5 kW, polca with a short restart hold.
  std::string Yaml(const std::string& extra_policy = "", const std::string& control = "") {
    std::string agents;
    int n = 0;
    for (const char* p : {"hp", "lp", "lp"}) {
      agents += fmt::format(
          "  - {{name: s{}, url: 'http://127.0.0.1:1', token_file: {}, "
          "priority: {}, server: dgx-a100}}\n",
          n++, (dir_ / "token").string(), p);
    }
    return fmt::format(
        "row: {{name: r, budget_w: 19500}}\npolicy: {{name: polca{}}}\n"
        "control: {{period: 1s, lease_ttl: 30s, agent_timeout: 100ms, restart_hold: 5s{}}}\n"
        "agents:\n{}",
        extra_policy, control, agents);
  }
  void Start(const std::string& yaml, std::vector<double> gpu_w, bool dry_run = false) {
    auto config = ParseControllerConfig(yaml, "row.yaml", Catalog());
    ASSERT_TRUE(config) << config.error().message();
    std::vector<std::unique_ptr<AgentLink>> links;
    for (double w : gpu_w) {
      auto a = std::make_unique<FakeAgent>(w);
      agents_.push_back(a.get());
      links.push_back(std::move(a));
    }
    ControllerOptions options;
    options.dry_run = dry_run;
    options.audit = [this](const nlohmann::ordered_json& line) {
      audit_.push_back(line.dump());
      return !audit_full_;
    };
    auto c = Controller::Create(std::move(*config), std::move(links), nullptr, &clock_, options);
    ASSERT_TRUE(c) << c.error().message();
    controller_ = std::move(*c);
  }
  // GPU power that puts the row at fraction p (non-GPU power is 3300 W per server).
  void SetRowFraction(double p) {
    const double gpu_each = (19500 * p - 3 * 3300) / 3;
    for (FakeAgent* a : agents_) a->report.gpu_power = core::Watts(gpu_each);
  }
  nlohmann::ordered_json Step() {
    auto record = controller_->Step();
    controller_->WaitForCommands();
    clock_.Advance(seconds(1));
    return record;
  }

  std::filesystem::path dir_;
  core::FakeClock clock_;
  std::vector<FakeAgent*> agents_;
  std::vector<std::string> audit_;
  bool audit_full_ = false;  // the audit log's disk is full
  std::unique_ptr<Controller> controller_;
};

TEST_F(ControllerTest, CapsLowPriorityAtT1SendingOnlyChangesAndRenewingLeases) {
  Start(Yaml(), {0, 0, 0});
  SetRowFraction(0.70);
  Step();  // sync: no agent holds a lease yet, so each gets one
  for (FakeAgent* a : agents_) EXPECT_EQ(a->LeaseOnlyCommands(), 1);
  for (int i = 0; i < 5; ++i) Step();
  for (FakeAgent* a : agents_) EXPECT_EQ(a->puts.size(), 1u) << "nothing changed: nothing sent";
  SetRowFraction(0.84);
  auto record = Step();
  EXPECT_EQ(record["state"], "t1");
  EXPECT_EQ(agents_[0]->CapsCommands(), 0) << "HP is not capped at T1";
  for (int lp : {1, 2}) {
    ASSERT_EQ(agents_[lp]->CapsCommands(), 1);
    EXPECT_DOUBLE_EQ(agents_[lp]->puts.back().targets->sm_clock_cap->value(), 1275);
    EXPECT_EQ(agents_[lp]->puts.back().lease, seconds(30));
  }
  Step();
  EXPECT_EQ(agents_[1]->CapsCommands(), 1) << "accepted caps are not re-sent";
  // Leases are renewed every third of the TTL.
  for (int i = 0; i < 10; ++i) Step();
  EXPECT_GE(agents_[0]->LeaseOnlyCommands(), 2);
  EXPECT_EQ(controller_->Status()["servers"][1]["accepted"]["sm_clock_mhz"], 1275.0);
  // Each step was audited, with its inputs.
  EXPECT_EQ(audit_.size(), controller_->steps());
  auto line = nlohmann::json::parse(audit_.back());
  EXPECT_EQ(line["servers"].size(), 3u);
  EXPECT_NEAR(line["row_power_w"].get<double>(), 19500 * 0.84, 1);
  // Power falls below T1 - hysteresis: caps lift.
  SetRowFraction(0.70);
  Step();
  Step();
  EXPECT_FALSE(agents_[1]->report.caps.sm_clock_cap.has_value());
  EXPECT_EQ(controller_->Status()["state"], "normal");
}

// An agent (or anything answering at its address) reporting negative power, 0 W or less than its
// GPUs draw idle (finding 5 of issue 44) must not pull the row's power down and lift everyone's
// caps: it is counted at its rated maximum and named.
TEST_F(ControllerTest, ImplausibleAgentReportCountsAtItsRatedMaximum) {
  Start(Yaml(), {0, 0, 0});
  SetRowFraction(0.84);  // above T1 (0.80): LP servers are capped
  Step();
  Step();
  ASSERT_TRUE(agents_[1]->report.caps.sm_clock_cap.has_value());
  for (double bad_w : {-2000.0 * 8, 40'000.0, 0.0, 100.0}) {
    agents_[2]->report.gpu_power = core::Watts(bad_w);
    auto record = Step();
    EXPECT_EQ(record["servers"][2]["counted_as"], "implausible") << bad_w;
    EXPECT_DOUBLE_EQ(record["servers"][2]["counted_w"].get<double>(), 6500) << bad_w;
    EXPECT_GE(record["row_power_w"].get<double>(), 19500 * 0.8) << bad_w;
    Step();
    EXPECT_TRUE(agents_[1]->report.caps.sm_clock_cap.has_value()) << bad_w;
    EXPECT_NE(controller_->Metrics().find("headroom_row_agent_implausible{server=\"s2\"} 1"),
              std::string::npos);
  }
  // A negative GPU reading inside an otherwise sane sum is caught by the parser.
  auto parsed = ParseAgentState(nlohmann::json::parse(
      R"({"gpus": [{"power_w": 300, "caps": {}}, {"power_w": -1, "caps": {}}]})"));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->implausible, "GPU 1 reports -1 W");
}

// At start the controller says which agents it cannot reach (log and audit record).
TEST_F(ControllerTest, FirstStepNamesTheAgentsItCannotReach) {
  Start(Yaml(), {0, 0, 0});
  agents_[2]->fail_get = true;
  SetRowFraction(0.60);
  const std::string notes = Step()["notes"].dump();
  EXPECT_NE(notes.find("cannot reach the agent of s2"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("agent of s1"), std::string::npos) << notes;
  EXPECT_NE(notes.find("reached 2 of 3 agents"), std::string::npos) << notes;
  EXPECT_EQ(Step()["notes"].dump().find("start:"), std::string::npos) << "only at start";
}

TEST_F(ControllerTest, UnreachableAgentCountsAtItsRatedMaximum) {
  Start(Yaml(), {0, 0, 0});
  SetRowFraction(0.60);
  Step();
  agents_[2]->fail_get = true;
  auto record = Step();
  EXPECT_EQ(record["servers"][2]["counted_as"], "rated-max");
  EXPECT_DOUBLE_EQ(record["servers"][2]["counted_w"].get<double>(), 6500);
  const double others = 2 * (19500 * 0.60 / 3);
  EXPECT_NEAR(record["row_power_w"].get<double>(), others + 6500, 1);
  auto status = controller_->Status();
  EXPECT_FALSE(status["servers"][2]["reachable"]);
  EXPECT_NE(status["servers"][2]["error"].get<std::string>().find("refused"), std::string::npos);
  EXPECT_NE(controller_->Metrics().find("headroom_row_agent_up{server=\"s2\"} 0"),
            std::string::npos);
}

// The controller's monotonic clock jumping forward (the process or its VM suspended for an
// hour) between two steps: the next step renews every lease at once, holds the caps the row
// power still calls for, and lifts them as soon as it does not.
TEST_F(ControllerTest, ClockJumpForwardRenewsEveryLeaseAndKeepsTheCaps) {
  Start(Yaml(), {0, 0, 0});
  SetRowFraction(0.84);
  for (int i = 0; i < 3; ++i) Step();
  ASSERT_TRUE(agents_[1]->report.caps.sm_clock_cap.has_value());
  std::vector<size_t> sent;
  for (FakeAgent* a : agents_) sent.push_back(a->puts.size());
  clock_.Advance(std::chrono::hours(1));
  auto record = Step();
  EXPECT_EQ(record["state"], "t1");
  for (size_t i = 0; i < agents_.size(); ++i) {
    EXPECT_EQ(agents_[i]->puts.size(), sent[i] + 1) << "server " << i << ": lease renewed";
    EXPECT_EQ(agents_[i]->puts.back().lease, seconds(30));
  }
  EXPECT_DOUBLE_EQ(agents_[1]->report.caps.sm_clock_cap->value(), 1275);
  SetRowFraction(0.60);
  Step();
  Step();
  EXPECT_FALSE(agents_[1]->report.caps.sm_clock_cap.has_value());
}

// Request ids stay within what agents accept whatever the row's name, and one the agent refuses
// as reused (a controller restarted with a repeated instance id) is never sent again: the retry
// carries a new one.
TEST_F(ControllerTest, RequestIdsFitAndARefusedOneIsNotReused) {
  std::string yaml = Yaml();
  yaml.replace(yaml.find("name: r,"), 8, "name: '" + std::string(300, 'r') + " 7',");
  Start(yaml, {0, 0, 0});
  SetRowFraction(0.84);
  agents_[1]->fail_put = true;
  Step();
  agents_[1]->fail_put = false;
  for (int i = 0; i < 8 && agents_[1]->puts.size() < 2; ++i) Step();
  ASSERT_GE(agents_[1]->puts.size(), 2u);
  EXPECT_NE(agents_[1]->puts[0].request_id, agents_[1]->puts[1].request_id);
  for (const CapsCommand& c : agents_[1]->puts) {
    auto parsed = ParseCapsRequest(CapsBody(c));
    EXPECT_TRUE(parsed) << c.request_id << ": " << parsed.error().message();
  }
}

// The audit log's disk full: every step still decides and sends, and the lost lines are counted.
TEST_F(ControllerTest, AuditLogThatCannotBeWrittenDoesNotStopControl) {
  Start(Yaml(), {0, 0, 0});
  audit_full_ = true;
  SetRowFraction(0.84);
  for (int i = 0; i < 4; ++i) Step();
  EXPECT_TRUE(agents_[1]->report.caps.sm_clock_cap.has_value());
  EXPECT_NE(controller_->Metrics().find("headroom_row_audit_lines_lost_total 3"), std::string::npos)
      << controller_->Metrics();
}

TEST_F(ControllerTest, RestartHoldKeepsTheCapsAgentsAlreadyHold) {
  Start(Yaml(), {0, 0, 0});
  agents_[1]->report.caps.sm_clock_cap = core::Megahertz(1110);
  agents_[1]->report.has_lease = true;
  SetRowFraction(0.60);
  for (int i = 0; i < 4; ++i) {
    auto record = Step();
    EXPECT_EQ(record["servers"][1]["target"]["sm_clock_mhz"], 1110.0) << "step " << i;
  }
  EXPECT_EQ(agents_[1]->CapsCommands(), 0);
  for (int i = 0; i < 3; ++i) Step();
  EXPECT_FALSE(agents_[1]->report.caps.sm_clock_cap.has_value()) << "lifted after the hold";
}

TEST_F(ControllerTest, AgentThatLostItsCapsIsCappedAgain) {
  Start(Yaml(), {0, 0, 0});
  SetRowFraction(0.84);
  for (int i = 0; i < 3; ++i) Step();
  ASSERT_TRUE(agents_[1]->report.caps.sm_clock_cap.has_value());
  AgentReport restarted;  // no caps, no lease
  restarted.gpu_power = agents_[1]->report.gpu_power;
  agents_[1]->report = restarted;
  auto record = Step();
  ASSERT_TRUE(record.contains("notes"));
  EXPECT_NE(record["notes"].dump().find("without a lease"), std::string::npos);
  Step();
  ASSERT_TRUE(agents_[1]->report.caps.sm_clock_cap.has_value());
  EXPECT_DOUBLE_EQ(agents_[1]->report.caps.sm_clock_cap->value(), 1275);
}

// Finding 1 of issue 44: a PUT from elsewhere (another controller, a person, a replay) that lifts
// the brake and the caps of agents holding a lease is seen at the next step and undone; status
// never calls such a server confirmed.
TEST_F(ControllerTest, CapsLiftedByAnOutsidePutUnderALeaseAreReasserted) {
  Start(Yaml(), {0, 0, 0});
  SetRowFraction(1.10);  // over the brake threshold: every server braked, LP capped at T2
  for (int i = 0; i < 3; ++i) Step();
  for (FakeAgent* a : agents_) ASSERT_TRUE(a->report.caps.brake);
  ASSERT_TRUE(agents_[1]->report.caps.sm_clock_cap.has_value());
  for (FakeAgent* a : agents_) {
    a->report.caps = {};  // {"sm_clock_mhz": null, "power_limit_w": null, "brake": false}
    a->report.has_lease = true;
  }
  auto record = Step();
  ASSERT_TRUE(record.contains("notes"));
  EXPECT_NE(record["notes"].dump().find("under a lease"), std::string::npos) << record.dump();
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(record["servers"][s]["sent"], "caps") << s;
    EXPECT_TRUE(agents_[s]->report.caps.brake) << s;
  }
  EXPECT_DOUBLE_EQ(agents_[1]->report.caps.sm_clock_cap->value(),
                   record["servers"][1]["target"]["sm_clock_mhz"].get<double>());
}

TEST_F(ControllerTest, StatusSaysAServerIsUnconfirmedWhileItHoldsLessThanItsTarget) {
  Start(Yaml(), {0, 0, 0});
  SetRowFraction(0.84);
  for (int i = 0; i < 3; ++i) Step();
  agents_[1]->report.caps = {};  // lifted by someone else; the agent keeps its lease
  // The poll sees the lifted cap: confirmed is false in the status the step publishes.
  Step();
  const auto status = controller_->Status();
  EXPECT_FALSE(status["servers"][1]["confirmed"].get<bool>()) << status.dump();
  EXPECT_EQ(status["servers"][1]["holds"], TargetsJson({}));
}

TEST_F(ControllerTest, AnAgentThatNeverTakesItsCapsIsNamedUnconverged) {
  Start(Yaml("", ", converge_within: 5s"), {0, 0, 0});
  SetRowFraction(0.84);
  agents_[2]->ignore_caps = true;
  nlohmann::ordered_json record;
  bool warned = false;
  for (int i = 0; i < 8; ++i) {
    record = Step();
    warned =
        warned ||
        record.value("notes", nlohmann::ordered_json::array()).dump().find("converge_within") !=
            std::string::npos;
  }
  EXPECT_TRUE(warned);
  EXPECT_TRUE(record["servers"][2].value("unconverged", false)) << record.dump();
  const auto status = controller_->Status();
  EXPECT_FALSE(status["servers"][2]["converged"].get<bool>());
  EXPECT_TRUE(status["servers"][1]["converged"].get<bool>());
  EXPECT_NE(controller_->Metrics().find("headroom_row_server_unconverged{server=\"s2\"} 1"),
            std::string::npos);
  agents_[2]->ignore_caps = false;
  for (int i = 0; i < 3; ++i) record = Step();
  EXPECT_TRUE(controller_->Status()["servers"][2]["converged"].get<bool>());
}

TEST_F(ControllerTest, FailedCommandsAreRetriedWithExponentialBackoff) {
  Start(Yaml(), {0, 0, 0});
  SetRowFraction(0.84);
  agents_[1]->fail_put = true;
  std::vector<int> sent_at;
  for (int t = 0; t < 12; ++t) {
    const size_t before = agents_[1]->puts.size();
    Step();
    if (agents_[1]->puts.size() > before) sent_at.push_back(t);
  }
  // Tries at 0, then 1, 2, 4, 8 s after each failure (answers are read one step later).
  ASSERT_GE(sent_at.size(), 4u);
  EXPECT_EQ(sent_at[1] - sent_at[0], 2);
  EXPECT_EQ(sent_at[2] - sent_at[1], 3);
  EXPECT_EQ(sent_at[3] - sent_at[2], 5);
  EXPECT_EQ(controller_->Status()["servers"][1]["failures"], 4);
  agents_[1]->fail_put = false;
  for (int t = 0; t < 10; ++t) Step();
  EXPECT_EQ(controller_->Status()["servers"][1]["failures"], 0);
  EXPECT_TRUE(agents_[1]->report.caps.sm_clock_cap.has_value());
}

TEST_F(ControllerTest, OverBudgetWithCapsNotTakingEscalatesToTheBrake) {
  // The policy's own brake at 1.05, so that only the escalation can brake at p = 1.02.
  Start(Yaml(", brake_threshold: 1.05, brake_release: 1.0", ", escalate_after: 3s"), {0, 0, 0});
  SetRowFraction(1.02);
  agents_[2]->fail_put = true;
  nlohmann::ordered_json record;
  for (int i = 0; i < 6; ++i) record = Step();
  EXPECT_EQ(record["state"], "escalated");
  EXPECT_TRUE(agents_[0]->report.caps.brake || record["servers"][0]["target"]["brake"]);
  Step();
  EXPECT_TRUE(agents_[0]->report.caps.brake);
  EXPECT_TRUE(agents_[1]->report.caps.brake);
  EXPECT_NE(controller_->Metrics().find("headroom_row_brake_events_total 1"), std::string::npos);
  SetRowFraction(0.80);
  record = Step();
  EXPECT_NE(record["state"], "escalated");
}

TEST_F(ControllerTest, SlowAgentIsSkippedNotWaitedFor) {
  Start(Yaml(), {0, 0, 0});
  SetRowFraction(0.84);
  std::promise<void> release;
  agents_[0]->blocker = release.get_future().share();
  auto record = Step();  // returns while agent 0 is still blocked
  EXPECT_FALSE(record["servers"][0]["reachable"]);
  EXPECT_NE(record["servers"][0]["error"].get<std::string>().find("no answer within"),
            std::string::npos);
  EXPECT_TRUE(record["servers"][1]["reachable"]);
  Step();
  EXPECT_EQ(agents_[1]->CapsCommands(), 1) << "the others were capped meanwhile";
  release.set_value();
}

TEST_F(ControllerTest, DryRunDecidesAndSendsNothing) {
  Start(Yaml(), {0, 0, 0}, /*dry_run=*/true);
  SetRowFraction(0.92);
  nlohmann::ordered_json record;
  for (int i = 0; i < 3; ++i) record = Step();
  EXPECT_EQ(record["state"], "t2");
  EXPECT_TRUE(record["dry_run"]);
  for (FakeAgent* a : agents_) EXPECT_TRUE(a->puts.empty());
  EXPECT_NE(controller_->Metrics().find("headroom_row_dry_run 1"), std::string::npos);
}

// mix-aware from row.yaml: the agents' engine windows rank the LP servers, the cheapest (lowest
// prefill share) is capped first and only as many as the excess needs; an engine that goes quiet
// lifts nothing.
TEST_F(ControllerTest, MixAwareCapsTheLpServerWhoseEngineSaysItIsCheapest) {
  std::string yaml = Yaml();
  yaml.replace(yaml.find("name: polca"), 11, "name: mix-aware");
  Start(yaml, {0, 0, 0});
  SetRowFraction(0.91);  // steady just under mix_target 0.92: nothing capped
  for (int i = 0; i < 60; ++i) EXPECT_EQ(Step()["state"], "normal");
  agents_[1]->report.serving = policy::ServingSignal{.prefill_share = 0.9};
  agents_[2]->report.serving = policy::ServingSignal{.prefill_share = 0.3};
  SetRowFraction(0.925);  // ~200 W over the target, projected: one LP server's cap covers it
  auto record = Step();
  EXPECT_EQ(record["state"], "lp");
  EXPECT_EQ(agents_[0]->CapsCommands(), 0);
  EXPECT_EQ(agents_[1]->CapsCommands(), 0);
  ASSERT_EQ(agents_[2]->CapsCommands(), 1);
  EXPECT_DOUBLE_EQ(agents_[2]->puts.back().targets->sm_clock_cap->value(), 1110);
  agents_[1]->report.serving.reset();
  agents_[2]->report.serving.reset();
  SetRowFraction(0.90);
  for (int i = 0; i < 60; ++i) Step();
  EXPECT_TRUE(agents_[2]->report.caps.sm_clock_cap.has_value()) << "no room to lift it";
  EXPECT_EQ(agents_[1]->CapsCommands(), 0);
}

// The grid's budget in the daemon: a signal lowers it, the policy caps to meet it and the brake
// waits for its time to comply; refusals change nothing; the schedule's daily window applies on
// the calendar clock; every request is in the next step's audit record.
TEST_F(ControllerTest, AGridSignalLowersTheBudgetAndTheBrakeWaitsForItsTimeToComply) {
  std::ofstream(dir_ / "grid-token") << "grid\n";
  Start(Yaml() + fmt::format("grid: {{token_file: {}, comply_within: 20s}}\n",
                             (dir_ / "grid-token").string()),
        {0, 0, 0});
  SetRowFraction(0.80);
  Step();
  EXPECT_EQ(controller_->Budget()["source"], "provisioned");
  auto refused = controller_->PutBudget(R"({"budget_w": 20000, "duration": "1h", "reason": "r"})");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), core::Code::kOutOfRange);
  EXPECT_FALSE(controller_->PutBudget(R"({"budget_w": 15000})"));
  auto put = controller_->PutBudget(R"({"budget_w": 15000, "duration": "10m", "reason": "DR 7"})");
  ASSERT_TRUE(put) << put.error().message();
  EXPECT_EQ((*put)["comply_within_s"], 20.0) << "the grid section's default";
  auto again = controller_->PutBudget(R"({"budget_w": 14000, "duration": "1h", "reason": "r"})");
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message().find("at most once every"), std::string::npos);
  // Over the lowered budget (p 1.04) with caps that cannot bring it down (the fake agents' power
  // does not follow their caps): no brake for 20 s, then the brake.
  for (int t = 0; t < 20; ++t) {
    auto record = Step();
    EXPECT_DOUBLE_EQ(record["budget_w"].get<double>(), 15000) << t;
    EXPECT_EQ(record["budget"]["source"], "signal");
    EXPECT_TRUE(record["budget"]["complying"].get<bool>()) << t;
    EXPECT_FALSE(record["servers"][0]["target"].value("brake", false)) << t;
    if (t == 0) {
      ASSERT_TRUE(record.contains("budget_requests"));
      EXPECT_EQ(record["budget_requests"].size(), 4u) << "refused ones included";
    }
  }
  auto record = Step();
  EXPECT_FALSE(record["budget"]["complying"].get<bool>());
  for (int t = 0; t < 3 && !record["servers"][0]["target"].value("brake", false); ++t) {
    record = Step();
  }
  EXPECT_TRUE(record["servers"][0]["target"].value("brake", false)) << record.dump(1);
  record = Step();
  EXPECT_GT(record["budget"]["over_after_deadline_s"].get<double>(), 0);
  EXPECT_NE(controller_->Metrics().find("headroom_row_budget_watts 15000"), std::string::npos);
  // Deleted: the provisioned budget at once.
  ASSERT_TRUE(controller_->DeleteBudget());
  EXPECT_FALSE(controller_->DeleteBudget()) << "nothing left to delete";
  record = Step();
  EXPECT_DOUBLE_EQ(record["budget_w"].get<double>(), 19500);
  EXPECT_EQ(record["budget"]["source"], "provisioned");
}

TEST_F(ControllerTest, TheGridScheduleLowersTheBudgetEveryDayInUtc) {
  // The fake clock's calendar starts at 1970-01-01 00:00:00 UTC.
  Start(Yaml() +
            "grid:\n  budget_schedule:\n"
            "    - {daily: '00:00', for: 2s, shed: 20%, comply_within: 1s, reason: nightly}\n",
        {0, 0, 0});
  SetRowFraction(0.60);
  auto record = Step();
  EXPECT_DOUBLE_EQ(record["budget_w"].get<double>(), 19500 * 0.8);
  EXPECT_EQ(record["budget"]["source"], "schedule");
  EXPECT_EQ(record["budget"]["reason"], "nightly");
  Step();
  record = Step();
  EXPECT_DOUBLE_EQ(record["budget_w"].get<double>(), 19500) << "two seconds later";
  auto put = controller_->PutBudget(R"({"budget_w": 15000, "duration": "1h", "reason": "r"})");
  EXPECT_FALSE(put) << "no grid token: no signal";
}

TEST(ControllerConfigTest, ReadsTheShippedRowFile) {
  // deploy/controller/row.yaml gives each agent its own /etc/headroom/tokens/<name> (one token
  // per node); point each at a temporary file holding a token of its own.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("headroom-rowyaml-{}", getpid());
  std::filesystem::create_directories(dir);
  const char* source_dir = std::getenv("HEADROOM_SOURCE_DIR");
  std::ifstream in(std::string(source_dir != nullptr ? source_dir : ".") +
                   "/deploy/controller/row.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "token_file: /etc/headroom/tokens/";
  for (size_t at = 0; (at = text.find(key, at)) != std::string::npos;) {
    const size_t value = at + std::string("token_file: ").size();
    const size_t end = text.find(',', value);
    ASSERT_NE(end, std::string::npos);
    const std::string name = text.substr(at + key.size(), end - at - key.size());
    const std::string file = (dir / name).string();
    std::ofstream(file) << "token-of-" << name;
    text.replace(value, end - value, file);
    at = value + file.size();
  }
  auto config = ParseControllerConfig(text, "row.yaml", Catalog());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->agents.size(), 40u);
  EXPECT_TRUE(AgentsSharingTokens(*config).empty()) << "the shipped row.yaml shares a token";
  EXPECT_DOUBLE_EQ(config->budget.value(), 260000);
  EXPECT_DOUBLE_EQ(config->params.t1, 0.80);
}

// Finding 4 of issue 44: agents that share a token are named (the controller warns at start),
// so that a row where one node can command the others is seen.
TEST_F(ControllerTest, AgentsSharingATokenAreNamed) {
  auto shared = ParseControllerConfig(Yaml(), "row.yaml", Catalog());
  ASSERT_TRUE(shared) << shared.error().message();
  EXPECT_EQ(AgentsSharingTokens(*shared),
            (std::vector<std::vector<std::string>>{{"s0", "s1", "s2"}}));
  std::ofstream(dir_ / "token-s1") << "another\n";
  std::string yaml = Yaml();
  const std::string first =
      fmt::format("name: s1, url: 'http://127.0.0.1:1', token_file: {}", (dir_ / "token").string());
  ASSERT_NE(yaml.find(first), std::string::npos);
  yaml.replace(yaml.find(first), first.size(),
               fmt::format("name: s1, url: 'http://127.0.0.1:1', token_file: {}",
                           (dir_ / "token-s1").string()));
  auto mixed = ParseControllerConfig(yaml, "row.yaml", Catalog());
  ASSERT_TRUE(mixed) << mixed.error().message();
  EXPECT_EQ(AgentsSharingTokens(*mixed), (std::vector<std::vector<std::string>>{{"s0", "s2"}}));
}

TEST_F(ControllerTest, ConfigErrorsNameTheField) {
  auto bad = [&](const std::string& yaml) {
    auto c = ParseControllerConfig(yaml, "row.yaml", Catalog());
    return c ? std::string("accepted") : c.error().message();
  };
  std::string y = Yaml();
  EXPECT_NE(bad(Yaml(", t1: 2")).find("policy"), std::string::npos);
  EXPECT_NE(bad(Yaml(", tt1: 0.8")).find("unknown policy constant"), std::string::npos);
  auto with = [&y](const std::string& from, const std::string& to) {
    std::string out = y;
    out.replace(out.find(from), from.size(), to);
    return out;
  };
  EXPECT_NE(bad(with("agent_timeout: 100ms", "agent_timeout: 2s")).find("agent_timeout"),
            std::string::npos);
  EXPECT_NE(bad(with("lease_ttl: 30s", "lease_ttl: 2s")).find("lease_ttl"), std::string::npos);
  EXPECT_NE(bad(with("period: 1s", "period: soon")).find("control.period"), std::string::npos);
  // 3 * 36000 days overflowed int64 ns: --check passed and the controller stepped once.
  EXPECT_NE(bad(with("period: 1s", "period: 36000d")).find("longer than a day"), std::string::npos);
  // Duplicate keys: the first used to win silently.
  EXPECT_NE(bad(with("period: 1s", "period: 1s, period: 2s")).find("given twice"),
            std::string::npos);
  std::string dup = y +
                    "  - {name: s0, url: 'http://h:1', token_file: " + (dir_ / "token").string() +
                    ", priority: hp, server: dgx-a100}\n";
  EXPECT_NE(bad(dup).find("listed twice"), std::string::npos);
  EXPECT_NE(bad(with("http://127.0.0.1:1", "ftp://127.0.0.1:1")).find("agents[0].url"),
            std::string::npos);
  EXPECT_EQ(bad(with("http://127.0.0.1:1", "https://127.0.0.1:1")), "accepted");
  EXPECT_NE(bad(y + "tls: {ca_file: /nonexistent/ca.pem}\n").find("tls.ca_file"),
            std::string::npos);
  std::string no_token = y;
  no_token.replace(no_token.find((dir_ / "token").string()), (dir_ / "token").string().size(),
                   "/nonexistent/token");
  EXPECT_NE(bad(no_token).find("token_file"), std::string::npos);
  EXPECT_NE(bad(y + "telemetry: {source: prometheus, url: 'http://p:9090'}\n").find("query"),
            std::string::npos);
  EXPECT_EQ(bad(y + "telemetry: {source: command, command: [cat, /tmp/w]}\n"), "accepted");
  // The grid: its own token, daily windows only, positive bounds.
  const std::string agent_token = (dir_ / "token").string();
  EXPECT_NE(bad(y + "grid: {token_file: " + agent_token + "}\n").find("the same token as agent"),
            std::string::npos);
  EXPECT_NE(bad(y + "grid: {token_file: /nonexistent/grid}\n").find("grid.token_file"),
            std::string::npos);
  EXPECT_NE(bad(y + "grid: {min_interval: 0s}\n").find("grid.min_interval"), std::string::npos);
  EXPECT_NE(bad(y + "grid: {budget_schedule: [{at: 1h, for: 1h, shed: 10%, reason: r}]}\n")
                .find("PUT /v1/budget"),
            std::string::npos);
  EXPECT_NE(bad(y + "grid: {budget_schedule: [{daily: '17:00', for: 3h, shed: 10%, reason: a}, "
                    "{daily: '19:00', for: 1h, shed: 20%, reason: b}]}\n")
                .find("overlaps"),
            std::string::npos);
  EXPECT_NE(bad(y + "grid: {tokenfile: x}\n").find("tokenfile"), std::string::npos);
  EXPECT_NE(bad(y + "grid: {ramp_up_w_per_s: 0}\n").find("grid.ramp_up_w_per_s"),
            std::string::npos);
  EXPECT_NE(bad(y + "grid: {ramp_window: 0s}\n").find("grid.ramp_window"), std::string::npos);
}

TEST(AgentLinkTest, ParsesTheAgentStateTightestCapAcrossGpus) {
  auto state = nlohmann::json::parse(R"({
    "priority": "lp", "gpus": [
      {"index": 0, "power_w": 250.5, "caps": {"sm_clock_mhz": 1275, "power_limit_w": null,
       "brake": false, "confirmed": true}},
      {"index": 1, "power_w": 100, "caps": {"sm_clock_mhz": 1110, "power_limit_w": 300,
       "brake": false, "confirmed": false, "mismatch": "SM clock lock reads unlocked"}}],
    "lease": {"expires_in_s": 12.5, "expired": false}, "failsafe_active": false,
    "pending": []})");
  auto r = ParseAgentState(state);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_DOUBLE_EQ(r->gpu_power.value(), 350.5);
  EXPECT_DOUBLE_EQ(r->caps.sm_clock_cap->value(), 1110);
  EXPECT_DOUBLE_EQ(r->caps.power_limit->value(), 300);
  EXPECT_TRUE(r->has_lease);
  EXPECT_FALSE(r->confirmed);
  EXPECT_NE(r->mismatch.find("GPU 1"), std::string::npos);
  EXPECT_FALSE(ParseAgentState(nlohmann::json::parse(R"({"gpus": 3})")));
  EXPECT_FALSE(ParseAgentState(nlohmann::json::parse(R"({"gpus": [{"power_w": "x"}]})")));
}

// Anything answering at an agent's address: not JSON, the wrong shapes, absurd numbers, JSON
// nested 100,000 deep, 8 MB. Each is an error naming the agent (the controller then counts the
// server at its rated maximum), never a crash and never an unbounded buffer.
TEST(AgentLinkTest, HostileStateAnswersAreErrors) {
  httplib::Server server;
  std::string answer;
  server.Get("/v1/state", [&answer](const httplib::Request&, httplib::Response& res) {
    res.set_content(answer, "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&server] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  HttpAgentLink link(fmt::format("http://127.0.0.1:{}", port), "t", seconds(5));
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string huge = "{\"gpus\": [" + std::string(8 << 20, ' ') + "]}";
  for (const std::string& body :
       {std::string("<html>502</html>"), std::string("[]"), std::string(R"({"gpus": 5})"),
        std::string(R"({"gpus": [{"index": 1e300, "power_w": "a lot"}]})"), deep, huge}) {
    answer = body;
    auto state = link.GetState();
    EXPECT_FALSE(state) << body.substr(0, 60);
    if (!state) {
      EXPECT_NE(state.error().message().find(fmt::format("127.0.0.1:{}", port)), std::string::npos)
          << state.error().message();
    }
  }
  server.stop();
  serving.join();
}

TEST(AgentLinkTest, CapsBodyLiftsAbsentCapsAndRenewsWithoutTargets) {
  CapsCommand c{.targets = policy::ServerTargets{.sm_clock_cap = core::Megahertz(1275)},
                .lease = seconds(30),
                .request_id = "r-1"};
  EXPECT_EQ(CapsBody(c),
            R"({"sm_clock_mhz":1275.0,"power_limit_w":null,"brake":false,"lease_s":30.0,)"
            R"("request_id":"r-1"})");
  c.targets.reset();
  EXPECT_EQ(CapsBody(c), R"({"lease_s":30.0,"request_id":"r-1"})");
}

TEST(RowMeterTest, ParsesPrometheusAnswersAndMeterOutput) {
  auto sum =
      ParsePrometheusQueryResponse(R"({"status":"success","data":{"resultType":"vector","result":[)"
                                   R"({"metric":{"i":"a"},"value":[1700000000.1,"1000.5"]},)"
                                   R"({"metric":{"i":"b"},"value":[1700000000.1,"2000"]}]}})");
  ASSERT_TRUE(sum) << sum.error().message();
  EXPECT_DOUBLE_EQ(sum->value(), 3000.5);
  auto scalar = ParsePrometheusQueryResponse(
      R"({"status":"success","data":{"resultType":"scalar","result":[1,"42"]}})");
  ASSERT_TRUE(scalar);
  EXPECT_DOUBLE_EQ(scalar->value(), 42);
  EXPECT_FALSE(ParsePrometheusQueryResponse(
      R"({"status":"success","data":{"resultType":"vector","result":[]}})"));
  EXPECT_FALSE(ParsePrometheusQueryResponse(R"({"status":"error","error":"parse error"})"));
  EXPECT_FALSE(ParsePrometheusQueryResponse(
      R"({"status":"success","data":{"resultType":"scalar","result":[1,"NaN"]}})"));
  EXPECT_FALSE(ParsePrometheusQueryResponse("<html>"));
  EXPECT_DOUBLE_EQ(ParseMeterOutput(" 12345.5 W\n")->value(), 12345.5);
  EXPECT_DOUBLE_EQ(ParseMeterOutput("800\n")->value(), 800);
  EXPECT_FALSE(ParseMeterOutput("n/a"));
  EXPECT_FALSE(ParseMeterOutput("-5"));
  EXPECT_FALSE(ParseMeterOutput(""));
}

TEST(RowMeterTest, CommandMeterRunsTheCommandAndBoundsIt) {
  core::SystemClock clock;
  CommandMeter ok({"sh", "-c", "echo 4321"}, seconds(5), &clock);
  ASSERT_TRUE(ok.Read());
  EXPECT_DOUBLE_EQ(ok.Read()->value(), 4321);
  CommandMeter slow({"sh", "-c", "sleep 5; echo 1"}, milliseconds(100), &clock);
  auto r = slow.Read();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("did not answer"), std::string::npos);
  CommandMeter failing({"sh", "-c", "exit 3"}, seconds(5), &clock);
  EXPECT_FALSE(failing.Read());
  CommandMeter missing({"/nonexistent/meter"}, seconds(5), &clock);
  EXPECT_FALSE(missing.Read());
  CommandMeter runaway({"yes", "1"}, seconds(5), &clock);
  auto flood = runaway.Read();
  ASSERT_FALSE(flood);
  EXPECT_NE(flood.error().message().find("printed more than 4096 bytes"), std::string::npos);
}

}  // namespace
}  // namespace headroom::service
