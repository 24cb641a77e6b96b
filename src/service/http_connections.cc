#include "service/http_connections.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <utility>
#include <variant>

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nlohmann/json.hpp>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/parse.h"

namespace headroom::service {
namespace {

// An answer written by the front itself, before or instead of cpp-httplib's.
std::string PlainAnswer(int status, std::string_view reason, const std::string& message) {
  const std::string body = nlohmann::json{{"error", message}}.dump() + "\n";
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n"
      "Connection: close\r\n\r\n{}",
      status, reason, body.size(), body);
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

// "127.0.0.1" or "::1" of a socket's peer (or itself with `local`), and its port.
std::pair<std::string, int> SocketAddress(int fd, bool local) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  auto* any = reinterpret_cast<sockaddr*>(&addr);
  if ((local ? getsockname(fd, any, &len) : getpeername(fd, any, &len)) != 0) return {"", 0};
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    return {text, ntohs(v4->sin_port)};
  }
  if (addr.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    return {text, ntohs(v6->sin6_port)};
  }
  return {"", 0};
}

// Waits up to `timeout` (rounded up to a millisecond) for `events` on `fd`.
bool WaitFor(int fd, short events, core::Duration timeout) {
  if (timeout <= core::Duration::zero()) return false;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(timeout).count();
  pollfd p{fd, events, 0};
  int r = 0;
  do {
    r = poll(&p, 1, static_cast<int>(std::min<long long>(ms, INT_MAX)));
  } while (r < 0 && errno == EINTR);
  return r > 0;
}

bool WouldBlock(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

// The end of a request's head (the blank line after the headers) in `bytes`, if it is there.
// Only CRLF line ends end a head: one with bare LFs is refused (BareLineFeeds).
std::optional<std::size_t> HeadEnd(std::string_view bytes) {
  const std::size_t crlf = bytes.find("\r\n\r\n");
  if (crlf == std::string_view::npos) return std::nullopt;
  return crlf + 4;
}

// A blank line made of a bare LF in the head so far: cpp-httplib takes it as the head's end
// only in a worker, where it then reads on; the front refuses it with 400 instead.
bool BareLineFeeds(std::string_view head) { return head.find("\n\n") != std::string_view::npos; }

// A GET /healthz head that the waiting thread may answer: no body, nothing to route.
bool IsHealthProbe(std::string_view head) {
  if (!head.starts_with("GET /healthz HTTP/1.1\r\n") &&
      !head.starts_with("GET /healthz HTTP/1.0\r\n")) {
    return false;
  }
  const std::string lower = core::ToLower(head);
  return lower.find("\ncontent-length:") == std::string::npos &&
         lower.find("\ntransfer-encoding:") == std::string::npos;
}

// Whether the client of `head` asked to close after the answer (HTTP/1.0 closes by default).
bool AsksToClose(std::string_view head) {
  const std::string lower = core::ToLower(head);
  if (lower.find("\nconnection: close") != std::string::npos) return true;
  return head.find(" HTTP/1.0\r\n") != std::string_view::npos &&
         lower.find("\nconnection: keep-alive") == std::string::npos;
}

int ClampToInt(std::size_t n) { return static_cast<int>(std::min<std::size_t>(n, INT_MAX)); }

}  // namespace

class HttpConnectionFront::Slots {
 public:
  explicit Slots(const HttpLimits& limits) : limits_(limits) {}

  // A connection's hold on its slot, given back when it is destroyed.
  class Slot {
   public:
    Slot(std::shared_ptr<Slots> slots, std::string peer)
        : slots_(std::move(slots)), peer_(std::move(peer)) {}
    Slot(Slot&&) = default;
    Slot& operator=(Slot&&) = default;
    ~Slot() {
      if (slots_) slots_->Release(peer_);
    }

   private:
    std::shared_ptr<Slots> slots_;
    std::string peer_;
  };

