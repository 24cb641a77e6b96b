// The connection front of the daemons' HTTP servers: what stands between a client and a worker.
//
// cpp-httplib 0.11 (Debian 12) gives each connection a worker thread from the moment it is
// accepted, and its timeouts are per read: a client sending one header byte a second holds a
// worker forever, so a few dozen such clients starve /healthz and the controller's poll. No
// Debian-packaged HTTP library of the set we use offers an event-driven front, so this one is
// written here, and stays small: one thread waits on every connection with epoll until a
// request's head (request line and headers) has fully arrived, and only then hands the
// connection to a worker, which lets cpp-httplib parse, route and answer it (HttpFrontServer).
// What a client can cost the daemon is bounded (HttpLimits, docs/deploy.md "Limits"):
//   - a connection is refused with 503 beyond `max_connections_per_peer` from one address, or
//     beyond `max_connections` unless its address holds fewer than the largest holder, one of
//     whose connections still waiting for a head is then closed (503) to make room;
//   - a connection silent for `idle_timeout` before a request is closed;
//   - a request whose head is not complete within `request_deadline` of its first byte, or whose
//     body is not (or that falls silent for `read_timeout`), gets 408 and the connection closes;
//   - a head larger than `max_head_bytes` gets 431, a head with bare LF line ends 400 (cpp-httplib
//     would read on past it in a worker);
//   - a body larger than `max_body_bytes` gets 413, whatever its framing (chunked, or no length);
//   - a worker waits at most `write_timeout` in all for a client to take an answer, and a client
//     that made it wait loses its connection after that answer (no more pipelined turns);
//   - one address holds at most `max_workers_per_peer` workers at once: its other complete
//     requests wait (503 after `request_deadline`), so the rest stay free for everyone else;
//   - GET /healthz is answered by the waiting thread itself (SetHealth), never by a worker, so
//     that a liveness probe cannot fail because the workers are busy.
// TLS connections are handshaken by the same thread, without blocking, inside the same deadline.
#ifndef HEADROOM_SERVICE_HTTP_CONNECTIONS_H_
#define HEADROOM_SERVICE_HTTP_CONNECTIONS_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <openssl/types.h>

#include "core/thread_annotations.h"
#include "core/time.h"

namespace httplib {
class Stream;
class ThreadPool;
}  // namespace httplib

namespace headroom::service {

struct HttpLimits {
  int workers = 8;
  std::size_t max_connections = 512;  // below the default 1024 open files of a systemd service
  std::size_t max_connections_per_peer = 64;
  std::size_t max_head_bytes = 16 * 1024;
  std::size_t max_body_bytes = 64 * 1024;  // a caps request is ~200 bytes
  int max_requests_per_connection = 100;
  int max_workers_per_peer = 4;
  core::Duration idle_timeout = std::chrono::seconds(2);
  core::Duration request_deadline = std::chrono::seconds(5);
  core::Duration read_timeout = std::chrono::seconds(1);
  core::Duration write_timeout = std::chrono::seconds(2);
};

// What the front has refused or cut since it started; read from any thread.
struct HttpFrontCounters {
  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::uint64_t> refused_connection_limit{0};
  std::atomic<std::uint64_t> timed_out{0};
  std::atomic<std::uint64_t> head_too_large{0};
  std::atomic<std::uint64_t> bad_line_ends{0};
  std::atomic<std::uint64_t> body_too_large{0};
  std::atomic<std::uint64_t> busy_peer{0};  // waited past request_deadline for a worker
  std::atomic<std::uint64_t> health_answers{0};
  std::atomic<std::uint64_t> evicted{0};  // closed to make room for a smaller holder
};

// The status and JSON body of GET /healthz, computed without blocking.
using HealthAnswer = std::function<std::pair<int, std::string>()>;

// Serves one request whose head is on `stream`; `close_connection` asks it to close after the
// answer. Returns false when the connection cannot serve another request; sets
// `connection_closed` when the client asked to close.
using ServeRequest =
    std::function<bool(httplib::Stream& stream, bool close_connection, bool& connection_closed)>;

class HttpConnectionFront {
 public:
  // `tls` (may be null: plain HTTP) and `clock` outlive the front.
  HttpConnectionFront(const HttpLimits& limits, SSL_CTX* tls, const core::Clock* clock,
                      ServeRequest serve);
  ~HttpConnectionFront();
  HttpConnectionFront(const HttpConnectionFront&) = delete;
  HttpConnectionFront& operator=(const HttpConnectionFront&) = delete;

  // GET /healthz answered by the waiting thread. REQUIRES: before Start().
  void SetHealth(HealthAnswer health) { health_ = std::move(health); }
  // Starts the waiting thread and the workers.
  void Start();
  // Takes ownership of an accepted socket (thread-safe): refused with 503 at once when a
  // connection limit is reached, otherwise waited on.
  void Adopt(int fd);
  // Closes every connection, lets the workers finish the requests they hold, joins the threads.
  void Shutdown();

  const HttpFrontCounters& counters() const { return counters_; }
  std::size_t open_connections() const;

  struct Connection;

 private:
  using ConnectionPtr = std::shared_ptr<Connection>;

  void WaitLoop();
  void Watch(const ConnectionPtr& conn);
  void OnReadable(const ConnectionPtr& conn);
  enum class Health { kNotAProbe, kAnswered, kClosed };
  // Answers a GET /healthz head ending at `head_end` here, without a worker.
  Health AnswerHealth(Connection& conn, std::size_t head_end);
  // Dispatches the deferred connections whose peer has a worker free again; refuses those that
  // waited past the request deadline.
  void RunDeferred();
  // Closes the oldest connection waiting for a head of each peer named in evict_.
  void Evict() EXCLUDES(mu_);
  void Forget(int fd);
  void Sweep();
  void Dispatch(const ConnectionPtr& conn);
  void Work(const ConnectionPtr& conn);
  // Gives back the worker share of conn's peer and wakes the waiting thread.
  void ReleaseWorker(const Connection& conn) EXCLUDES(mu_);
  void Refuse(Connection& conn, int status, const std::string& message);

  // Connection slots per peer address, taken on Adopt() and given back when a connection closes.
  class Slots;

  const HttpLimits limits_;
  SSL_CTX* const tls_;
  const core::Clock* const clock_;
  const ServeRequest serve_;
  HealthAnswer health_;
  HttpFrontCounters counters_;
  std::shared_ptr<Slots> slots_;

  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread waiter_;
  std::unique_ptr<httplib::ThreadPool> workers_;

  core::Mutex mu_;
  // Connections handed to the waiting thread: new ones and those back from a worker.
  std::vector<ConnectionPtr> arriving_ GUARDED_BY(mu_);
  // Worker turns each peer address holds now.
  std::map<std::string, int> busy_ GUARDED_BY(mu_);
  // Peers that must give up a connection for a smaller holder's (Slots::Take).
  std::vector<std::string> evict_ GUARDED_BY(mu_);
  // Only the waiting thread touches these: connections waiting for their request's head, and
  // those with a complete head waiting for their peer's worker share.
  std::map<int, ConnectionPtr> waiting_;
  std::vector<ConnectionPtr> deferred_;
};

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_HTTP_CONNECTIONS_H_
