// Runs `headroom agent` as a daemon on a free local port and drives its HTTP API as the row
// controller would: health, auth, validation, caps, lease failsafe, signals and crash recovery.
// Each case is bounded to about 10 s.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_process.h"

namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr const char* kToken = "s3cret-token";

using AgentProcess = headroom::testing::DaemonProcess;

struct StreamUnderWay;

class AgentDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("headroom-agent-it-{}-{}", info->name(), getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // Only this user may write the state file's directory, whatever the umask (issue 44).
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all);
    token_file_ = (dir_ / "token").string();
    state_file_ = (dir_ / "state.json").string();
    std::ofstream(token_file_) << kToken << "\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<std::string> Args(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {
        "agent",     "--backend",         "sim",          "--sim-count", "8",
        "--listen",  "127.0.0.1:0",       "--token-file", token_file_,   "--state-file",
        state_file_, "--sample-interval", "200ms"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  std::unique_ptr<AgentProcess> Start(const std::vector<std::string>& args,
                                      const std::vector<std::string>& env = {}) {
    auto agent = std::make_unique<AgentProcess>(
        args, (dir_ / fmt::format("stderr-{}.log", starts_++)).string(), env);
    auto port = agent->WaitForPort();
    EXPECT_TRUE(port) << agent->Stderr();
    if (port) {
      port_ = *port;
      client_ = std::make_unique<httplib::Client>("127.0.0.1", *port);
      client_->set_connection_timeout(2);
      client_->set_read_timeout(5);
    }
    return agent;
  }
  // An agent with its engine proxy in front of `engine_url` (and `extra` flags), and `stream`
  // sent through the proxy, its first event come; sets proxy_port_. Null where it could not.
  std::unique_ptr<AgentProcess> StartStreaming(const std::string& engine_url,
                                               const std::vector<std::string>& extra,
                                               StreamUnderWay& stream);
  httplib::Headers Auth(const std::string& token = kToken) {
    return {{"Authorization", "Bearer " + token}};
  }
  httplib::Result Put(const std::string& body, const std::string& token = kToken) {
    return client_->Put("/v1/caps", Auth(token), body, "application/json");
  }
  json State() {
    auto res = client_->Get("/v1/state");
    EXPECT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    return json::parse(res->body);
  }
  // Only the failsafe cap, held from the start until a controller's first PUT.
  static bool InFailsafeOnly(const json& state) {
    if (!state.value("failsafe_active", false)) return false;
    for (const auto& g : state["gpus"]) {
      if (!g["caps"]["sm_clock_mhz"].is_null() || !g["sm_clock_lock"].is_object() ||
          g["sm_clock_lock"]["max_mhz"] != 1110.0) {
        return false;
      }
    }
    return true;
  }
  static bool Uncapped(const json& state) {
    for (const auto& g : state["gpus"]) {
      if (!g["caps"]["sm_clock_mhz"].is_null() || !g["sm_clock_lock"].is_null()) return false;
    }
    return true;
  }

  std::filesystem::path dir_;
  std::string token_file_;
  std::string state_file_;
  std::unique_ptr<httplib::Client> client_;
  int port_ = 0;        // of the agent Start() started last
  int proxy_port_ = 0;  // of its engine proxy, set by StartStreaming()
  int starts_ = 0;
};

TEST_F(AgentDaemonTest, ServesValidatesAppliesAndRestoresOnSigterm) {
  auto agent = Start(Args());
  ASSERT_TRUE(client_);
  auto health = client_->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(json::parse(health->body)["status"], "ok");

  const std::string valid =
      R"({"gpus": [0, 1], "sm_clock_mhz": 1275, "power_limit_w": 300, "lease_s": 30,
          "request_id": "it-1"})";
  auto wrong = Put(valid, "not-the-token");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  EXPECT_TRUE(json::parse(wrong->body).contains("error"));
  auto none = client_->Put("/v1/caps", valid, "application/json");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_TRUE(InFailsafeOnly(State())) << State().dump(2);

  auto malformed = Put("{\"lease_s\": ");
  ASSERT_TRUE(malformed);
  EXPECT_EQ(malformed->status, 400);
  EXPECT_TRUE(json::parse(malformed->body).contains("error"));
  auto out_of_range = Put(R"({"sm_clock_mhz": 9999, "lease_s": 30, "request_id": "it-0"})");
  ASSERT_TRUE(out_of_range);
  EXPECT_EQ(out_of_range->status, 422);
  EXPECT_TRUE(InFailsafeOnly(State()));
  EXPECT_TRUE(std::filesystem::exists(state_file_)) << "saved at start";

  auto ok = Put(valid);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  EXPECT_TRUE(std::filesystem::exists(state_file_));
  json state = State();
  EXPECT_EQ(state["gpus"][0]["caps"]["sm_clock_mhz"], 1275.0);
  EXPECT_EQ(state["gpus"][1]["caps"]["power_limit_w"], 300.0);
  EXPECT_EQ(state["gpus"][0]["sm_clock_lock"]["max_mhz"], 1275.0);
  EXPECT_EQ(state["gpus"][1]["power_limit_w"], 300.0);
  EXPECT_TRUE(state["gpus"][2]["caps"]["sm_clock_mhz"].is_null());
  EXPECT_EQ(state["last_command"]["request_id"], "it-1");
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("headroom_agent_sm_clock_cap_hertz{gpu=\"0\"} 1275000000"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("headroom_gpu_power_watts{"), std::string::npos);
  EXPECT_NE(metrics->body.find("headroom_agent_commands_total{result=\"rejected\"} 4"),
            std::string::npos);

  auto repeat = Put(valid);
  ASSERT_TRUE(repeat);
  EXPECT_EQ(repeat->status, 200);
  EXPECT_EQ(json::parse(repeat->body), json::parse(ok->body));
  auto conflict = Put(R"({"sm_clock_mhz": 1110, "lease_s": 30, "request_id": "it-1"})");
  ASSERT_TRUE(conflict);
  EXPECT_EQ(conflict->status, 409);

  auto unauth_delete = client_->Delete("/v1/caps");
  ASSERT_TRUE(unauth_delete);
  EXPECT_EQ(unauth_delete->status, 401);
  EXPECT_FALSE(Uncapped(State()));
  auto lifted = client_->Delete("/v1/caps", Auth());
  ASSERT_TRUE(lifted);
  EXPECT_EQ(lifted->status, 200) << lifted->body;
  state = State();
  EXPECT_TRUE(Uncapped(state)) << state.dump(2);
  EXPECT_EQ(state["gpus"][1]["power_limit_w"], 400.0);
  EXPECT_TRUE(std::filesystem::exists(state_file_)) << "kept until a clean stop";

  ASSERT_EQ(
      Put(R"({"gpus": [3], "sm_clock_mhz": 1110, "lease_s": 30, "request_id": "it-2"})")->status,
      200);
  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 0) << agent->Stderr();
  EXPECT_NE(agent->Stderr().find("restored original GPU 3"), std::string::npos) << agent->Stderr();
  EXPECT_FALSE(std::filesystem::exists(state_file_));
}

