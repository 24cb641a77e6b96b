// HttpConnectionFront's limits, one test each, over socketpairs (and loopback TCP where two
// addresses are needed), on a FakeClock: a deadline passes when the test advances the clock,
// and the front's waiting thread, which wakes every 50 ms of real time to look at the clock,
// then acts on it. Every wait is on a real condition (an answer, a close, the front having read
// what was sent) and bounded; no test asserts on speed.
//
// Every AF_UNIX connection has the same peer address to the front (""), which is one peer: the
// per-address limits apply to all of a test's socketpairs together.
#include "service/http_connections.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/time.h"

namespace headroom::service {
namespace {

using namespace std::chrono_literals;

// Far beyond what any step here takes, so that only a front that never acts fails on it.
constexpr auto kFrontWaitBound = 10s;

// The client's end of a connection; the front owns the other end once it has adopted it.
class ClientEnd {
 public:
  explicit ClientEnd(int fd) : fd_(fd) {}
  ClientEnd(ClientEnd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ClientEnd& operator=(ClientEnd&&) = delete;
  ~ClientEnd() {
    if (fd_ >= 0) close(fd_);
  }
  int fd() const { return fd_; }

  void Send(std::string_view bytes) const {
    ASSERT_EQ(send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }

  // Everything the front writes until it closes the connection (or the bound passes, which
  // leaves "[still open]" at the end).
  std::string ReadUntilClosed() const {
    std::string got;
    const auto give_up = std::chrono::steady_clock::now() + kFrontWaitBound;
    while (std::chrono::steady_clock::now() < give_up) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return got;
      got.append(buf, static_cast<std::size_t>(n));
    }
    return got + "[still open]";
  }

  // Whether the front has read every byte sent on this AF_UNIX connection: the kernel charges
  // unread bytes to the sender's queue (SIOCOUTQ) until the receiver takes them.
  bool WaitUntilFrontRead() const {
    const auto give_up = std::chrono::steady_clock::now() + kFrontWaitBound;
    while (std::chrono::steady_clock::now() < give_up) {
      int unread = -1;
      if (ioctl(fd_, SIOCOUTQ, &unread) == 0 && unread == 0) return true;
      std::this_thread::sleep_for(1ms);
    }
    return false;
  }

  // Neither bytes nor a close have arrived.
  bool Quiet() const {
    pollfd p{fd_, POLLIN | POLLRDHUP, 0};
    return poll(&p, 1, 0) == 0;
  }

 private:
  int fd_;
};

// Stands in for cpp-httplib: reads the head (and, if asked, the body until the stream ends or
// fails) through the front's stream, answers 200 and closes. Can hold its worker until
// released.
class StubServer {
 public:
  ServeRequest Serve() {
    return [this](httplib::Stream& stream, bool, bool& connection_closed) {
      std::string head = ReadHead(stream);
      {
        std::unique_lock lock(mu_);
        heads_.push_back(head);
        changed_.notify_all();
        changed_.wait(lock, [this] { return !hold_; });
      }
      if (drain_body_) {
        char buf[512];
        while (stream.read(buf, sizeof buf) > 0) {
        }
      }
      constexpr std::string_view kOk =
          "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
      stream.write(kOk.data(), kOk.size());
      connection_closed = true;
      return false;
    };
  }

  void Hold() {
    std::lock_guard lock(mu_);
    hold_ = true;
  }
  void Release() {
    std::lock_guard lock(mu_);
    hold_ = false;
    changed_.notify_all();
  }
  void DrainBody() { drain_body_ = true; }

  // Waits until `n` requests have reached the stub.
  bool WaitForRequests(std::size_t n) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, kFrontWaitBound, [&] { return heads_.size() >= n; });
  }
  std::vector<std::string> heads() {
    std::lock_guard lock(mu_);
    return heads_;
  }

 private:
  static std::string ReadHead(httplib::Stream& stream) {
    std::string bytes;
    char c = 0;
    while (!bytes.ends_with("\r\n\r\n") && stream.read(&c, 1) == 1) bytes.push_back(c);
    return bytes;
  }

