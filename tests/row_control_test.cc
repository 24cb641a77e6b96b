// The whole control loop as deployed: three `headroom agent` processes (sim backend, load read
// from a file the test rewrites) and a `headroom controller`, all on 127.0.0.1. Asserts through
// the agents' HTTP state, the controller's /v1/status and its audit log: thresholds, hysteresis,
// brake, and the faults of issue 6 (killed agent, killed controller, wrong token, slow agent),
// plus a real Prometheus server as the row meter. Every wait is bounded.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon_process.h"

namespace {

using headroom::testing::DaemonProcess;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kToken = "row-s3cret";

// Per-server power of the sim DGX-A100 (8 A100 GPUs + the catalog's 3.3 kW non-GPU power):
// idle ~3.8 kW, "decode*0.5" ~4.6 kW, "decode" ~5.3 kW, "prefill" ~6.5 kW. With a 15.6 kW
// budget for three servers: all idle p~0.73; hp+lp at decode*0.5 p~0.83 (T1); hp at
// decode*0.5 and both lp at decode p~0.97 (T2); all prefill p~1.24 (brake).
constexpr double kBudget = 15600;

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

bool WaitFor(const std::function<bool()>& condition, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return condition();
}

// GET base + path (base: "http://127.0.0.1:PORT" or https, verified against ca_file).
std::optional<json> GetJson(const std::string& base, const std::string& path,
                            const std::string& ca_file = "") {
  httplib::Client client(base);
  if (!ca_file.empty()) client.set_ca_cert_path(ca_file);
  client.set_connection_timeout(1);
  client.set_read_timeout(2);
  auto res = client.Get(path.c_str());
  if (!res || res->status != 200) return std::nullopt;
  json j = json::parse(res->body, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  return j;
}

class RowControlTest : public ::testing::Test {
 protected:
  struct Agent {
    std::string name;
    std::string priority;
    int port = 0;
    std::unique_ptr<DaemonProcess> process;
  };

  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("headroom-row-{}-{}", info->name(), getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "token") << kToken << "\n";
    std::ofstream(dir_ / "wrong-token") << "not-the-token\n";
    for (const auto& [name, priority] :
         {std::pair{"a0", "hp"}, std::pair{"a1", "lp"}, std::pair{"a2", "lp"}}) {
      Agent a;
      a.name = name;
      a.priority = priority;
      a.port = FreePort();
      agents_.push_back(std::move(a));
    }
  }
  void TearDown() override {
    controller_.reset();
    agents_.clear();
    if (HasFailure()) {
      for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
        if (entry.path().extension() != ".log") continue;
        std::ifstream in(entry.path());
        std::stringstream text;
        text << in.rdbuf();
        std::cerr << "---- " << entry.path().filename() << "\n" << text.str().substr(0, 6000);
      }
    }
    std::filesystem::remove_all(dir_);
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  void SetLoad(size_t i, const std::string& load) {
    const std::string path = Path(agents_[i].name + ".load");
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp) << load << "\n";
    std::filesystem::rename(tmp, path);  // a new inode: the agent sees the change at once
  }
  void SetLoads(const std::string& a0, const std::string& a1, const std::string& a2) {
    SetLoad(0, a0);
    SetLoad(1, a1);
    SetLoad(2, a2);
  }

  void StartAgent(size_t i) {
    Agent& a = agents_[i];
    if (!std::filesystem::exists(Path(a.name + ".load"))) SetLoad(i, "idle");
    std::vector<std::string> args = {"agent",
                                     "--backend",
                                     "sim",
                                     "--sim-count",
                                     "8",
                                     "--listen",
                                     fmt::format("127.0.0.1:{}", a.port),
                                     "--token-file",
                                     Path("token"),
                                     "--state-file",
                                     Path(a.name + "-state.json"),
                                     "--priority",
                                     a.priority,
                                     "--sim-load-file",
                                     Path(a.name + ".load"),
                                     "--sample-interval",
                                     "200ms"};
    if (tls_) {
      args.insert(args.end(), {"--tls-cert", Path("cert.pem"), "--tls-key", Path("key.pem")});
    }
    a.process =
        std::make_unique<DaemonProcess>(args, Path(fmt::format("{}-{}.log", a.name, starts_++)));
    ASSERT_TRUE(a.process->WaitForPort()) << a.process->Stderr();
  }
  void StartAgents() {
    for (size_t i = 0; i < agents_.size(); ++i) StartAgent(i);
  }