// A raw TCP connection to the agent, for clients that no well-behaved library would be.
class RawConnection {
 public:
  // From `source`, another loopback address when a test stands for a second client host; with
  // `receive_buffer` bytes of socket buffer (0: the system's), a client slow to take answers.
  explicit RawConnection(int port, const char* source = "127.0.0.1", int receive_buffer = 0)
      : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    if (receive_buffer > 0) {
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    sockaddr_in from{};
    from.sin_family = AF_INET;
    inet_pton(AF_INET, source, &from.sin_addr);
    bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawConnection() { close(fd_); }
  bool connected() const { return connected_; }
  bool Send(const std::string& bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // What the agent answers within `timeout` (empty if nothing), up to the end of the first
  // answer's head, or with `all`, until the agent closes or falls silent.
  std::string Receive(milliseconds timeout, bool all = false) {
    pollfd p{fd_, POLLIN, 0};
    std::string out;
    char buf[4096];
    while (poll(&p, 1, static_cast<int>(timeout.count())) > 0) {
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
      if (!all && out.find("\r\n\r\n") != std::string::npos) break;
    }
    return out;
  }

 private:
  int fd_;
  bool connected_ = false;
};

// Clients that hold connections open, trickle bytes or announce huge bodies must not take the
// agent away from its controller: /healthz and an authorized PUT are still answered, an
// unauthenticated body is refused before it is read, and an oversized one with 413.
TEST_F(AgentDaemonTest, HostileClientsDoNotStarveTheAgent) {
  auto agent = Start(Args());
  ASSERT_TRUE(client_);
  const int port = port_;
  std::vector<std::unique_ptr<RawConnection>> idle, slow;
  for (int i = 0; i < 16; ++i) idle.push_back(std::make_unique<RawConnection>(port));
  for (int i = 0; i < 8; ++i) {
    slow.push_back(std::make_unique<RawConnection>(port));
    ASSERT_TRUE(slow.back()->Send("G"));
  }
  std::thread trickle([&slow] {
    for (const char c : std::string("ET /healthz")) {
      std::this_thread::sleep_for(milliseconds(400));
      for (auto& conn : slow) conn->Send(std::string(1, c));
    }
  });
  std::this_thread::sleep_for(milliseconds(300));
  httplib::Client probe("127.0.0.1", port);
  probe.set_connection_timeout(2);
  probe.set_read_timeout(2);
  auto health = probe.Get("/healthz");
  EXPECT_TRUE(health && health->status == 200) << "healthz starved by 24 hostile connections";
  auto put = probe.Put("/v1/caps", Auth(),
                       R"({"sm_clock_mhz": 1275, "lease_s": 30, "request_id": "hostile-1"})",
                       "application/json");
  EXPECT_TRUE(put && put->status == 200) << "an authorized PUT starved";
  trickle.join();

  // 150 MB announced without a token: 401 at once, the body never read.
  RawConnection huge(port);
  ASSERT_TRUE(huge.Send("PUT /v1/caps HTTP/1.1\r\nHost: x\r\nContent-Length: 150000000\r\n\r\n"));
  const std::string refused = huge.Receive(milliseconds(2000));
  EXPECT_NE(refused.find("HTTP/1.1 401"), std::string::npos) << refused;
  // With the token, a body over the limit: 413, and the caps stay as they were.
  auto oversized = Put(std::string(200 * 1024, ' ') + "{}");
  ASSERT_TRUE(oversized);
  EXPECT_EQ(oversized->status, 413);
  EXPECT_EQ(State()["gpus"][0]["caps"]["sm_clock_mhz"], 1275.0);
  auto after = client_->Get("/healthz");
  EXPECT_TRUE(after && after->status == 200);
}

// The value of the sample `series` (name and labels) in a Prometheus text, or -1.
double MetricValue(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
}

// The agent's resident memory in KiB, from /proc.
long ResidentKib(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// AddressSanitizer keeps freed memory out of reuse in a quarantine (256 MB by default), so under
// it a process's resident size grows with everything it ever freed, not with what it holds. A
// 1 MB quarantine lets freed buffers be reused, as they are without the sanitizer, so the flood
// test measures the agent and not the sanitizer. The variable means nothing to other builds.
std::string SmallSanitizerQuarantine() {
  const char* given = std::getenv("ASAN_OPTIONS");
  const std::string before = given && *given ? std::string(given) + ":" : "";
  return "ASAN_OPTIONS=" + before + "quarantine_size_mb=1";
}

// A request is timed from its first byte: clients that trickle a head or a body in, each byte
// well inside the read timeout, get 408 at the deadline (5 s) and never hold a worker meanwhile;
// /healthz and an authorized PUT are answered at once all along.
TEST_F(AgentDaemonTest, TricklingClientsGet408AndHoldNoWorker) {
  auto agent = Start(Args());
  ASSERT_TRUE(client_);
  constexpr int kTricklers = 48;  // more than the 8 workers, within one address's 64 connections
  std::vector<std::unique_ptr<RawConnection>> heads;
  for (int i = 0; i < kTricklers; ++i) heads.push_back(std::make_unique<RawConnection>(port_));
  RawConnection body(port_);
  ASSERT_TRUE(
      body.Send(fmt::format("PUT /v1/caps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                            "{}\r\nContent-Length: 1000\r\n\r\n{{",
                            kToken)));
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    const std::string head = "GET /healthz HTTP/1.1\r\nX-Slow: " + std::string(200, 'a');
    for (size_t i = 0; i < head.size() && !done; ++i) {
      for (auto& conn : heads) conn->Send(std::string(1, head[i]));
      body.Send(" ");
      std::this_thread::sleep_for(milliseconds(300));
    }
  });
  httplib::Client probe("127.0.0.1", port_);
  probe.set_connection_timeout(1);
  probe.set_read_timeout(1);
  const auto start = std::chrono::steady_clock::now();
  int probes = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(4500)) {
    auto health = probe.Get("/healthz");
    EXPECT_TRUE(health && health->status == 200) << "probe " << probes << " starved";
    auto put = probe.Put("/v1/caps", Auth(),
                         fmt::format(R"({{"sm_clock_mhz": 1275, "lease_s": 30, "request_id": )"
                                     R"("trickle-{}"}})",
                                     probes),
                         "application/json");
    EXPECT_TRUE(put && put->status == 200) << "PUT " << probes << " starved";
    ++probes;
    std::this_thread::sleep_for(milliseconds(400));
  }
  EXPECT_GE(probes, 8);
  for (auto& conn : heads) {
    const std::string answer = conn->Receive(milliseconds(3000));
    EXPECT_NE(answer.find("HTTP/1.1 408"), std::string::npos) << answer;
  }
  const std::string body_answer = body.Receive(milliseconds(3000));
  EXPECT_NE(body_answer.find("HTTP/1.1 408"), std::string::npos) << body_answer;
  done = true;
  trickle.join();
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find(fmt::format("headroom_http_refused_total{{reason=\"timeout\"}} {}",
                                           kTricklers + 1)),
            std::string::npos)
      << metrics->body;
}

// A kept-alive connection serves request after request, pipelined ones included.
TEST_F(AgentDaemonTest, PipelinedRequestsOnOneConnectionAreAllAnswered) {
  auto agent = Start(Args());
  ASSERT_TRUE(client_);
  RawConnection conn(port_);
  const std::string get = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_TRUE(
      conn.Send(get + get + "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string answers = conn.Receive(milliseconds(3000), /*all=*/true);
  size_t count = 0;
  for (size_t at = answers.find("HTTP/1.1 200"); at != std::string::npos;
       at = answers.find("HTTP/1.1 200", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 3u) << answers;
}

// Connections are bounded per client address (64): the 65th from one host gets 503 while the
// others are still answered; a head over 16 KiB gets 431; a GET with a body is refused before
// the body is read; and a bounded flood of all of these leaves the agent's memory where it was.
TEST_F(AgentDaemonTest, ConnectionLimitsOversizedHeadsAndAFloodLeaveMemoryFlat) {
  auto agent = Start(Args(), {SmallSanitizerQuarantine()});
  ASSERT_TRUE(client_);
  ASSERT_TRUE(client_->Get("/healthz"));
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 64; ++i) held.push_back(std::make_unique<RawConnection>(port_, "127.0.0.2"));
  std::this_thread::sleep_for(milliseconds(200));
  RawConnection extra(port_, "127.0.0.2");
  const std::string refused = extra.Receive(milliseconds(1000));
  EXPECT_NE(refused.find("HTTP/1.1 503"), std::string::npos) << refused;
  EXPECT_NE(refused.find("too many connections from 127.0.0.2"), std::string::npos) << refused;
  auto health = client_->Get("/healthz");
  EXPECT_TRUE(health && health->status == 200) << "another address is still served";
  held.clear();

  auto answer = [&](const std::string& request) {
    RawConnection conn(port_);
    EXPECT_TRUE(conn.Send(request));
    return conn.Receive(milliseconds(2000));
  };
  const std::string big_head =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20 * 1024, 'a') + "\r\n\r\n";
  EXPECT_NE(answer(big_head).find("HTTP/1.1 431"), std::string::npos);
  const std::string get_with_body =
      "GET /v1/state HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n";
  EXPECT_NE(answer(get_with_body).find("HTTP/1.1 400"), std::string::npos);

  const long before = ResidentKib(agent->pid());
  const std::string no_token =
      "PUT /v1/caps HTTP/1.1\r\nHost: x\r\nContent-Length: 150000000\r\n\r\n" +
      std::string(64 * 1024, 'x');
  for (int round = 0; round < 300; ++round) {
    for (const std::string* request : {&big_head, &get_with_body, &no_token}) {
      RawConnection conn(port_);
      conn.Send(*request);
    }
  }
  std::this_thread::sleep_for(milliseconds(500));
  const long after = ResidentKib(agent->pid());
  ASSERT_GT(before, 0);
  EXPECT_LT(after - before, 16 * 1024) << "RSS " << before << " KiB -> " << after << " KiB";
  std::cerr << "agent RSS before the flood " << before << " KiB, after " << after << " KiB\n";
  health = client_->Get("/healthz");
  EXPECT_TRUE(health && health->status == 200);
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  // The flood may also have met the per-address limit: the counts are at least the above.
  EXPECT_GE(MetricValue(metrics->body, "headroom_http_refused_total{reason=\"connection_limit\"}"),
            1)
      << metrics->body;
  EXPECT_GE(MetricValue(metrics->body, "headroom_http_refused_total{reason=\"head_too_large\"}"), 1)
      << metrics->body;
}

// Finding 3a of issue 44: 64 connections from one address pipeline GET /metrics and never read
// the answers (a small receive buffer). A worker waits at most write_timeout in all for one
// answer, such a client gets no further turn, and one address holds at most 4 of the 8 workers:
// /healthz (answered without a worker), the state poll and an authorized PUT from another
// address are all answered within a second throughout.
TEST_F(AgentDaemonTest, PipelinedAnswersNobodyReadsStarveNoWorker) {
  auto agent = Start(Args());
  ASSERT_TRUE(client_);
  std::string pipeline;
  for (int i = 0; i < 50; ++i) pipeline += "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  std::vector<std::unique_ptr<RawConnection>> readers_never;
  for (int i = 0; i < 64; ++i) {
    readers_never.push_back(std::make_unique<RawConnection>(port_, "127.0.0.3", 1024));
    readers_never.back()->Send(pipeline);
  }
  httplib::Client probe("127.0.0.1", port_);
  probe.set_connection_timeout(1);
  probe.set_read_timeout(1);
  for (int i = 0; i < 10; ++i) {
    auto health = probe.Get("/healthz");
    EXPECT_TRUE(health && health->status == 200) << "healthz " << i << " starved";
    auto state = probe.Get("/v1/state");
    EXPECT_TRUE(state && state->status == 200) << "state poll " << i << " starved";
    auto put = probe.Put("/v1/caps", Auth(),
                         fmt::format(R"({{"lease_s": 30, "request_id": "unread-{}"}})", i),
                         "application/json");
    EXPECT_TRUE(put && put->status == 200) << "PUT " << i << " starved";
    std::this_thread::sleep_for(milliseconds(200));
  }
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_GE(MetricValue(metrics->body, "headroom_http_health_answers_total"), 10) << metrics->body;
}

// Finding 6 of issue 44: eight addresses holding 64 connections each fill the agent's 512
// slots with heads trickling in; a new connection from another address (the controller's) is
// still served, taking the place of the largest holder's oldest waiting connection when none is
// free.
TEST_F(AgentDaemonTest, ConnectionsFromManyAddressesDoNotLockOutAnother) {
  auto agent = Start(Args());
  ASSERT_TRUE(client_);
  std::vector<std::unique_ptr<RawConnection>> filling;
  for (int host = 0; host < 8; ++host) {
    const std::string source = fmt::format("127.0.1.{}", host + 1);
    for (int i = 0; i < 64; ++i) {
      filling.push_back(std::make_unique<RawConnection>(port_, source.c_str()));
      filling.back()->Send("GET /healthz HTTP/1.1\r\nX-Slow: a");
    }
  }
  std::this_thread::sleep_for(milliseconds(300));
  int served = 0;
  for (int i = 0; i < 10; ++i) {
    RawConnection controller(port_);
    controller.Send("GET /v1/state HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    served += controller.Receive(milliseconds(1000)).starts_with("HTTP/1.1 200") ? 1 : 0;
  }
  EXPECT_EQ(served, 10);
  filling.clear();
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_GE(MetricValue(metrics->body, "headroom_http_refused_total{reason=\"evicted\"}"), 1)
      << metrics->body;
}

// Finding 3b of issue 44: heads whose blank line is a bare LF are refused with 400 by the front
// (cpp-httplib in a worker would read on past them), and 64 of them starve nothing.
TEST_F(AgentDaemonTest, HeadsEndingInBareLineFeedsAreRefused) {
  auto agent = Start(Args());
  ASSERT_TRUE(client_);
  std::vector<std::unique_ptr<RawConnection>> bare;
  for (int i = 0; i < 64; ++i) {
    bare.push_back(std::make_unique<RawConnection>(port_, "127.0.0.4"));
    bare.back()->Send(i % 2 == 0 ? "GET /healthz HTTP/1.1\nHost: x\n\n"
                                 : "GET /v1/state HTTP/1.1\r\nHost: x\r\n\n");
  }
  for (auto& conn : bare) {
    const std::string answer = conn->Receive(milliseconds(1000));
    EXPECT_NE(answer.find("HTTP/1.1 400"), std::string::npos) << answer;
    EXPECT_NE(answer.find("CRLF"), std::string::npos) << answer;
  }
  auto health = client_->Get("/healthz");
  EXPECT_TRUE(health && health->status == 200);
}

// Finding 4b of issue 44: with the token, a body is bounded whatever its framing: a chunked
// body or one with no length at all over 64 KiB gets 413, and nothing is applied.
TEST_F(AgentDaemonTest, ChunkedOrLengthlessBodiesOverTheLimitGet413) {
  auto agent = Start(Args(), {SmallSanitizerQuarantine()});
  ASSERT_TRUE(client_);
  const long before = ResidentKib(agent->pid());
  const std::string head =
      fmt::format("PUT /v1/caps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n", kToken);
  std::string chunked = head + "Transfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 64; ++i)
    chunked += fmt::format("{:x}\r\n{}\r\n", 4096, std::string(4096, ' '));
  const std::string lengthless = head + "Connection: close\r\n\r\n" + std::string(256 * 1024, ' ');
  for (const std::string* request : std::vector<const std::string*>{&chunked, &lengthless}) {
    RawConnection conn(port_);
    conn.Send(*request);
    const std::string answer = conn.Receive(milliseconds(2000));
    EXPECT_NE(answer.find("HTTP/1.1 413"), std::string::npos) << answer.substr(0, 200);
  }
  const long after = ResidentKib(agent->pid());
  EXPECT_LT(after - before, 16 * 1024) << "RSS " << before << " KiB -> " << after << " KiB";
  EXPECT_TRUE(InFailsafeOnly(State())) << "nothing applied";
}

// Headers are checked as received: a NUL after the token (which cpp-httplib's header lookup
// would cut off, leaving the token alone), a second Authorization header, or escape codes in any
// header are refused before the body is read, and nothing changes.
TEST_F(AgentDaemonTest, HeadersWithControlBytesOrTwoTokensAreRefused) {
  auto agent = Start(Args());
  ASSERT_TRUE(client_);
  const std::string body = R"({"sm_clock_mhz": 1275, "lease_s": 30, "request_id": "nul-1"})";
  auto request = [&](const std::string& headers) {
    RawConnection conn(port_);
    EXPECT_TRUE(conn.Send("PUT /v1/caps HTTP/1.1\r\nHost: x\r\n" + headers +
                          fmt::format("Content-Length: {}\r\n\r\n", body.size()) + body));
    return conn.Receive(milliseconds(2000));
  };
  const std::string bearer = std::string("Authorization: Bearer ") + kToken;
  EXPECT_NE(request(bearer + std::string("\0junk\r\n", 7)).find("HTTP/1.1 400"), std::string::npos);
  EXPECT_NE(request(bearer + "\r\nX-Note: \x1b[2J\r\n").find("HTTP/1.1 400"), std::string::npos);
  EXPECT_NE(request(bearer + "\r\nAuthorization: Bearer other\r\n").find("HTTP/1.1 401"),
            std::string::npos);
  EXPECT_TRUE(State()["gpus"][0]["caps"]["sm_clock_mhz"].is_null()) << State().dump();
  // The same request with a clean header is applied.
  EXPECT_NE(request(bearer + "\r\n").find("HTTP/1.1 200"), std::string::npos);
}

// --quiet (a global flag, here after the subcommand) drops the daemon's info lines; errors and
// warnings would stay.
TEST_F(AgentDaemonTest, QuietDropsTheInfoLogLines) {
  for (const bool quiet : {false, true}) {
    std::vector<std::string> args = Args();
    if (quiet) args.push_back("--quiet");
    auto agent = Start(args);
    ASSERT_TRUE(client_);
    agent->Signal(SIGTERM);
    ASSERT_EQ(agent->Wait(), 0) << agent->Stderr();
    const std::string log = agent->Stderr();
    EXPECT_EQ(log.find("agent up") != std::string::npos, !quiet) << "quiet " << quiet << ":\n"
                                                                 << log;
    client_.reset();
  }
}

TEST_F(AgentDaemonTest, ExpiredLeaseAppliesTheFailsafeCap) {
  auto agent = Start(Args());
  ASSERT_TRUE(client_);
  auto ok = Put(R"({"gpus": [0], "sm_clock_mhz": 1410, "lease_s": 1, "request_id": "l-1"})");
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->status, 200) << ok->body;
  EXPECT_EQ(State()["failsafe_active"], false);
  std::this_thread::sleep_for(milliseconds(2500));
  const json state = State();
  EXPECT_EQ(state["failsafe_active"], true);
  EXPECT_EQ(state["lease"]["expired"], true);
  for (const auto& g : state["gpus"]) {
    EXPECT_EQ(g["sm_clock_lock"]["max_mhz"], 1110.0) << g.dump();  // A100 LP T2 clock
  }
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("headroom_agent_failsafe_active 1"), std::string::npos);
  EXPECT_NE(metrics->body.find("headroom_agent_lease_expired 1"), std::string::npos);
  agent->Signal(SIGINT);
  EXPECT_EQ(agent->Wait(), 0) << agent->Stderr();
}

TEST_F(AgentDaemonTest, CrashLeavesTheStateFileAndTheNextStartRestoresFromIt) {
  {
    auto agent = Start(Args());
    ASSERT_TRUE(client_);
    ASSERT_EQ(Put(R"({"power_limit_w": 250, "lease_s": 30, "request_id": "c-1"})")->status, 200);
    agent->Signal(SIGKILL);
    EXPECT_EQ(agent->Wait(), -SIGKILL);
  }
  ASSERT_TRUE(std::filesystem::exists(state_file_));
  auto agent = Start(Args());
  ASSERT_TRUE(client_);
  const std::string log = agent->Stderr();
  EXPECT_NE(log.find("did not exit cleanly"), std::string::npos) << log;
  EXPECT_NE(log.find("restored original GPU 7: power limit 400 W"), std::string::npos) << log;
  EXPECT_NE(log.find("saved the original GPU settings"), std::string::npos) << log;
  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 0);
}