  // A slot for one more connection from `peer`, or the reason there is none. With every slot
  // taken, a peer holding fewer connections than the largest holder still gets one, and
  // `*evict` names that holder, one of whose connections waiting for a head is then closed: so
  // that many addresses filling the slots cannot lock out the controller's (issue 44, finding 6).
  // The slots in use exceed max_connections by at most max_connections_per_peer meanwhile.
  static std::variant<Slot, std::string> Take(const std::shared_ptr<Slots>& slots,
                                              const std::string& peer, std::string* evict) {
    core::MutexLock lock(&slots->mu_);
    if (slots->total_ >= slots->limits_.max_connections) {
      const std::string largest = slots->LargestHolder();
      const std::size_t theirs = largest.empty() ? 0 : slots->per_peer_[largest];
      const auto it = slots->per_peer_.find(peer);
      const std::size_t mine = it == slots->per_peer_.end() ? 0 : it->second;
      if (mine + 1 >= theirs || slots->total_ >= slots->limits_.max_connections +
                                                     slots->limits_.max_connections_per_peer) {
        return fmt::format("too many connections ({} open)", slots->total_);
      }
      *evict = largest;
    }
    std::size_t& mine = slots->per_peer_[peer];
    if (mine >= slots->limits_.max_connections_per_peer) {
      return fmt::format("too many connections from {} ({} open)", peer, mine);
    }
    ++mine;
    ++slots->total_;
    return Slot(slots, peer);
  }

  std::size_t open() const {
    core::MutexLock lock(&mu_);
    return total_;
  }

 private:
  void Release(const std::string& peer) {
    core::MutexLock lock(&mu_);
    --total_;
    if (auto it = per_peer_.find(peer); it != per_peer_.end() && --it->second == 0) {
      per_peer_.erase(it);
    }
  }

  // The peer holding the most connections ("" with none).
  std::string LargestHolder() const REQUIRES(mu_) {
    std::string largest;
    std::size_t most = 0;
    for (const auto& [peer, count] : per_peer_) {
      if (count > most) {
        most = count;
        largest = peer;
      }
    }
    return largest;
  }

  const HttpLimits limits_;
  mutable core::Mutex mu_;
  std::size_t total_ GUARDED_BY(mu_) = 0;
  std::map<std::string, std::size_t> per_peer_ GUARDED_BY(mu_);
};

struct HttpConnectionFront::Connection {
  Connection(int fd_in, Slots::Slot slot_in) : fd(fd_in), slot(std::move(slot_in)) {}
  ~Connection() {
    if (ssl != nullptr) {
      if (!handshaking && !ssl_failed) SSL_shutdown(ssl);  // best effort: the socket does not block
      SSL_free(ssl);
    }
    close(fd);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const int fd;
  Slots::Slot slot;
  SSL* ssl = nullptr;
  bool handshaking = false;
  bool ssl_failed = false;  // after a fatal TLS error, no close_notify may be sent
  std::string received;     // bytes read and not yet given to cpp-httplib
  core::TimePoint idle_since;
  std::optional<core::TimePoint> request_start;  // the first byte of the request being read
  int requests_left = 0;
  std::string peer;  // the client's address
};

namespace {

using Connection = HttpConnectionFront::Connection;

// A kept-alive connection after an answer: what the client already sent of its next request
// (`rest`) is that request's start, timed from now.
void StartNextRequest(Connection& conn, std::string rest, core::TimePoint now) {
  conn.received = std::move(rest);
  conn.requests_left -= 1;
  conn.idle_since = now;
  conn.request_start.reset();
  if (!conn.received.empty()) conn.request_start = now;
}

// A worker's view of a connection whose request head has arrived: cpp-httplib reads the head
// from what the front received, then the body from the socket, under the request's deadline.
// A body that does not arrive in time is answered with 408 here, and every later read or write
// fails, so cpp-httplib's own answer to the failed read is not sent after it.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(Connection& conn, const core::Clock& clock, const HttpLimits& limits,
                 core::TimePoint deadline)
      : conn_(conn),
        clock_(clock),
        limits_(limits),
        deadline_(deadline),
        head_bytes_(HeadEnd(conn.received).value_or(0)) {}

  bool is_readable() const override {
    if (failed_) return false;
    if (consumed_ < conn_.received.size()) return true;
    if (conn_.ssl != nullptr && SSL_pending(conn_.ssl) > 0) return true;
    return WaitFor(conn_.fd, POLLIN, ReadWait());
  }
  bool is_writable() const override { return !failed_ && WaitFor(conn_.fd, POLLOUT, WriteWait()); }