  bool drain_body_ = false;  // set before the front starts
  std::mutex mu_;
  std::condition_variable changed_;
  bool hold_ = false;
  std::vector<std::string> heads_;
};

constexpr std::string_view kHealthProbe =
    "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
constexpr std::string_view kHealthBody = "{\"status\":\"ok\"}";

// Small sizes, the front's own deadlines (they pass on the FakeClock); read_timeout is waited
// in real time by a worker reading a body, so it is short.
HttpLimits SmallLimits() {
  return HttpLimits{.workers = 2,
                    .max_head_bytes = 1024,
                    .max_body_bytes = 1024,
                    .idle_timeout = 2s,
                    .request_deadline = 5s,
                    .read_timeout = 50ms};
}

class HttpConnectionFrontTest : public ::testing::Test {
 protected:
  ~HttpConnectionFrontTest() override {
    stub_.Release();  // a held worker would keep Shutdown() waiting
    front_.reset();
  }

  void StartFront(const HttpLimits& limits) {
    front_ = std::make_unique<HttpConnectionFront>(limits, nullptr, &clock_, stub_.Serve());
    front_->SetHealth([] { return std::pair{200, std::string(kHealthBody)}; });
    front_->Start();
  }

  // A new connection whose client has already sent `bytes` when the front adopts it.
  ClientEnd Connect(std::string_view bytes = "") {
    int ends[2] = {-1, -1};
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
    ClientEnd client(ends[0]);
    if (!bytes.empty()) client.Send(bytes);
    front_->Adopt(ends[1]);
    return client;
  }

  // Returns once the waiting thread has looked at the clock since the caller last advanced it,
  // and has taken in every connection adopted before. A probe sent before its adoption is
  // answered in the loop turn that takes it in, and that turn ends with the clock check; the
  // second probe is taken in by a later turn, so its answer comes after a check that saw the
  // advanced clock.
  void PassClockCheck() {
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(Connect(kHealthProbe).ReadUntilClosed().starts_with("HTTP/1.1 200 OK"));
    }
  }

  core::FakeClock clock_;
  StubServer stub_;
  std::unique_ptr<HttpConnectionFront> front_;
};