// Finding 2 of issue 44: an agent in its failsafe, killed with -9 and restarted while no
// controller reaches it, restores the GPUs' settings it saved and caps them again at once;
// seconds later it still holds the failsafe.
TEST_F(AgentDaemonTest, RestartedWithNoControllerTheGpusAreCapped) {
  {
    auto agent = Start(Args());
    ASSERT_TRUE(client_);
    ASSERT_TRUE(InFailsafeOnly(State()));
    agent->Signal(SIGKILL);
    EXPECT_EQ(agent->Wait(), -SIGKILL);
  }
  auto agent = Start(Args());
  ASSERT_TRUE(client_);
  json state = State();
  EXPECT_TRUE(InFailsafeOnly(state)) << state.dump(2);
  EXPECT_EQ(state["failsafe_reason"], "started: no controller's PUT yet");
  std::this_thread::sleep_for(std::chrono::seconds(2));
  state = State();
  EXPECT_TRUE(InFailsafeOnly(state)) << state.dump(2);
  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 0);
}

TEST_F(AgentDaemonTest, TokenFileMustExistAndHoldAToken) {
  std::ofstream(token_file_) << "  \n";
  AgentProcess empty(Args(), (dir_ / "empty.log").string());
  EXPECT_EQ(empty.Wait(), 2);
  EXPECT_NE(empty.Stderr().find("is empty"), std::string::npos) << empty.Stderr();
  std::filesystem::remove(token_file_);
  AgentProcess missing(Args(), (dir_ / "missing.log").string());
  EXPECT_EQ(missing.Wait(), 2);
  EXPECT_NE(missing.Stderr().find("--token-file"), std::string::npos) << missing.Stderr();
}