  // The row file: POLCA with short delays, so that a test sees every state in seconds.
  std::string RowYaml(const std::string& telemetry = "",
                      const std::vector<std::string>& token_files = {}) {
    std::string agents;
    for (size_t i = 0; i < agents_.size(); ++i) {
      const std::string token =
          i < token_files.size() && !token_files[i].empty() ? token_files[i] : Path("token");
      agents += fmt::format(
          "  - {{name: {}, url: '{}', token_file: '{}', priority: {}, server: dgx-a100}}\n",
          agents_[i].name, AgentBase(i), token, agents_[i].priority);
    }
    return fmt::format(
        "row: {{name: it, budget_w: {}}}\n"
        "policy: {{name: polca, hp_escalation_delay_s: 2, brake_hold_s: 2, brake_settle_s: 2}}\n"
        "control: {{period: 500ms, lease_ttl: 3s, agent_timeout: 300ms, restart_hold: 1s, "
        "escalate_after: 5s}}\n"
        "{}{}agents:\n{}",
        kBudget, telemetry, tls_ ? fmt::format("tls: {{ca_file: '{}'}}\n", Path("cert.pem")) : "",
        agents);
  }
  void StartController(const std::string& yaml, const std::vector<std::string>& extra = {}) {
    std::ofstream(Path("row.yaml")) << yaml;
    std::vector<std::string> args = {"controller",  "--config",    Path("row.yaml"),   "--listen",
                                     "127.0.0.1:0", "--audit-log", Path("audit.jsonl")};
    args.insert(args.end(), extra.begin(), extra.end());
    controller_ =
        std::make_unique<DaemonProcess>(args, Path(fmt::format("controller-{}.log", starts_++)));
    auto port = controller_->WaitForPort();
    ASSERT_TRUE(port) << controller_->Stderr();
    controller_port_ = *port;
  }

  // {} when the daemon does not answer.
  json AgentState(size_t i) {
    return GetJson(AgentBase(i), "/v1/state", tls_ ? Path("cert.pem") : "")
        .value_or(json::object());
  }
  json Status() {
    return GetJson(fmt::format("http://127.0.0.1:{}", controller_port_), "/v1/status")
        .value_or(json::object());
  }
  std::string AgentBase(size_t i) const {
    return fmt::format("{}://127.0.0.1:{}", tls_ ? "https" : "http", agents_[i].port);
  }
  // Agents serve HTTPS with a fresh self-signed certificate for 127.0.0.1.
  void UseTls() {
    tls_ = true;
    const std::string cmd = fmt::format(
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
        "-addext subjectAltName=IP:127.0.0.1 -keyout {} -out {} 2>{}",
        Path("key.pem"), Path("cert.pem"), Path("openssl.log"));
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  // The SM clock cap every GPU of agent i holds, or -1 when they differ, 0 when uncapped.
  double AgentCap(size_t i) {
    const json s = AgentState(i);
    if (!s.contains("gpus")) return -2;
    double cap = -3;
    for (const json& g : s["gpus"]) {
      const json& v = g["caps"]["sm_clock_mhz"];
      const double c = v.is_null() ? 0 : v.get<double>();
      if (cap != -3 && c != cap) return -1;
      cap = c;
    }
    return cap;
  }
  bool AgentBrake(size_t i) {
    const json s = AgentState(i);
    return s.contains("brake") && s["brake"].get<bool>();
  }
  std::vector<json> Audit() {
    std::vector<json> lines;
    std::ifstream in(Path("audit.jsonl"));
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, false);  // the last line may be half written
      if (j.is_object()) lines.push_back(std::move(j));
    }
    return lines;
  }
  // The states the policy moved to, in order, from the audit log's events.
  std::vector<std::string> Transitions() {
    std::vector<std::string> out;
    for (const json& line : Audit()) {
      for (const json& e : line["events"]) out.push_back(e["to"].get<std::string>());
    }
    return out;
  }

  std::filesystem::path dir_;
  std::vector<Agent> agents_;
  std::unique_ptr<DaemonProcess> controller_;
  int controller_port_ = 0;
  int starts_ = 0;
  bool tls_ = false;
};

constexpr milliseconds kWait(15000);

