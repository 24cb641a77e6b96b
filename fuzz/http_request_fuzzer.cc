// The bytes a client sends to a daemon's HTTP port, through everything that reads them: the
// connection front (service::HttpConnectionFront: head detection, bare-LF heads refused with 400,
// GET /healthz answered without a worker, the 16 KiB head and 64 KiB body bounds, deadlines),
// cpp-httplib's parser, and the pre-routing checks, admission and routes of the agent's server
// (AgentHttpServer over an Agent on four simulated A100s). One server on 127.0.0.1 (a free port)
// serves every input, as a daemon serves every client: an input is one connection that sends
// the bytes, shuts its sending side and reads until the server closes.
//
// Checks beyond "no crash":
//   - every answer the server writes starts "HTTP/1.1 NNN " and the next one follows its body
//     (Content-Length bytes; none after the answer to a HEAD), so no answer is written inside
//     or instead of another one;
//   - the server closes within kCloseWithin of the client's end of input: no input makes the
//     server wait out a deadline (seconds) once the client has shut its side;
//   - an input without the token writes no GPU control (no caps applied, none restored);
//   - every kProbeEvery inputs, a well-formed GET /healthz gets 200 from the front, GET /metrics
//     gets 200 from a worker, and the server holds no connection but that one.
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/time.h"
#include "fuzz/fuzz_support.h"
#include "gpu/device.h"
#include "gpu/sim/sim_device.h"
#include "policy/policy_params.h"
#include "service/agent.h"
#include "service/http_server.h"

namespace headroom::fuzz {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kToken = "fuzz-token";
// Far above a connection's normal life here (milliseconds), far below the front's deadlines
// (idle 2 s, request 5 s) and libFuzzer's -timeout=10 s.
constexpr auto kCloseWithin = 3s;
constexpr int kProbeEvery = 64;

// A GPU that counts the control writes made on it (power limit, clock lock, their resets) and
// forwards every call to a simulated one.
class CountingDevice final : public gpu::Device {
 public:
  CountingDevice(std::unique_ptr<gpu::Device> inner, std::atomic<int>* writes)
      : inner_(std::move(inner)), writes_(writes) {}

  const gpu::DeviceInfo& info() const override { return inner_->info(); }
  core::Result<core::Watts> PowerInstant() override { return inner_->PowerInstant(); }
  core::Result<core::Watts> PowerAverage() override { return inner_->PowerAverage(); }
  core::Result<core::Joules> EnergyCounter() override { return inner_->EnergyCounter(); }
  core::Result<std::vector<gpu::PowerSample>> PowerSamples(std::uint64_t after_us) override {
    return inner_->PowerSamples(after_us);
  }
  core::Result<core::Megahertz> SmClock() override { return inner_->SmClock(); }
  core::Result<core::Megahertz> MemoryClock() override { return inner_->MemoryClock(); }
  core::Result<std::vector<core::Megahertz>> SupportedSmClocks() override {
    return inner_->SupportedSmClocks();
  }
  core::Result<gpu::UtilizationRates> Utilization() override { return inner_->Utilization(); }
  core::Result<core::Celsius> Temperature() override { return inner_->Temperature(); }
  core::Result<gpu::MemoryUsage> Memory() override { return inner_->Memory(); }
  core::Result<gpu::PowerLimitState> PowerLimits() override { return inner_->PowerLimits(); }
  core::Result<std::uint64_t> ThrottleReasons() override { return inner_->ThrottleReasons(); }
  core::Result<std::optional<gpu::ClockLock>> SmClockLock() override {
    return inner_->SmClockLock();
  }
  core::Status SetPowerLimit(core::Watts limit) override {
    ++*writes_;
    return inner_->SetPowerLimit(limit);
  }
  core::Status ResetPowerLimit() override {
    ++*writes_;
    return inner_->ResetPowerLimit();
  }
  core::Status LockSmClocks(core::Megahertz min, core::Megahertz max) override {
    ++*writes_;
    return inner_->LockSmClocks(min, max);
  }
  core::Status ResetSmClocks() override {
    ++*writes_;
    return inner_->ResetSmClocks();
  }