// Without a writable state directory the agent refuses to start, instead of answering its
// first cap (in a power emergency) with 503.
TEST_F(AgentDaemonTest, StateDirectoryMustBeWritable) {
  state_file_ = (dir_ / "missing-dir" / "state.json").string();
  AgentProcess agent(Args(), (dir_ / "nostate.log").string());
  EXPECT_EQ(agent.Wait(), 2);
  EXPECT_NE(agent.Stderr().find("cannot write there"), std::string::npos) << agent.Stderr();
}

// Issue 44, finding 7: the state file's settings are restored onto the GPUs at the next start,
// so a directory others can write (even with /tmp's sticky bit) stops the start.
TEST_F(AgentDaemonTest, StateDirectoryOthersCanWriteIsRefused) {
  const std::filesystem::path shared = dir_ / "shared";
  std::filesystem::create_directories(shared);
  std::filesystem::permissions(shared,
                               std::filesystem::perms::all | std::filesystem::perms::sticky_bit);
  state_file_ = (shared / "state.json").string();
  AgentProcess agent(Args(), (dir_ / "shared.log").string());
  EXPECT_EQ(agent.Wait(), 2);
  EXPECT_NE(agent.Stderr().find(shared.string() + ": writable by its group and others"),
            std::string::npos)
      << agent.Stderr();
  EXPECT_FALSE(std::filesystem::exists(state_file_)) << "nothing was changed";
}