TEST_F(RowControlTest, CapsAtT1ThenT2ThenBrakesAndLiftsWithHysteresis) {
  StartAgents();
  StartController(RowYaml());
  ASSERT_TRUE(WaitFor([&] { return Status().value("steps", 0) >= 2; }, kWait));
  EXPECT_EQ(Status()["state"], "normal");
  // Every agent holds a lease from the first step on, capped or not.
  ASSERT_TRUE(WaitFor([&] { return !AgentState(2)["lease"]["expires_in_s"].is_null(); }, kWait));

  SetLoads("decode*0.5", "decode*0.5", "idle");  // p ~0.83: T1 caps both LP servers
  ASSERT_TRUE(WaitFor([&] { return AgentCap(1) == 1275 && AgentCap(2) == 1275; }, kWait))
      << Status().dump(1);
  EXPECT_EQ(AgentCap(0), 0) << "HP is not capped at T1";
  EXPECT_EQ(Status()["state"], "t1");

  SetLoads("idle", "decode*0.5", "idle");  // p ~0.78: below T1, above T1 - hysteresis
  std::this_thread::sleep_for(seconds(3));
  EXPECT_EQ(Status()["state"], "t1") << "a cap lifts only below T1 - hysteresis";
  EXPECT_EQ(AgentCap(1), 1275);

  SetLoads("decode*0.5", "decode", "decode");  // p ~0.97: T2, then HP after its delay
  ASSERT_TRUE(WaitFor([&] { return AgentCap(1) == 1110 && AgentCap(2) == 1110; }, kWait));
  ASSERT_TRUE(WaitFor([&] { return AgentCap(0) == 1305; }, kWait)) << Status().dump(1);

  SetLoads("prefill", "prefill", "prefill");  // p ~1.24: the brake
  ASSERT_TRUE(WaitFor([&] { return AgentBrake(0) && AgentBrake(1) && AgentBrake(2); }, kWait))
      << Status().dump(1);

  SetLoads("idle", "idle", "idle");  // p ~0.73: everything lifts, step by step
  ASSERT_TRUE(WaitFor(
      [&] {
        return AgentCap(0) == 0 && AgentCap(1) == 0 && AgentCap(2) == 0 && !AgentBrake(0) &&
               !AgentBrake(1) && !AgentBrake(2);
      },
      milliseconds(25000)))
      << Status().dump(1);
  EXPECT_EQ(Status()["state"], "normal");

  // The audit log tells the same story, in order.
  const std::vector<std::string> moves = Transitions();
  std::vector<std::string> expected = {"t1", "t2", "t2-hp", "brake", "normal"};
  size_t next = 0;
  for (const std::string& m : moves) {
    if (next < expected.size() && m == expected[next]) ++next;
  }
  EXPECT_EQ(next, expected.size()) << json(moves).dump();
  const json last = Audit().back();
  EXPECT_EQ(last["servers"].size(), 3u);
  EXPECT_EQ(last["source"], "agents");
  EXPECT_NEAR(last["budget_w"].get<double>(), kBudget, 0.1);
  // Prometheus metrics carry the same.
  httplib::Client client("127.0.0.1", controller_port_);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("headroom_row_state{state=\"normal\"} 1"), std::string::npos);
  EXPECT_NE(metrics->body.find("headroom_row_brake_events_total "), std::string::npos);
  // ... in a format Prometheus's own linter accepts.
  std::ofstream(Path("metrics.txt")) << metrics->body;
  EXPECT_EQ(std::system(("promtool check metrics < " + Path("metrics.txt")).c_str()), 0);
  EXPECT_TRUE(last.contains("time")) << "the daemon stamps each line with wall-clock time";
}

TEST_F(RowControlTest, KilledAgentCountsAtRatedMaxAndIsRecappedAfterItsRestart) {
  SetLoads("idle", "decode*0.5", "decode*0.5");  // p ~0.83 (T1)
  StartAgents();
  StartController(RowYaml());
  ASSERT_TRUE(WaitFor([&] { return AgentCap(2) == 1275; }, kWait)) << Status().dump(1);

  agents_[2].process->Signal(SIGKILL);
  ASSERT_TRUE(agents_[2].process->Wait());
  ASSERT_TRUE(WaitFor([&] { return !Status()["servers"][2]["reachable"].get<bool>(); }, kWait));
  const json status = Status();
  EXPECT_EQ(status["servers"][2]["counted_as"], "rated-max");
  EXPECT_DOUBLE_EQ(status["servers"][2]["counted_w"].get<double>(), 6500);
  const int steps = status["steps"].get<int>();
  ASSERT_TRUE(WaitFor([&] { return Status().value("steps", 0) > steps + 2; }, kWait))
      << "the controller keeps stepping without the agent";

  // Restarted after the crash: it restores the originals from its state file, then the
  // controller sees it holds nothing and caps it again.
  StartAgent(2);
  EXPECT_NE(agents_[2].process->Stderr().find("did not exit cleanly"), std::string::npos)
      << agents_[2].process->Stderr();
  ASSERT_TRUE(WaitFor([&] { return AgentCap(2) > 0; }, kWait)) << Status().dump(1);
  EXPECT_TRUE(Status()["servers"][2]["reachable"].get<bool>());
}