 private:
  const std::unique_ptr<gpu::Device> inner_;
  std::atomic<int>* const writes_;
};

// The agent daemon without its ticker: state file written at start, then only HTTP.
struct Daemon {
  // Never moved: no lease runs out, and a sim GPU's read would simulate all the time passed.
  core::FakeClock clock;
  std::atomic<int> control_writes{0};  // on any GPU: only a command writes (no ticker runs)
  std::vector<std::unique_ptr<gpu::Device>> devices;
  std::unique_ptr<service::Agent> agent;
  std::unique_ptr<service::AgentHttpServer> server;
  int port = 0;
};

Daemon* StartDaemon() {
  spdlog::set_level(spdlog::level::off);  // the agent logs every applied request
  auto* daemon = new Daemon;
  auto spec = Hardware().Gpu("a100-80gb-sxm");
  HEADROOM_CHECK(spec.has_value()) << spec.error().message();
  for (auto& sim : gpu::sim::CreateSimDevices(**spec, 4, &daemon->clock, {})) {
    daemon->devices.push_back(
        std::make_unique<CountingDevice>(std::move(sim), &daemon->control_writes));
  }
  std::vector<service::AgentGpu> gpus;
  for (const auto& device : daemon->devices) {
    gpus.push_back(
        service::AgentGpu{.device = device.get(),
                          .spec = **spec,
                          .failsafe_clock = policy::DefaultParamsFor(**spec).lp_t2_clock});
  }
  // The agent writes its state file only in Create(): the directory can go at once.
  std::string dir = (std::filesystem::temp_directory_path() / "headroom-http-fuzz-XXXXXX").string();
  HEADROOM_CHECK(mkdtemp(dir.data()) != nullptr) << dir << ": " << std::strerror(errno);
  service::AgentOptions options;
  options.state_file = dir + "/agent-state.json";
  auto agent = service::Agent::Create(std::move(gpus), options, &daemon->clock);
  HEADROOM_CHECK(agent.has_value()) << agent.error().message();
  daemon->agent = std::move(*agent);
  std::filesystem::remove_all(dir);

  daemon->server =
      std::make_unique<service::AgentHttpServer>(daemon->agent.get(), std::string(kToken));
  auto port = daemon->server->Bind({.host = "127.0.0.1", .port = 0});
  HEADROOM_CHECK(port.has_value()) << port.error().message();
  daemon->port = *port;
  std::thread([server = daemon->server.get()] { server->Serve(); }).detach();
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (!daemon->server->running()) {
    HEADROOM_CHECK(std::chrono::steady_clock::now() < give_up) << "the server did not start";
    std::this_thread::sleep_for(1ms);
  }
  return daemon;  // never stopped: it serves until the process exits
}

Daemon& TheDaemon() {
  static Daemon* daemon = StartDaemon();
  return *daemon;
}

// Up to 80 bytes of `text`, control bytes escaped, for a failure message.
std::string Printable(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 80)) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f) {
      out += c;
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xf];
    }
  }
  return out;
}

// One connection: sends `request` (as much as the server takes), shuts the sending side, and
// returns what the server wrote until it closed.
std::string Exchange(int port, std::string_view request) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  HEADROOM_CHECK(fd >= 0) << std::strerror(errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  HEADROOM_CHECK(connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0)
      << "connecting to the server: " << std::strerror(errno);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);

  std::string answer;
  std::size_t sent = 0;
  bool shut = false;
  const auto shut_down = [&] {
    shutdown(fd, SHUT_WR);  // the server sees the end of input
    shut = true;
  };
  if (request.empty()) shut_down();
  const auto deadline = std::chrono::steady_clock::now() + kCloseWithin;
  char buf[16384];
  while (true) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    HEADROOM_CHECK(left.count() > 0)
        << "the server held the connection " << kCloseWithin.count()
        << " s after the client's end of input (sent " << sent << " of " << request.size()
        << " bytes; answered: '" << Printable(answer) << "')";
    pollfd p{fd, static_cast<short>(shut ? POLLIN : POLLIN | POLLOUT), 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    if (!shut && (p.revents & POLLOUT) != 0) {
      const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n > 0) sent += static_cast<std::size_t>(n);
      // The server closed with input unread (a refusal): what it wrote is still to be read.
      if (n < 0 && errno != EAGAIN && errno != EINTR) sent = request.size();
      if (sent == request.size()) shut_down();
    }
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n > 0) {
        answer.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        break;  // closed, or reset for input it did not read
      }
    }
  }
  // Both sides are done: close with a reset rather than hold the port in TIME_WAIT (a fuzzing
  // run makes hundreds of thousands of connections).
  const linger reset{.l_onoff = 1, .l_linger = 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  close(fd);
  return answer;
}

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