// Issue 44, finding 8: a FIFO as the token, config or state file hung the start, deaf to
// SIGTERM; each is refused at once, naming the file.
TEST_F(AgentDaemonTest, AFifoForAnyOfItsFilesIsRefusedAtOnce) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string token_file = token_file_;
  const std::string state_file = state_file_;
  token_file_ = fifo;
  AgentProcess token(Args(), (dir_ / "fifo-token.log").string());
  token_file_ = token_file;
  AgentProcess config(Args({"--config", fifo}), (dir_ / "fifo-config.log").string());
  state_file_ = fifo;
  AgentProcess state(Args(), (dir_ / "fifo-state.log").string());
  state_file_ = state_file;
  AgentProcess tls(Args({"--tls-cert", fifo, "--tls-key", fifo}), (dir_ / "fifo-tls.log").string());
  for (AgentProcess* agent : {&token, &config, &state, &tls}) {
    EXPECT_EQ(agent->Wait(), 2) << agent->Stderr();
    EXPECT_NE(agent->Stderr().find(fifo + ": not a regular file (a FIFO)"), std::string::npos)
        << agent->Stderr();
  }
}

TEST_F(AgentDaemonTest, TlsNeedsACertificateAndItsKeyThatLoad) {
  std::vector<std::string> args = Args({"--tls-cert", token_file_});
  AgentProcess half(args, (dir_ / "half.log").string());
  EXPECT_EQ(half.Wait(), 2);
  EXPECT_NE(half.Stderr().find("--tls-cert and --tls-key go together"), std::string::npos)
      << half.Stderr();
  AgentProcess junk(Args({"--tls-cert", token_file_, "--tls-key", token_file_}),
                    (dir_ / "junk.log").string());
  EXPECT_EQ(junk.Wait(), 2);
  EXPECT_NE(junk.Stderr().find("TLS: cannot load the certificate"), std::string::npos)
      << junk.Stderr();
  EXPECT_FALSE(std::filesystem::exists(state_file_)) << "nothing was changed";
}