TEST_F(RowControlTest, KilledControllerLeavesAgentsToTheirFailsafeAndARestartResyncs) {
  StartAgents();
  StartController(RowYaml());
  ASSERT_TRUE(WaitFor([&] { return !AgentState(0)["lease"]["expires_in_s"].is_null(); }, kWait));
  controller_->Signal(SIGKILL);
  ASSERT_TRUE(controller_->Wait());
  // lease_ttl is 3 s: every agent applies its failsafe by then (plus polling slack).
  ASSERT_TRUE(WaitFor(
      [&] {
        for (size_t i = 0; i < agents_.size(); ++i) {
          if (!AgentState(i).value("failsafe_active", false)) return false;
        }
        return true;
      },
      milliseconds(6000)));
  const json state = AgentState(0);
  EXPECT_TRUE(state["lease"]["expired"].get<bool>());
  EXPECT_EQ(state["gpus"][0]["caps"]["effective_sm_clock_lock"]["max_mhz"], 1110.0)
      << "the failsafe is the LP T2 cap, never uncapped";

  // A new controller reads the agents' state, renews their leases (lifting the failsafe) and,
  // the row being idle, leaves them uncapped.
  StartController(RowYaml());
  ASSERT_TRUE(WaitFor(
      [&] {
        for (size_t i = 0; i < agents_.size(); ++i) {
          if (AgentState(i).value("failsafe_active", true)) return false;
        }
        return true;
      },
      kWait));
  EXPECT_EQ(AgentCap(0), 0);
  EXPECT_NE(controller_->Stderr().find("synced"), std::string::npos);
}

// An agent stopped (SIGSTOP: a hung process, a frozen cgroup) keeps its port but answers
// nothing: while it is stopped the controller counts its server at the rated maximum, which here
// moves the row to T2 and tightens the other LP server. Resumed after its lease ran out, it is
// reachable again, its failsafe (if it fired) is lifted by the controller's renewal, and the row
// is back at T1.
TEST_F(RowControlTest, StoppedAgentCountsAtRatedMaxAndRejoinsWhenResumed) {
  SetLoads("idle", "decode*0.5", "decode*0.5");  // p ~0.83 (T1)
  StartAgents();
  StartController(RowYaml());
  ASSERT_TRUE(WaitFor([&] { return AgentCap(1) == 1275 && AgentCap(2) == 1275; }, kWait))
      << Status().dump(1);
  agents_[2].process->Signal(SIGSTOP);
  auto reachable = [&](size_t i) {
    const json s = Status();
    return s.contains("servers") && s["servers"][i]["reachable"].get<bool>();
  };
  ASSERT_TRUE(WaitFor([&] { return !reachable(2); }, kWait)) << Status().dump(1);
  EXPECT_EQ(Status()["servers"][2]["counted_as"], "rated-max");
  // (3.8 + 4.6 + 6.5 kW) / 15.6 kW ~ 0.95: T2 for the LP server still reachable.
  ASSERT_TRUE(WaitFor([&] { return AgentCap(1) == 1110; }, kWait)) << Status().dump(1);
  std::this_thread::sleep_for(seconds(3));  // the stopped agent's 3 s lease runs out
  agents_[2].process->Signal(SIGCONT);
  ASSERT_TRUE(WaitFor([&] { return reachable(2); }, kWait)) << Status().dump(1);
  ASSERT_TRUE(WaitFor(
      [&] {
        return AgentCap(1) == 1275 && AgentCap(2) == 1275 &&
               !AgentState(2).value("failsafe_active", true);
      },
      kWait))
      << Status().dump(1);
  EXPECT_EQ(Status()["state"], "t1");
}