  ssize_t read(char* ptr, size_t size) override {
    const ssize_t n = ReadSome(ptr, size);
    if (n <= 0) return n;
    // Past the head, every byte is the body's, whatever its framing (a Content-Length over the
    // limit is refused by cpp-httplib before it reads; chunked and length-less bodies are not).
    read_ += static_cast<std::size_t>(n);
    if (read_ > head_bytes_ + limits_.max_body_bytes) return TooLarge();
    return n;
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (failed_) return -1;
    std::size_t done = 0;
    while (done < size) {
      short want = POLLOUT;
      if (conn_.ssl != nullptr) {
        // Retried with the same pointer and length after WANT_*, as OpenSSL requires.
        const int n = SSL_write(conn_.ssl, ptr + done, ClampToInt(size - done));
        if (n > 0) {
          done += static_cast<std::size_t>(n);
          continue;
        }
        const int err = SSL_get_error(conn_.ssl, n);
        if (err == SSL_ERROR_WANT_READ) {
          want = POLLIN;
        } else if (err != SSL_ERROR_WANT_WRITE) {
          return Fail();
        }
      } else {
        const ssize_t n = send(conn_.fd, ptr + done, size - done, MSG_NOSIGNAL);
        if (n >= 0) {
          done += static_cast<std::size_t>(n);
          continue;
        }
        if (errno == EINTR) continue;
        if (!WouldBlock(errno)) return Fail();
      }
      waited_to_write_ = true;
      if (!WaitFor(conn_.fd, want, WriteWait())) return Fail();
    }
    return static_cast<ssize_t>(size);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    std::tie(ip, port) = SocketAddress(conn_.fd, /*local=*/false);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    std::tie(ip, port) = SocketAddress(conn_.fd, /*local=*/true);
  }
  socket_t socket() const override { return conn_.fd; }

  bool failed() const { return failed_; }
  bool timed_out() const { return timed_out_; }
  bool body_too_large() const { return body_too_large_; }
  // The client did not take the answer as fast as it came: it gets no further turn.
  bool waited_to_write() const { return waited_to_write_; }
  // What the client sent beyond the request (the start of a pipelined next one).
  std::string Unread() const { return conn_.received.substr(consumed_); }

 private:
  // The bytes the front already received, then the socket's.
  ssize_t ReadSome(char* ptr, size_t size) {
    if (failed_) return -1;
    if (consumed_ < conn_.received.size()) {
      const std::size_t n = std::min(size, conn_.received.size() - consumed_);
      std::memcpy(ptr, conn_.received.data() + consumed_, n);
      consumed_ += n;
      return static_cast<ssize_t>(n);
    }
    while (true) {
      short want = POLLIN;
      if (conn_.ssl != nullptr) {
        const int n = SSL_read(conn_.ssl, ptr, ClampToInt(size));
        if (n > 0) return n;
        const int err = SSL_get_error(conn_.ssl, n);
        if (err == SSL_ERROR_ZERO_RETURN) return 0;
        if (err == SSL_ERROR_WANT_WRITE) {
          want = POLLOUT;
        } else if (err != SSL_ERROR_WANT_READ) {
          return Fail();
        }
      } else {
        const ssize_t n = recv(conn_.fd, ptr, size, 0);
        if (n >= 0) return n;
        if (errno == EINTR) continue;
        if (!WouldBlock(errno)) return Fail();
      }
      if (!WaitFor(conn_.fd, want, ReadWait())) return TimeOut();
    }
  }

  // Until the deadline, but never longer than the read timeout in one wait.
  core::Duration ReadWait() const {
    return std::min(limits_.read_timeout, deadline_ - clock_.Now());
  }
  // What is left of write_timeout for the whole answer, from its first write.
  core::Duration WriteWait() const {
    if (!write_deadline_) write_deadline_ = clock_.Now() + limits_.write_timeout;
    return *write_deadline_ - clock_.Now();
  }
  ssize_t TooLarge() {
    body_too_large_ = true;
    const std::string answer =
        PlainAnswer(413, ReasonPhrase(413),
                    fmt::format("the request body exceeds {} bytes", limits_.max_body_bytes));
    write(answer.data(), answer.size());
    return Fail();
  }
  ssize_t Fail() {
    failed_ = true;
    if (conn_.ssl != nullptr) conn_.ssl_failed = true;
    return -1;
  }
  ssize_t TimeOut() {
    timed_out_ = true;
    const std::string answer =
        PlainAnswer(408, ReasonPhrase(408), "the request did not arrive in time");
    write(answer.data(), answer.size());
    return Fail();
  }

  Connection& conn_;
  const core::Clock& clock_;
  const HttpLimits& limits_;
  const core::TimePoint deadline_;
  const std::size_t head_bytes_;
  std::size_t consumed_ = 0;
  std::size_t read_ = 0;  // bytes given to cpp-httplib, head included
  mutable std::optional<core::TimePoint> write_deadline_;
  bool failed_ = false;
  bool timed_out_ = false;
  bool body_too_large_ = false;
  bool waited_to_write_ = false;
};