TEST_F(AgentDaemonTest, ConfigFileSetsWhatTheFlagsLeaveOut) {
  const std::string config = (dir_ / "agent.yaml").string();
  std::ofstream(config) << "sim_count: 2\npriority: hp\nlisten: 127.0.0.1:9\n"
                        << "failsafe_sm_clock_mhz: 1275\n";
  // --listen on the command line wins over the file's port 9.
  auto agent = Start({"agent", "--config", config, "--listen", "127.0.0.1:0", "--token-file",
                      token_file_, "--state-file", state_file_});
  ASSERT_TRUE(client_);
  const json state = State();
  EXPECT_EQ(state["priority"], "hp");
  EXPECT_EQ(state["gpus"].size(), 2u);
  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 0);

  std::ofstream(config) << "sim_count: 2\ntoken: x\n";
  AgentProcess bad({"agent", "--config", config, "--token-file", token_file_},
                   (dir_ / "bad.log").string());
  EXPECT_EQ(bad.Wait(), 2);
  EXPECT_NE(bad.Stderr().find("token"), std::string::npos) << bad.Stderr();
}

// Issue 51: the energy saver from agent.yaml, which needs the engine's metrics; with them the
// agent reports the saver's clock, the failsafe it starts under winning, and why it has no J/token
// yet.
TEST_F(AgentDaemonTest, EnergySaverNeedsEngineMetricsAndReportsItsClock) {
  const std::string config = (dir_ / "agent.yaml").string();
  std::ofstream(config) << "sim_count: 2\nenergy_saver:\n  itl_p50: 40ms\n  ttft_p99: 2s\n";
  AgentProcess alone({"agent", "--config", config, "--token-file", token_file_, "--state-file",
                      state_file_, "--listen", "127.0.0.1:0"},
                     (dir_ / "alone.log").string());
  EXPECT_EQ(alone.Wait(), 2);
  EXPECT_NE(alone.Stderr().find("need --engine-metrics"), std::string::npos) << alone.Stderr();

  httplib::Server engine;
  engine.Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        "vllm:prompt_tokens_total 10\nvllm:generation_tokens_total 20\n"
        "vllm:num_requests_running 1\nvllm:num_requests_waiting 0\n"
        "vllm:inter_token_latency_seconds_bucket{le=\"0.05\"} 5\n"
        "vllm:inter_token_latency_seconds_bucket{le=\"+Inf\"} 5\n"
        "vllm:time_to_first_token_seconds_bucket{le=\"1\"} 1\n"
        "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 1\n",
        "text/plain");
  });
  const int engine_port = engine.bind_to_any_port("127.0.0.1");
  std::thread serving([&engine] { engine.listen_after_bind(); });
  auto agent = Start({"agent", "--config", config, "--token-file", token_file_, "--state-file",
                      state_file_, "--listen", "127.0.0.1:0", "--engine-metrics",
                      fmt::format("http://127.0.0.1:{}/metrics", engine_port),
                      "--engine-metrics-interval", "100ms"});
  ASSERT_TRUE(client_);
  json state;
  for (int i = 0; i < 100; ++i) {
    state = State();
    if (state["energy_saver"].is_object() && state["energy_saver"]["latency"].is_object()) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  const json& saver = state["energy_saver"];
  ASSERT_TRUE(saver.is_object()) << state.dump(2);
  EXPECT_EQ(saver["clock_mhz"], 1410.0);
  EXPECT_EQ(saver["applied_mhz"], 1110.0) << "the failsafe it starts under is the row's cap";
  EXPECT_EQ(saver["row_cap_wins"], true);
  EXPECT_EQ(saver["itl_p50_slo_s"], 0.04);
  EXPECT_TRUE(state["token_energy"].is_null());
  EXPECT_TRUE(state.contains("token_energy_why")) << state.dump(2);
  const auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("headroom_agent_energy_saver_applied_clock_hertz 1110000000"),
            std::string::npos)
      << metrics->body;
  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 0);
  engine.stop();
  serving.join();
}