// The row meter (a command here) printing garbage: the reading is refused, the last good one is
// kept and ages into stale telemetry, under which nothing lifts; a good reading again and the
// policy follows it.
TEST_F(RowControlTest, MeterPrintingGarbageIsStaleTelemetryUnderWhichNothingLifts) {
  const std::string meter = Path("meter.txt");
  std::ofstream(meter) << "15000\n";  // p ~0.96: T2
  StartAgents();
  std::string yaml = RowYaml(
      fmt::format("telemetry: {{source: command, command: [cat, '{}'], timeout: 300ms}}\n", meter));
  yaml.replace(yaml.find("brake_settle_s: 2}"), 18, "brake_settle_s: 2, stale_after_s: 2}");
  StartController(yaml);
  ASSERT_TRUE(WaitFor([&] { return AgentCap(1) == 1110 && AgentCap(2) == 1110; }, kWait))
      << Status().dump(1);
  std::ofstream(meter) << "<html>502 Bad Gateway</html>\n";
  ASSERT_TRUE(WaitFor([&] { return Status().value("telemetry_age_s", 0.0) > 3; }, kWait))
      << Status().dump(1);
  EXPECT_NE(Status()["source"].get<std::string>().find("last good reading"), std::string::npos);
  EXPECT_EQ(AgentCap(1), 1110) << "stale telemetry lifts nothing";
  EXPECT_EQ(AgentCap(2), 1110);
  std::ofstream(meter) << "9000\n";  // p ~0.58
  ASSERT_TRUE(WaitFor([&] { return AgentCap(1) == 0 && AgentCap(2) == 0; }, milliseconds(25000)))
      << Status().dump(1);
}

TEST_F(RowControlTest, WrongTokenIsRefusedAndChangesNothing) {
  SetLoads("decode*0.5", "decode*0.5", "idle");  // T1: both LP servers should be capped
  StartAgents();
  StartController(RowYaml("", {"", "", Path("wrong-token")}));
  ASSERT_TRUE(WaitFor([&] { return AgentCap(1) == 1275; }, kWait)) << Status().dump(1);
  ASSERT_TRUE(WaitFor(
      [&] { return Status()["servers"][2].value("error", "").find("401") != std::string::npos; },
      kWait))
      << Status().dump(1);
  EXPECT_EQ(AgentCap(2), 0);
  EXPECT_TRUE(AgentState(2)["lease"]["expires_in_s"].is_null());
  httplib::Client client("127.0.0.1", agents_[2].port);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->body.find("headroom_agent_commands_total{result=\"rejected\"} 0"),
            std::string::npos);
}