TEST_F(HttpConnectionFrontTest, DispatchesACompleteHeadToAWorker) {
  StartFront(SmallLimits());
  ClientEnd client = Connect("GET /x HTTP/1.1\r\nHost: t\r\n");
  ASSERT_TRUE(client.WaitUntilFrontRead());
  client.Send("Connection: close\r\n\r\n");

  EXPECT_EQ(client.ReadUntilClosed(),
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
  EXPECT_EQ(stub_.heads(),
            std::vector<std::string>{"GET /x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"});
  EXPECT_EQ(front_->counters().accepted, 1u);
  EXPECT_EQ(front_->counters().health_answers, 0u);
}

TEST_F(HttpConnectionFrontTest, AnswersHealthWithoutAWorkerWhileTheWorkersAreBusy) {
  HttpLimits limits = SmallLimits();
  limits.workers = 1;
  StartFront(limits);
  stub_.Hold();
  ClientEnd busy = Connect("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(stub_.WaitForRequests(1));

  const std::string answer = Connect(kHealthProbe).ReadUntilClosed();

  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_TRUE(answer.ends_with(std::string("\r\n\r\n") + std::string(kHealthBody))) << answer;
  EXPECT_EQ(front_->counters().health_answers, 1u);
  stub_.Release();
  EXPECT_TRUE(busy.ReadUntilClosed().starts_with("HTTP/1.1 200 OK"));
  EXPECT_EQ(stub_.heads().size(), 1u);
}

TEST_F(HttpConnectionFrontTest, RefusesAHeadOverMaxHeadBytesWith431) {
  StartFront(SmallLimits());
  ClientEnd client = Connect("GET / HTTP/1.1\r\nX-Big: " + std::string(2000, 'a'));

  EXPECT_TRUE(client.ReadUntilClosed().starts_with("HTTP/1.1 431 "));
  EXPECT_EQ(front_->counters().head_too_large, 1u);
  EXPECT_TRUE(stub_.heads().empty());
}

TEST_F(HttpConnectionFrontTest, RefusesBareLineFeedsWith400) {
  StartFront(SmallLimits());
  ClientEnd client = Connect("GET / HTTP/1.1\nHost: t\n\n");

  EXPECT_TRUE(client.ReadUntilClosed().starts_with("HTTP/1.1 400 "));
  EXPECT_EQ(front_->counters().bad_line_ends, 1u);
  EXPECT_TRUE(stub_.heads().empty());
}

// The deadline runs from the request's first byte: a byte every second does not extend it
// (libmicrohttpd's timeout, reset by every read, would hold such a client for ever).
TEST_F(HttpConnectionFrontTest, HeadTrickledPastTheRequestDeadlineGets408) {
  StartFront(SmallLimits());
  ClientEnd client = Connect("GET / HTTP/1.1\r\nX-Trickle: ");
  ASSERT_TRUE(client.WaitUntilFrontRead());
  for (int second = 1; second < 5; ++second) {
    clock_.Advance(1s);
    client.Send("a");
    ASSERT_TRUE(client.WaitUntilFrontRead());
  }
  PassClockCheck();
  EXPECT_TRUE(client.Quiet()) << "refused before the 5 s deadline";

  clock_.Advance(1s + 1ms);
  EXPECT_TRUE(client.ReadUntilClosed().starts_with("HTTP/1.1 408 "));
  EXPECT_EQ(front_->counters().timed_out, 1u);
  EXPECT_TRUE(stub_.heads().empty());
}

TEST_F(HttpConnectionFrontTest, ClosesAConnectionIdlePastIdleTimeout) {
  StartFront(SmallLimits());
  ClientEnd client = Connect();
  clock_.Advance(1s);
  PassClockCheck();
  EXPECT_TRUE(client.Quiet()) << "closed before the 2 s idle timeout";

  clock_.Advance(1s + 1ms);
  EXPECT_EQ(client.ReadUntilClosed(), "");  // closed without an answer: it asked nothing
  EXPECT_EQ(front_->counters().timed_out, 0u);
}

TEST_F(HttpConnectionFrontTest, RefusesAConnectionPastThePerPeerLimitWith503) {
  HttpLimits limits = SmallLimits();
  limits.max_connections_per_peer = 2;
  StartFront(limits);
  ClientEnd first = Connect();
  ClientEnd second = Connect();

  EXPECT_TRUE(Connect().ReadUntilClosed().starts_with("HTTP/1.1 503 "));
  EXPECT_EQ(front_->counters().refused_connection_limit, 1u);
  EXPECT_EQ(front_->open_connections(), 2u);
  EXPECT_TRUE(first.Quiet());
  EXPECT_TRUE(second.Quiet());
}

TEST_F(HttpConnectionFrontTest, RefusesAChunkedBodyOverMaxBodyBytesWith413) {
  stub_.DrainBody();
  StartFront(SmallLimits());
  const std::string chunk = "200\r\n" + std::string(0x200, 'b') + "\r\n";
  // 1,536 bytes of chunk data, the body never finished; all sent before the front can refuse.
  ClientEnd client =
      Connect("POST /caps HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk +
              chunk + chunk);

  const std::string answer = client.ReadUntilClosed();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 413 ")) << answer;
  EXPECT_EQ(answer.find("200 OK"), std::string::npos) << "the stub's answer followed the 413";
  EXPECT_EQ(front_->counters().body_too_large, 1u);
}

// A worker waits read_timeout (real time) for the rest of a body before answering 408.
TEST_F(HttpConnectionFrontTest, BodyThatFallsSilentGets408) {
  stub_.DrainBody();
  StartFront(SmallLimits());
  ClientEnd client =
      Connect("POST /caps HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n0123456789");

  EXPECT_TRUE(client.ReadUntilClosed().starts_with("HTTP/1.1 408 "));
  EXPECT_EQ(front_->counters().timed_out, 1u);
}

TEST_F(HttpConnectionFrontTest, PeerOverItsWorkerShareWaitsItsTurn) {
  HttpLimits limits = SmallLimits();
  limits.max_workers_per_peer = 1;
  StartFront(limits);
  stub_.Hold();
  ClientEnd first = Connect("GET /a HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(stub_.WaitForRequests(1));
  ClientEnd second = Connect("GET /b HTTP/1.1\r\nHost: t\r\n\r\n");
  PassClockCheck();
  EXPECT_EQ(stub_.heads().size(), 1u);

  stub_.Release();
  EXPECT_TRUE(first.ReadUntilClosed().starts_with("HTTP/1.1 200 OK"));
  EXPECT_TRUE(second.ReadUntilClosed().starts_with("HTTP/1.1 200 OK"));
  EXPECT_EQ(stub_.heads().size(), 2u);
  EXPECT_EQ(front_->counters().busy_peer, 0u);
}

TEST_F(HttpConnectionFrontTest, PeerOverItsWorkerSharePastTheDeadlineGets503) {
  HttpLimits limits = SmallLimits();
  limits.max_workers_per_peer = 1;
  StartFront(limits);
  stub_.Hold();
  ClientEnd first = Connect("GET /a HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(stub_.WaitForRequests(1));
  ClientEnd second = Connect("GET /b HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(second.WaitUntilFrontRead());

  clock_.Advance(limits.request_deadline + 1ms);
  EXPECT_TRUE(second.ReadUntilClosed().starts_with("HTTP/1.1 503 "));
  EXPECT_EQ(front_->counters().busy_peer, 1u);
  stub_.Release();
  EXPECT_TRUE(first.ReadUntilClosed().starts_with("HTTP/1.1 200 OK"));
  EXPECT_EQ(stub_.heads().size(), 1u);
}

// A loopback TCP connection from 127.0.0.`host`, and the accepted end; {-1, -1} when this
// machine cannot bind that address.
std::pair<int, int> LoopbackPair(int listener, int host) {
  sockaddr_in to{};
  socklen_t len = sizeof to;
  getsockname(listener, reinterpret_cast<sockaddr*>(&to), &len);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl(0x7f000000u | static_cast<unsigned>(host));
  const int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (bind(client, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      connect(client, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    close(client);
    return {-1, -1};
  }
  return {client, accept4(listener, nullptr, nullptr, SOCK_CLOEXEC)};
}

// With every slot taken, a new address still gets in, and the largest holder loses its oldest
// connection still waiting for a head (503).
TEST_F(HttpConnectionFrontTest, EvictsTheLargestHoldersOldestConnectionForANewAddress) {
  HttpLimits limits = SmallLimits();
  limits.max_connections = 2;
  limits.max_connections_per_peer = 2;
  StartFront(limits);
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in any_port{};
  any_port.sin_family = AF_INET;
  any_port.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&any_port), sizeof any_port), 0);
  ASSERT_EQ(listen(listener, 8), 0);
  std::vector<ClientEnd> holder;
  holder.reserve(2);
  for (int i = 0; i < 2; ++i) {
    const auto [client, accepted] = LoopbackPair(listener, 2);
    if (client < 0) GTEST_SKIP() << "cannot bind 127.0.0.2 here";
    holder.emplace_back(client);
    front_->Adopt(accepted);
    clock_.Advance(1ms);  // the first is the oldest
  }
  const auto [newcomer_fd, accepted] = LoopbackPair(listener, 3);
  close(listener);
  if (newcomer_fd < 0) GTEST_SKIP() << "cannot bind 127.0.0.3 here";
  const ClientEnd newcomer(newcomer_fd);
  front_->Adopt(accepted);

  EXPECT_TRUE(holder[0].ReadUntilClosed().starts_with("HTTP/1.1 503 "));
  EXPECT_EQ(front_->counters().evicted, 1u);
  EXPECT_EQ(front_->counters().refused_connection_limit, 0u);
  EXPECT_TRUE(holder[1].Quiet());
  newcomer.Send(kHealthProbe);
  EXPECT_TRUE(newcomer.ReadUntilClosed().starts_with("HTTP/1.1 200 OK"));
}

}  // namespace
}  // namespace headroom::service