enum class ReadOutcome { kOpen, kClosed };

}  // namespace

HttpConnectionFront::HttpConnectionFront(const HttpLimits& limits, SSL_CTX* tls,
                                         const core::Clock* clock, ServeRequest serve)
    : limits_(limits),
      tls_(tls),
      clock_(clock),
      serve_(std::move(serve)),
      slots_(std::make_shared<Slots>(limits)) {}

HttpConnectionFront::~HttpConnectionFront() { Shutdown(); }

void HttpConnectionFront::Start() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  workers_ = std::make_unique<httplib::ThreadPool>(static_cast<std::size_t>(limits_.workers));
  waiter_ = std::thread([this] { WaitLoop(); });
}

void HttpConnectionFront::Shutdown() {
  if (stopping_.exchange(true)) return;
  if (waiter_.joinable()) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
    waiter_.join();
  }
  if (workers_) workers_->shutdown();
  {
    core::MutexLock lock(&mu_);
    arriving_.clear();
  }
  if (wake_fd_ >= 0) close(wake_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

std::size_t HttpConnectionFront::open_connections() const { return slots_->open(); }

void HttpConnectionFront::Adopt(int fd) {
  counters_.accepted.fetch_add(1, std::memory_order_relaxed);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  // Small answers on a kept-alive connection otherwise wait for the client's delayed ACK
  // (~40 ms each): the controller polls every agent every period on one connection.
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::string peer = SocketAddress(fd, /*local=*/false).first;
  std::string evict;
  auto slot = Slots::Take(slots_, peer, &evict);
  if (auto* refusal = std::get_if<std::string>(&slot)) {
    counters_.refused_connection_limit.fetch_add(1, std::memory_order_relaxed);
    const std::string answer = PlainAnswer(503, ReasonPhrase(503), *refusal);
    [[maybe_unused]] const ssize_t n =
        send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    close(fd);
    return;
  }
  auto conn = std::make_shared<Connection>(fd, std::move(std::get<Slots::Slot>(slot)));
  conn->idle_since = clock_->Now();
  conn->requests_left = limits_.max_requests_per_connection;
  conn->peer = std::move(peer);
  if (tls_ != nullptr) {
    conn->ssl = SSL_new(tls_);
    if (conn->ssl == nullptr || SSL_set_fd(conn->ssl, fd) != 1) return;  // closes it
    SSL_set_accept_state(conn->ssl);
    conn->handshaking = true;
    conn->request_start = conn->idle_since;  // the handshake counts against the deadline
  }
  {
    core::MutexLock lock(&mu_);
    if (stopping_) return;
    arriving_.push_back(std::move(conn));
    if (!evict.empty()) evict_.push_back(std::move(evict));
  }
  const std::uint64_t wake = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &wake, sizeof wake);
}

void HttpConnectionFront::Evict() {
  std::vector<std::string> peers;
  {
    core::MutexLock lock(&mu_);
    peers.swap(evict_);
  }
  for (const std::string& peer : peers) {
    // Its oldest connection still waiting for a head; none when all of them are with workers.
    const ConnectionPtr* oldest = nullptr;
    for (const auto& [fd, conn] : waiting_) {
      if (conn->peer == peer && (oldest == nullptr || conn->idle_since < (*oldest)->idle_since)) {
        oldest = &conn;
      }
    }
    if (oldest == nullptr) continue;
    counters_.evicted.fetch_add(1, std::memory_order_relaxed);
    const ConnectionPtr victim = *oldest;
    Refuse(*victim, 503, "closed to make room for another address's connection");
    Forget(victim->fd);
  }
}