// Issue 51: with --engine-proxy the agent takes the engine's requests and passes them on; while a
// prompt waits for its first token the energy saver's clock is lifted from every GPU (the prefill
// boost), and it is back once the answer has begun.
TEST_F(AgentDaemonTest, TheEngineProxyLiftsTheSaversClockWhileAPromptWaits) {
  std::atomic<int> scrapes{0};
  std::string seen_during_prefill;  // the agent's /metrics, read by the engine before it answers
  int agent_port = 0;
  httplib::Server engine;
  engine.Get("/metrics", [&scrapes](const httplib::Request&, httplib::Response& res) {
    const int n = ++scrapes;  // a window of fast tokens each scrape: slack for the saver
    res.set_content(fmt::format("vllm:prompt_tokens_total {0}\nvllm:generation_tokens_total {1}\n"
                                "vllm:num_requests_running 1\nvllm:num_requests_waiting 0\n"
                                "vllm:inter_token_latency_seconds_bucket{{le=\"0.01\"}} {1}\n"
                                "vllm:inter_token_latency_seconds_bucket{{le=\"+Inf\"}} {1}\n"
                                "vllm:time_to_first_token_seconds_bucket{{le=\"0.1\"}} {2}\n"
                                "vllm:time_to_first_token_seconds_bucket{{le=\"+Inf\"}} {2}\n",
                                100 * n, 1000 * n, n),
                    "text/plain");
  });
  engine.Post("/v1/completions", [&](const httplib::Request& req, httplib::Response& res) {
    httplib::Client agent("127.0.0.1", agent_port);
    if (auto m = agent.Get("/metrics")) seen_during_prefill = m->body;
    res.set_content("{\"echo\": " + req.body + "}", "application/json");
  });
  const int engine_port = engine.bind_to_any_port("127.0.0.1");
  std::thread serving([&engine] { engine.listen_after_bind(); });
  auto agent =
      Start(Args({"--engine-metrics", fmt::format("http://127.0.0.1:{}/metrics", engine_port),
                  "--engine-metrics-interval", "100ms", "--engine-proxy", "127.0.0.1:0",
                  "--energy-saver-itl-p50", "40ms", "--energy-saver-ttft-p99", "2s",
                  "--energy-saver-settle", "0s"}));
  ASSERT_TRUE(client_);
  agent_port = port_;
  const std::optional<int> proxy_port = agent->PortAfter("engine proxy on 127.0.0.1:");
  ASSERT_TRUE(proxy_port) << agent->Stderr();
  ASSERT_TRUE(client_->Put("/v1/caps", Auth(), R"({"lease_s": 3600, "request_id": "start"})",
                           "application/json"));
  json saver;
  for (int i = 0; i < 200; ++i) {  // the saver lowers its clock on the engine's slack
    saver = State()["energy_saver"];
    if (saver.is_object() && saver["clock_mhz"].get<double>() < 1410) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  ASSERT_LT(saver["clock_mhz"].get<double>(), 1410) << saver.dump(2);
  EXPECT_TRUE(saver["ttft_p99_slo_s"].is_null()) << "the first token is the boost's";

  httplib::Client proxy("127.0.0.1", *proxy_port);
  const auto answer = proxy.Post("/v1/completions", R"({"prompt": "hi"})", "application/json");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(answer->body, R"({"echo": {"prompt": "hi"}})");
  EXPECT_NE(seen_during_prefill.find("headroom_agent_prompts_waiting 1"), std::string::npos)
      << seen_during_prefill;
  EXPECT_EQ(seen_during_prefill.find("headroom_agent_sm_clock_cap_hertz{"), std::string::npos)
      << "no GPU capped while the prompt waits";
  const json boost = State()["energy_saver"]["prefill_boost"];
  EXPECT_EQ(boost["boosts"], 1) << boost.dump();
  EXPECT_EQ(boost["prompts_waiting"], 0);
  const auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("headroom_agent_sm_clock_cap_hertz{"), std::string::npos)
      << "the saver's clock is back";
  EXPECT_NE(metrics->body.find("headroom_engine_proxy_generation_requests_total 1"),
            std::string::npos)
      << metrics->body;
  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 0);
  engine.stop();
  serving.join();
}