// The Content-Length of an answer's head (0 without one).
std::size_t ContentLength(std::string_view head) {
  for (std::size_t at = head.find("\r\n"); at != std::string_view::npos;
       at = head.find("\r\n", at + 2)) {
    const std::string_view line = head.substr(at + 2);
    if (!StartsWithNoCase(line, "content-length:")) continue;
    return std::strtoull(std::string(line.substr(15, line.find("\r\n") - 15)).c_str(), nullptr, 10);
  }
  return 0;
}

// "HTTP/1.1 NNN " with NNN from 100 to 599, or as much of it as `text` holds (an answer cut
// short when the server closed on a client that did not take it at once).
bool StartsLikeAnAnswer(std::string_view text) {
  constexpr std::string_view kVersion = "HTTP/1.1 ";
  for (std::size_t i = 0; i < text.size() && i < 13; ++i) {
    const char c = text[i];
    bool ok = false;
    if (i < kVersion.size()) {
      ok = c == kVersion[i];
    } else if (i == kVersion.size()) {
      ok = c >= '1' && c <= '5';
    } else if (i < 12) {
      ok = c >= '0' && c <= '9';
    } else {
      ok = c == ' ';
    }
    if (!ok) return false;
  }
  return true;
}

// Every answer in `answers` starts like one, and each begins where the one before it ends.
void CheckAnswers(std::string_view answers, std::string_view request) {
  std::size_t pos = 0;
  while (pos < answers.size()) {
    const std::string_view rest = answers.substr(pos);
    HEADROOM_CHECK(StartsLikeAnAnswer(rest))
        << "answer bytes at offset " << pos << " do not start 'HTTP/1.1 NNN ': '" << Printable(rest)
        << "' (the request began '" << Printable(request) << "')";
    const std::size_t end = rest.find("\r\n\r\n");
    if (end == std::string_view::npos) return;  // cut short
    pos += end + 4;
    // The answer to a HEAD gives its Content-Length without the body: the next answer follows
    // at once. (No body the daemons write starts "HTTP/".)
    if (answers.substr(pos).starts_with("HTTP/")) continue;
    pos += ContentLength(rest.substr(0, end + 2));
  }
}

// A well-formed request, answered 200 on a fresh connection.
std::string MustServe(int port, std::string_view path) {
  const std::string request =
      "GET " + std::string(path) + " HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n";
  const std::string answer = Exchange(port, request);
  HEADROOM_CHECK(answer.starts_with("HTTP/1.1 200 "))
      << "after the last inputs, GET " << path << " got '" << Printable(answer) << "'";
  return answer;
}

// /healthz from the front, /metrics from a worker, and no connection left open but that one
// (the last one's slot goes back a moment after its socket closes: retried for up to 1 s).
void ProbeServer(int port) {
  MustServe(port, "/healthz");
  constexpr std::string_view kOpen = "\nheadroom_http_connections_open ";
  std::string open;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string metrics = MustServe(port, "/metrics");
    const std::size_t at = metrics.find(kOpen);
    HEADROOM_CHECK(at != std::string::npos) << "no headroom_http_connections_open in /metrics";
    open = metrics.substr(at + kOpen.size(), metrics.find('\n', at + 1) - at - kOpen.size());
    if (open == "1") return;
    std::this_thread::sleep_for(10ms);
  }
  HEADROOM_CHECK(false) << "the server holds " << open << " connections with one client connected";
}

}  // namespace
}  // namespace headroom::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace headroom::fuzz;
  Daemon& daemon = TheDaemon();
  static int inputs = 0;
  if (inputs++ % kProbeEvery == 0) ProbeServer(daemon.port);

  const std::string_view request = Text(data, size);
  const int writes_before = daemon.control_writes;
  const std::string answers = Exchange(daemon.port, request);
  CheckAnswers(answers, request);
  HEADROOM_CHECK(request.find(kToken) != std::string_view::npos ||
                 daemon.control_writes == writes_before)
      << "a request without the token wrote a GPU control: '" << Printable(request) << "'";
  return 0;
}