void HttpConnectionFront::WaitLoop() {
  constexpr int kMaxEvents = 64;
  constexpr auto kSweepEvery = std::chrono::milliseconds(50);
  epoll_event events[kMaxEvents];
  core::TimePoint last_sweep = clock_->Now();
  while (!stopping_) {
    const int n = epoll_wait(epoll_fd_, events, kMaxEvents, static_cast<int>(kSweepEvery.count()));
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_fd_) {
        std::uint64_t count = 0;
        [[maybe_unused]] const ssize_t r = ::read(wake_fd_, &count, sizeof count);
        continue;
      }
      if (auto it = waiting_.find(fd); it != waiting_.end()) {
        const ConnectionPtr conn = it->second;
        OnReadable(conn);
      }
    }
    std::vector<ConnectionPtr> arrived;
    {
      core::MutexLock lock(&mu_);
      arrived.swap(arriving_);
    }
    for (const ConnectionPtr& conn : arrived) {
      Watch(conn);
      OnReadable(conn);  // bytes already received, or a TLS record OpenSSL holds
    }
    Evict();
    if (!deferred_.empty()) RunDeferred();
    if (const core::TimePoint now = clock_->Now(); now - last_sweep >= kSweepEvery) {
      last_sweep = now;
      Sweep();
    }
  }
  waiting_.clear();
  deferred_.clear();
}

void HttpConnectionFront::Watch(const ConnectionPtr& conn) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = conn->fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, conn->fd, &ev) != 0) return;
  waiting_[conn->fd] = conn;
}

void HttpConnectionFront::Forget(int fd) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  waiting_.erase(fd);
}

namespace {

// Reads what the connection has without blocking, until the head is complete or larger than
// `max_head`: the body, if any, is left for the worker.
ReadOutcome ReadAvailable(Connection& conn, std::size_t max_head, core::TimePoint now) {
  char buf[4096];
  while (true) {
    if (conn.handshaking) {
      const int r = SSL_accept(conn.ssl);
      if (r == 1) {
        conn.handshaking = false;
        continue;
      }
      const int err = SSL_get_error(conn.ssl, r);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return ReadOutcome::kOpen;
      conn.ssl_failed = true;
      return ReadOutcome::kClosed;
    }
    if (conn.received.size() > max_head || HeadEnd(conn.received)) return ReadOutcome::kOpen;
    std::size_t got = 0;
    if (conn.ssl != nullptr) {
      const int n = SSL_read(conn.ssl, buf, sizeof buf);
      if (n <= 0) {
        const int err = SSL_get_error(conn.ssl, n);
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return ReadOutcome::kOpen;
        if (err != SSL_ERROR_ZERO_RETURN) conn.ssl_failed = true;
        return ReadOutcome::kClosed;
      }
      got = static_cast<std::size_t>(n);
    } else {
      const ssize_t n = recv(conn.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n == 0) return ReadOutcome::kClosed;
      if (n < 0) {
        if (errno == EINTR) continue;
        return WouldBlock(errno) ? ReadOutcome::kOpen : ReadOutcome::kClosed;
      }
      got = static_cast<std::size_t>(n);
    }
    if (!conn.request_start) conn.request_start = now;
    conn.received.append(buf, got);
  }
}

}  // namespace

void HttpConnectionFront::OnReadable(const ConnectionPtr& conn) {
  if (ReadAvailable(*conn, limits_.max_head_bytes, clock_->Now()) == ReadOutcome::kClosed) {
    Forget(conn->fd);
    return;
  }
  // Health probes are answered here, one after the other, until a request needs a worker.
  while (true) {
    const std::optional<std::size_t> end = HeadEnd(conn->received);
    const std::string_view head =
        std::string_view(conn->received).substr(0, end.value_or(conn->received.size()));
    if (BareLineFeeds(head)) {
      counters_.bad_line_ends.fetch_add(1, std::memory_order_relaxed);
      Refuse(*conn, 400, "the request's line ends must be CRLF");
      Forget(conn->fd);
      return;
    }
    if (end && *end <= limits_.max_head_bytes) {
      const Health health = AnswerHealth(*conn, *end);
      if (health == Health::kAnswered) continue;
      if (health == Health::kClosed) {
        Forget(conn->fd);
      } else {
        Dispatch(conn);
      }
    } else if (conn->received.size() > limits_.max_head_bytes) {
      counters_.head_too_large.fetch_add(1, std::memory_order_relaxed);
      Refuse(*conn, 431,
             fmt::format("the request line and headers exceed {} bytes", limits_.max_head_bytes));
      Forget(conn->fd);
    }
    return;
  }
}