// A fake engine whose streamed completion sends one event, then the rest once released (at most
// ten seconds later), on a thread of its own.
class SlowStreamEngine {
 public:
  SlowStreamEngine() {
    server_.Post("/v1/completions", [this](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/event-stream",
                                       [this](size_t offset, httplib::DataSink& sink) {
                                         if (offset == 0) return sink.write("data: 1\n\n", 9);
                                         for (int i = 0; i < 1000 && !released_.load(); ++i) {
                                           std::this_thread::sleep_for(milliseconds(10));
                                         }
                                         sink.write("data: [DONE]\n\n", 14);
                                         sink.done();
                                         return true;
                                       });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~SlowStreamEngine() {
    Release();
    server_.stop();
    thread_.join();
  }
  std::string url() const { return fmt::format("http://127.0.0.1:{}", port_); }
  void Release() { released_.store(true); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::atomic<bool> released_{false};
  std::thread thread_;
};

// A streamed completion through the engine proxy, on a thread of its own; its body fills as it
// comes.
struct StreamUnderWay {
  std::mutex mu;
  std::string body;
  std::future<httplib::Result> answer;

  std::string Body() {
    std::lock_guard<std::mutex> lock(mu);
    return body;
  }
  void Send(int proxy_port) {
    answer = std::async(std::launch::async, [this, proxy_port] {
      httplib::Client client("127.0.0.1", proxy_port);
      client.set_read_timeout(20);
      httplib::Request req;
      req.method = "POST";
      req.path = "/v1/completions";
      req.body = R"({"prompt": "hi", "stream": true})";
      req.content_receiver = [this](const char* data, size_t length, uint64_t, uint64_t) {
        std::lock_guard<std::mutex> lock(mu);
        body.append(data, length);
        return true;
      };
      return client.send(req);
    });
  }
};

// The agent exits 0 having logged `why`, and the answer under way was cut.
void ExpectExitCuttingTheStream(AgentProcess& agent, StreamUnderWay& stream,
                                const std::string& why) {
  EXPECT_EQ(agent.Wait(), 0);
  EXPECT_NE(agent.Stderr().find(why), std::string::npos) << agent.Stderr();
  ASSERT_EQ(stream.answer.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  EXPECT_EQ(stream.Body().find("[DONE]"), std::string::npos) << "the answer was cut";
}

bool WaitUntil(const std::function<bool()>& done) {
  for (int i = 0; i < 400 && !done(); ++i) std::this_thread::sleep_for(milliseconds(25));
  return done();
}

std::unique_ptr<AgentProcess> AgentDaemonTest::StartStreaming(const std::string& engine_url,
                                                              const std::vector<std::string>& extra,
                                                              StreamUnderWay& stream) {
  std::vector<std::string> args = {"--engine-proxy", "127.0.0.1:0", "--engine-url", engine_url};
  args.insert(args.end(), extra.begin(), extra.end());
  auto agent = Start(Args(args));
  const std::optional<int> proxy_port = agent->PortAfter("engine proxy on 127.0.0.1:");
  EXPECT_TRUE(proxy_port) << agent->Stderr();
  if (!client_ || !proxy_port) return nullptr;
  proxy_port_ = *proxy_port;
  stream.Send(*proxy_port);
  EXPECT_TRUE(WaitUntil([&stream] { return !stream.Body().empty(); }));
  return agent;
}

// An agent asked to stop drains its engine proxy first: new requests get a 503 (a load balancer
// sends them elsewhere), the answer under way streams on to its end, the control API still
// answers, and only then are the GPUs restored.
TEST_F(AgentDaemonTest, OnStopTheEngineProxyDrainsTheAnswersUnderWay) {
  SlowStreamEngine engine;
  StreamUnderWay stream;
  auto agent = StartStreaming(engine.url(), {}, stream);
  ASSERT_TRUE(agent);

  agent->Signal(SIGTERM);
  ASSERT_TRUE(WaitUntil([&] {
    return agent->Stderr().find("engine proxy draining") != std::string::npos;
  })) << agent->Stderr();
  httplib::Client proxy("127.0.0.1", proxy_port_);
  const auto refused = proxy.Post("/v1/completions", R"({"prompt": "hi"})", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  const auto state = client_->Get("/v1/state");
  ASSERT_TRUE(state) << "the control API answers while the proxy drains";
  EXPECT_EQ(state->status, 200);

  engine.Release();
  ASSERT_EQ(stream.answer.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  const httplib::Result done = stream.answer.get();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, 200);
  EXPECT_EQ(stream.Body(), "data: 1\n\ndata: [DONE]\n\n");
  EXPECT_EQ(agent->Wait(), 0);
  const std::string log = agent->Stderr();
  EXPECT_NE(log.find("engine proxy drained"), std::string::npos) << log;
  EXPECT_EQ(log.find("the shipped systemd unit"), std::string::npos) << "20s fits within 30s";
  EXPECT_LT(log.find("engine proxy drained"), log.find("original GPU settings restored")) << log;
}

// A drain has a deadline: what is still streaming then is cut, and the agent exits as before.
TEST_F(AgentDaemonTest, AnEngineProxysDrainEndsAtItsDeadline) {
  SlowStreamEngine engine;
  StreamUnderWay stream;
  auto agent = StartStreaming(engine.url(), {"--engine-proxy-drain", "300ms"}, stream);
  ASSERT_TRUE(agent);
  agent->Signal(SIGTERM);
  ExpectExitCuttingTheStream(*agent, stream,
                             "still had 1 request(s) in flight after 300ms: cutting them");
}

// Asked twice (a second Ctrl-C, a second SIGTERM), the agent stops draining at once.
TEST_F(AgentDaemonTest, ASecondStopSignalEndsTheDrainAtOnce) {
  SlowStreamEngine engine;
  StreamUnderWay stream;
  auto agent = StartStreaming(engine.url(), {"--engine-proxy-drain", "10m"}, stream);
  ASSERT_TRUE(agent);
  // A drain the shipped units' stop timeouts (30 s) would cut short is named at the start.
  EXPECT_NE(agent->Stderr().find("--engine-proxy-drain 10m: the shipped systemd unit"),
            std::string::npos)
      << agent->Stderr();
  agent->Signal(SIGINT);
  ASSERT_TRUE(WaitUntil([&] {
    return agent->Stderr().find("engine proxy draining for up to 10m") != std::string::npos;
  })) << agent->Stderr();
  agent->Signal(SIGINT);
  ExpectExitCuttingTheStream(*agent, stream,
                             "asked again to stop: cutting the engine proxy's 1 request(s)");
}

// Issue 51: the proxy needs an engine to pass requests to, given or taken from --engine-metrics.
TEST_F(AgentDaemonTest, TheEngineProxyNeedsTheEnginesUrl) {
  // Exit 2 before any GPU is touched, saying `why`.
  const auto refused = [this](const std::vector<std::string>& flags, const std::string& log,
                              const std::string& why) {
    AgentProcess agent(Args(flags), (dir_ / log).string());
    EXPECT_EQ(agent.Wait(), 2) << why;
    EXPECT_NE(agent.Stderr().find(why), std::string::npos) << agent.Stderr();
  };
  refused({"--engine-proxy", "127.0.0.1:0"}, "alone.log", "--engine-proxy needs the engine's URL");
  refused({"--engine-proxy", "127.0.0.1:0", "--engine-url", "http://h:1/v1"}, "path.log",
          "--engine-url");
  refused({"--engine-proxy", "127.0.0.1:0", "--engine-url", "http://127.0.0.1:1",
           "--engine-proxy-workers", "0"},
          "workers.log", "--engine-proxy-workers 0 is outside");
  refused({"--engine-url", "http://127.0.0.1:1"}, "url.log", "give --engine-proxy too");
  refused({"--engine-proxy", "127.0.0.1:0", "--engine-url", "http://127.0.0.1:1",
           "--engine-proxy-drain", "11m"},
          "drain.log", "--engine-proxy-drain 11m is outside 0s-10m");
}

TEST_F(AgentDaemonTest, NvmlBackendSetsCapsThroughNvmlAndRestoresThemOnShutdown) {
  std::vector<std::string> args = Args();
  args[2] = "nvml";
  const std::string settings_log = (dir_ / "nvml-settings.log").string();
  auto agent =
      Start(args, {std::string("HEADROOM_NVML_LIBRARY=") + FAKE_NVML, "HEADROOM_FAKE_NVML_COUNT=2",
                   "HEADROOM_FAKE_NVML_SETTINGS_LOG=" + settings_log});
  ASSERT_TRUE(client_);
  auto ok = Put(R"({"gpus": [1], "sm_clock_mhz": 1275, "power_limit_w": 300, "lease_s": 30,
                    "request_id": "n-1"})");
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->status, 200) << ok->body;
  const json state = State();
  EXPECT_EQ(state["backend"], "nvml");
  ASSERT_EQ(state["gpus"].size(), 2u);
  EXPECT_EQ(state["gpus"][1]["sm_clock_lock"]["max_mhz"], 1275.0) << state.dump(2);
  EXPECT_EQ(state["gpus"][1]["power_limit_w"], 300.0);
  EXPECT_EQ(state["gpus"][1]["caps"]["confirmed"], true);
  EXPECT_TRUE(state["gpus"][0]["sm_clock_lock"].is_null());
  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 0) << agent->Stderr();
  // What the library saw: the failsafe cap at the start on both GPUs, lifted by the PUT (GPU 0
  // back to its own clocks), the caps on GPU 1 only, then GPU 1 put back (clocks unlocked, the
  // A100's default 400 W limit).
  std::ifstream in(settings_log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  EXPECT_EQ(lines, (std::vector<std::string>{"gpu 0 lock 210 1110", "gpu 1 lock 210 1110",
                                             "gpu 0 reset-clocks", "gpu 1 power-limit-mw 300000",
                                             "gpu 1 lock 210 1275", "gpu 1 power-limit-mw 400000",
                                             "gpu 1 reset-clocks"}));
}

}  // namespace