TEST_F(RowControlTest, AgentsServingHttpsAreCappedOverVerifiedTls) {
  UseTls();
  SetLoads("decode*0.5", "decode*0.5", "idle");  // T1
  StartAgents();
  StartController(RowYaml());
  ASSERT_TRUE(WaitFor([&] { return AgentCap(1) == 1275 && AgentCap(2) == 1275; }, kWait))
      << Status().dump(1);
  EXPECT_EQ(AgentCap(0), 0);
  EXPECT_EQ(Status()["servers"][1]["url"], AgentBase(1));
  // Plain HTTP gets no answer, and HTTPS without trusting the certificate fails verification.
  EXPECT_FALSE(GetJson(fmt::format("http://127.0.0.1:{}", agents_[1].port), "/v1/state"));
  httplib::Client untrusted(AgentBase(1));
  untrusted.set_ca_cert_path(Path("token"));  // not a CA
  EXPECT_FALSE(untrusted.Get("/healthz"));

  // A client that starts a TLS handshake and stalls is cut at the request deadline (5 s), while
  // verified HTTPS is answered all along.
  const int stalled = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(agents_[1].port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(stalled, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(send(stalled, "\x16\x03\x01", 3, MSG_NOSIGNAL), 3);  // a record header, no more
  const auto start = std::chrono::steady_clock::now();
  bool cut = false;
  while (!cut && std::chrono::steady_clock::now() - start < seconds(8)) {
    EXPECT_FALSE(AgentState(1).empty()) << "HTTPS starved by a stalled handshake";
    pollfd p{stalled, POLLIN, 0};
    char byte = 0;
    cut = poll(&p, 1, 500) > 0 && recv(stalled, &byte, 1, 0) <= 0;
  }
  close(stalled);
  EXPECT_TRUE(cut) << "the stalled handshake was never cut";
  EXPECT_GT(std::chrono::steady_clock::now() - start, seconds(4)) << "cut before the deadline";
}

TEST_F(RowControlTest, SlowAgentDoesNotStallTheOthers) {
  // Agent a2 is a stand-in that holds every request open until the test ends.
  std::atomic<bool> done{false};
  auto hang = [&done](const httplib::Request&, httplib::Response& res) {
    for (int i = 0; i < 300 && !done.load(); ++i) std::this_thread::sleep_for(milliseconds(50));
    res.status = 503;
  };
  httplib::Server slow;
  slow.Get("/v1/state", hang);
  slow.Put("/v1/caps", hang);
  agents_[2].port = slow.bind_to_any_port("127.0.0.1");
  std::thread serving([&slow] { slow.listen_after_bind(); });
  SetLoad(0, "decode*0.5");
  SetLoad(1, "decode*0.5");
  StartAgent(0);
  StartAgent(1);
  // The slow server counts at 6.5 kW: p ~1.0 > T2; its LP neighbour gets the T2 cap.
  StartController(RowYaml());
  ASSERT_TRUE(WaitFor([&] { return AgentCap(1) > 0; }, kWait)) << Status().dump(1);
  const json status = Status();
  EXPECT_FALSE(status["servers"][2]["reachable"].get<bool>());
  // Either this step gave up waiting, or the request itself timed out (httplib: "Read").
  const std::string error = status["servers"][2].value("error", "");
  EXPECT_TRUE(error.find("no answer within") != std::string::npos ||
              error.find("Read") != std::string::npos)
      << error;
  const int steps = status["steps"].get<int>();
  ASSERT_TRUE(WaitFor([&] { return Status().value("steps", 0) >= steps + 3; }, kWait))
      << "steps go on while the slow agent keeps a request open";
  done.store(true);
  controller_.reset();
  slow.stop();
  serving.join();
}

TEST_F(RowControlTest, RowPowerFromARealPrometheusScrapingTheAgents) {
  StartAgents();
  const int prometheus_port = FreePort();
  std::string targets;
  for (const Agent& a : agents_) {
    targets += fmt::format("{}'127.0.0.1:{}'", targets.empty() ? "" : ", ", a.port);
  }
  std::ofstream(Path("prometheus.yml"))
      << "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
      << "scrape_configs:\n  - job_name: headroom-agent\n    static_configs:\n"
      << "      - targets: [" << targets << "]\n";
  DaemonProcess prometheus(
      {"--config.file=" + Path("prometheus.yml"), "--storage.tsdb.path=" + Path("tsdb"),
       fmt::format("--web.listen-address=127.0.0.1:{}", prometheus_port)},
      Path("prometheus.log"), {}, "/usr/bin/prometheus");
  ASSERT_TRUE(WaitFor(
      [&] {
        httplib::Client c("127.0.0.1", prometheus_port);
        auto r = c.Get("/-/ready");
        return r && r->status == 200;
      },
      milliseconds(30000)))
      << prometheus.Stderr();
  // The agents report GPU power; the query adds the servers' non-GPU power (3 x 3.3 kW).
  StartController(RowYaml(fmt::format(
      "telemetry: {{source: prometheus, url: 'http://127.0.0.1:{}', "
      "query: 'sum(headroom_agent_server_power_watts{{job=\"headroom-agent\"}}) + 9900', "
      "timeout: 400ms}}\n",
      prometheus_port)));
  // Once Prometheus has scraped all three agents, its sum matches theirs.
  auto agrees = [&] {
    const std::vector<json> audit = Audit();
    if (audit.empty() || audit.back()["source"] != "prometheus") return false;
    const double meter = audit.back()["row_power_w"].get<double>();
    const double agents = audit.back()["agents_sum_w"].get<double>();
    return std::abs(meter - agents) < 0.03 * agents;
  };
  ASSERT_TRUE(WaitFor(agrees, milliseconds(20000))) << Audit().back().dump();
  EXPECT_EQ(Status()["source"], "prometheus");

  SetLoads("decode*0.5", "decode*0.5", "idle");  // T1, seen through Prometheus
  ASSERT_TRUE(WaitFor([&] { return AgentCap(1) == 1275; }, milliseconds(20000)))
      << Status().dump(1);
  EXPECT_EQ(Status()["source"], "prometheus");
  controller_.reset();
  prometheus.Signal(SIGTERM);
  prometheus.Wait(milliseconds(10000));
}

// The grid asks for less through PUT /v1/budget (the grid's own token, every refusal with its
// reason); the controller caps to meet it, the brake waiting for its time to comply, and goes
// back to the provisioned budget when the signal is deleted.
TEST_F(RowControlTest, AGridSignalLowersTheBudgetAndCapsMeetItWithinItsTime) {
  std::ofstream(Path("grid-token")) << "grid-s3cret\n";
  SetLoads("idle", "decode*0.5", "idle");  // p ~0.78: nothing capped
  StartAgents();
  StartController(RowYaml() + fmt::format("grid: {{token_file: '{}', min_interval: 1s}}\n",
                                          Path("grid-token")));
  ASSERT_TRUE(WaitFor([&] { return Status().value("steps", 0) >= 2; }, kWait));
  EXPECT_EQ(Status()["state"], "normal");
  httplib::Client client("127.0.0.1", controller_port_);
  const auto put = [&](const std::string& token, const json& body) {
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return client.Put("/v1/budget", headers, body.dump(), "application/json");
  };
  const json lower = {{"budget_w", kBudget * 0.85},
                      {"duration", "1h"},
                      {"comply_within", "30s"},
                      {"reason", "utility DR event 7"}};
  auto res = put("", lower);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = put(kToken, lower);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401) << "an agent's token does not lower the row";
  json above = lower;
  above["budget_w"] = kBudget * 1.1;
  res = put("grid-s3cret", above);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 422);
  EXPECT_NE(res->body.find("above the row's provisioned"), std::string::npos) << res->body;
  res = put("grid-s3cret", {{"budget_w", "lots"}, {"duration", "1h"}, {"reason", "r"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_DOUBLE_EQ(GetJson(fmt::format("http://127.0.0.1:{}", controller_port_), "/v1/budget")
                       .value_or(json::object())
                       .value("budget_w", 0.0),
                   kBudget)
      << "nothing refused was applied";

  res = put("grid-s3cret", lower);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  // p ~0.92 of the lowered budget: POLCA caps the LP servers; ~0.78 of the provisioned one, which
  // the brake guards while the caps have their 30 s.
  ASSERT_TRUE(WaitFor([&] { return AgentCap(1) == 1110 && AgentCap(2) == 1110; }, kWait))
      << Status().dump(1);
  const json status = Status();
  EXPECT_NEAR(status["budget_w"].get<double>(), kBudget * 0.85, 0.1);
  EXPECT_EQ(status["budget"]["source"], "signal");
  EXPECT_EQ(status["budget"]["reason"], "utility DR event 7");
  EXPECT_FALSE(AgentBrake(0) || AgentBrake(1) || AgentBrake(2));
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("headroom_row_budget_lowered{source=\"signal\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("headroom_row_budget_requests_total{result=\"refused\"} 2"),
            std::string::npos)
      << metrics->body;
  std::ofstream(Path("metrics.txt")) << metrics->body;
  EXPECT_EQ(std::system(("promtool check metrics < " + Path("metrics.txt")).c_str()), 0);

  // Deleted: the provisioned budget again, and with the load down the caps lift.
  SetLoads("idle", "idle", "idle");  // p ~0.73 of the provisioned budget
  res = client.Delete("/v1/budget", {{"Authorization", "Bearer grid-s3cret"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  ASSERT_TRUE(WaitFor([&] { return AgentCap(1) == 0 && AgentCap(2) == 0; }, milliseconds(25000)))
      << Status().dump(1);
  EXPECT_EQ(Status()["budget"]["source"], "provisioned");
  // The audit log holds every request that passed the token check, refused or not.
  int accepted = 0, refused = 0;
  for (const json& line : Audit()) {
    if (!line.contains("budget_requests")) continue;
    for (const json& r : line["budget_requests"])
      (r["accepted"].get<bool>() ? accepted : refused)++;
  }
  EXPECT_EQ(accepted, 2);
  EXPECT_EQ(refused, 2);
}

TEST_F(RowControlTest, WithoutAGridTokenTheBudgetCannotBeChanged) {
  StartAgents();
  StartController(RowYaml());
  httplib::Client client("127.0.0.1", controller_port_);
  auto res =
      client.Put("/v1/budget", {{"Authorization", "Bearer " + std::string(kToken)}},
                 R"({"budget_w": 1000, "duration": "1h", "reason": "r"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_NE(res->body.find("grid.token_file"), std::string::npos) << res->body;
}

}  // namespace