HttpConnectionFront::Health HttpConnectionFront::AnswerHealth(Connection& conn,
                                                              std::size_t head_end) {
  const std::string_view head = std::string_view(conn.received).substr(0, head_end);
  if (!health_ || !IsHealthProbe(head)) return Health::kNotAProbe;
  counters_.health_answers.fetch_add(1, std::memory_order_relaxed);
  const auto [status, body] = health_();
  const bool close = AsksToClose(head) || conn.requests_left <= 1 || stopping_;
  const std::string answer = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}\r\n{}", status,
      ReasonPhrase(status), body.size(), close ? "Connection: close\r\n" : "", body);
  // Written without waiting: a client that cannot take ~100 bytes at once loses its connection.
  bool written = false;
  if (conn.ssl == nullptr) {
    const ssize_t n = send(conn.fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    written = n == static_cast<ssize_t>(answer.size());
  } else {
    const int n = SSL_write(conn.ssl, answer.data(), ClampToInt(answer.size()));
    written = n == ClampToInt(answer.size());
    if (!written) conn.ssl_failed = true;  // a half-written record cannot be closed cleanly
  }
  if (!written || close) return Health::kClosed;
  StartNextRequest(conn, conn.received.substr(head_end), clock_->Now());
  return Health::kAnswered;
}

void HttpConnectionFront::Sweep() {
  const core::TimePoint now = clock_->Now();
  std::vector<int> done;
  for (const auto& [fd, conn] : waiting_) {
    if (conn->request_start) {
      if (now - *conn->request_start > limits_.request_deadline) {
        counters_.timed_out.fetch_add(1, std::memory_order_relaxed);
        Refuse(*conn, 408,
               fmt::format("the request did not arrive within {:.1f} s",
                           core::ToSeconds(limits_.request_deadline)));
        done.push_back(fd);
      }
    } else if (now - conn->idle_since > limits_.idle_timeout) {
      done.push_back(fd);
    }
  }
  for (const int fd : done) Forget(fd);
}

void HttpConnectionFront::Refuse(Connection& conn, int status, const std::string& message) {
  const std::string answer = PlainAnswer(status, ReasonPhrase(status), message);
  if (conn.ssl == nullptr) {
    [[maybe_unused]] const ssize_t n =
        send(conn.fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  } else if (!conn.handshaking && !conn.ssl_failed) {
    SSL_write(conn.ssl, answer.data(), ClampToInt(answer.size()));  // best effort, non-blocking
  }
}

void HttpConnectionFront::Dispatch(const ConnectionPtr& conn) {
  Forget(conn->fd);  // the worker owns it now; it comes back through arriving_ if kept alive
  {
    core::MutexLock lock(&mu_);
    int& busy = busy_[conn->peer];
    if (busy >= limits_.max_workers_per_peer) {
      deferred_.push_back(conn);  // its peer holds its share of the workers: it waits its turn
      return;
    }
    ++busy;
  }
  workers_->enqueue([this, conn] { Work(conn); });
}

void HttpConnectionFront::RunDeferred() {
  const core::TimePoint now = clock_->Now();
  std::vector<ConnectionPtr> waiting;
  waiting.swap(deferred_);
  for (const ConnectionPtr& conn : waiting) {
    if (conn->request_start && now - *conn->request_start > limits_.request_deadline) {
      counters_.busy_peer.fetch_add(1, std::memory_order_relaxed);
      Refuse(*conn, 503, "too many requests from this address at once");
      continue;
    }
    Dispatch(conn);  // dispatched, or deferred again
  }
}

void HttpConnectionFront::ReleaseWorker(const Connection& conn) {
  {
    core::MutexLock lock(&mu_);
    if (auto it = busy_.find(conn.peer); it != busy_.end() && --it->second <= 0) busy_.erase(it);
  }
  // A request of the same peer may be waiting for this worker (deferred_).
  const std::uint64_t wake = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &wake, sizeof wake);
}

void HttpConnectionFront::Work(const ConnectionPtr& conn) {
  DeadlineStream stream(*conn, *clock_, limits_,
                        conn->request_start.value_or(clock_->Now()) + limits_.request_deadline);
  const bool last = conn->requests_left <= 1 || stopping_;
  bool client_closed = false;
  const bool served = serve_(stream, last, client_closed);
  ReleaseWorker(*conn);
  if (stream.timed_out()) counters_.timed_out.fetch_add(1, std::memory_order_relaxed);
  if (stream.body_too_large()) counters_.body_too_large.fetch_add(1, std::memory_order_relaxed);
  if (!served || client_closed || last || stream.failed() || stream.waited_to_write()) {
    return;  // closes it
  }
  StartNextRequest(*conn, stream.Unread(), clock_->Now());
  {
    core::MutexLock lock(&mu_);
    if (stopping_) return;
    arriving_.push_back(conn);
  }
  const std::uint64_t wake = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &wake, sizeof wake);
}

}  // namespace headroom::service
