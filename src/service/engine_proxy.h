// EngineProxy: a small reverse proxy in front of a serving engine (vLLM's OpenAI-compatible HTTP
// API), so that the node agent learns when a prompt waits for its prefill, which the engine's
// Prometheus metrics cannot tell it in time: a generation request's arrival raises the GPU's clock,
// and the first bytes of its answer (the first token of a streamed answer) let it drop again.
// Every request is forwarded as it came (hop-by-hop headers aside; the engine is asked for an
// uncompressed answer), each on a connection of its own, and the engine's answer is streamed back
// as it arrives. Before it stops, its owner may drain it (Drain()): new requests are refused with
// a 503 that a load balancer retries elsewhere, while the answers under way go on to their end,
// so that restarting the agent need not cut answers mid-stream. Thread-safe: Bind(), Drain(),
// Stop(), running(), in_flight() and counters() may be called from any thread; Serve() blocks
// the calling thread until Stop().
#ifndef HEADROOM_SERVICE_ENGINE_PROXY_H_
#define HEADROOM_SERVICE_ENGINE_PROXY_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/thread_annotations.h"
#include "core/time.h"
#include "service/http_server.h"

namespace headroom::service {

// What the proxy tells its owner about generation requests (the agent's clock boost). Called from
// the proxy's threads (its workers and the threads that call the engine), concurrently.
class PromptSignal {
 public:
  virtual ~PromptSignal() = default;
  // Before the request is sent to the engine.
  virtual void PromptArrived() = 0;
  // Exactly once per PromptArrived(), at the first of: the first body bytes of the engine's answer
  // (a streamed answer's first token; a whole answer's end), the engine failing or timing out, the
  // client going away while its answer streams, the proxy stopping.
  virtual void FirstTokenLeft() = 0;
};

// The requests that carry a prompt: POSTs to these paths (vLLM's OpenAI-compatible API).
inline constexpr std::array<std::string_view, 3> kGenerationPaths = {
    "/v1/completions", "/v1/chat/completions", "/v1/responses"};

// The largest request body the proxy takes (413 beyond): a prompt of a 128k-token context is
// about 0.5 MiB of text, a chat with inline images a few MiB.
inline constexpr std::size_t kEngineProxyMaxBodyBytes = 16 * 1024 * 1024;

// "http(s)://HOST[:PORT][/]" -> the same without the slash; kInvalidArgument saying what is wrong.
[[nodiscard]] core::Result<std::string> EngineBaseUrl(const std::string& url);

// The most workers a proxy may be given (each a thread).
inline constexpr int kMaxEngineProxyWorkers = 4096;

struct EngineProxyOptions {
  // The engine's base URL: http(s)://HOST[:PORT], no path ("http://127.0.0.1:8000").
  std::string upstream;
  // Concurrent requests it can hold (each streaming answer holds one worker thread).
  int workers = 256;
  core::Duration connect_timeout = std::chrono::seconds(5);
  // How long the engine may stay silent: before its answer's head (a long non-streamed answer
  // comes whole at its end) and between two pieces of its body.
  core::Duration read_timeout = std::chrono::minutes(10);
  // How long an idle client connection is kept open for its next request (uvicorn's default,
  // which the engine's clients already expect). Also how long Stop() may wait for such a
  // connection to close.
  core::Duration keep_alive_timeout = std::chrono::seconds(5);
};

// Counted since the start, for the agent's /metrics.
struct EngineProxyCounters {
  std::atomic<std::uint64_t> requests{0};             // every request forwarded
  std::atomic<std::uint64_t> generation_requests{0};  // those that carried a prompt
  // The engine unreachable, silent past a timeout, or breaking an answer midway.
  std::atomic<std::uint64_t> upstream_failures{0};
  std::atomic<std::uint64_t> refused_draining{0};  // answered 503 while the proxy drained
};

class EngineProxy {
 public:
  // kInvalidArgument for a bad upstream URL or worker count (saying which and why).
  // REQUIRES: signal outlives the proxy.
  [[nodiscard]] static core::Result<std::unique_ptr<EngineProxy>> Create(EngineProxyOptions options,
                                                                         PromptSignal* signal);
  // REQUIRES: Serve() has returned (or was never called).
  ~EngineProxy();
  EngineProxy(const EngineProxy&) = delete;
  EngineProxy& operator=(const EngineProxy&) = delete;

  // Binds the socket; returns the bound port (the chosen one when address.port is 0).
  [[nodiscard]] core::Result<int> Bind(const ListenAddress& address);
  // Serves until Stop(); returns once every worker has finished (open streams are cut).
  // REQUIRES: Bind() succeeded.
  void Serve();
  // True once Serve() accepts connections (Stop() before that would be lost).
  bool running() const;
  // From now on refuses every new request (503, its connection closed); the requests under way go
  // on. Stop() ends them.
  void Drain();
  // Requests under way: from their arrival to their answer's last byte or its cut.
  int in_flight() const { return in_flight_.load(); }
  void Stop();

  const EngineProxyCounters& counters() const { return counters_; }
  // The counters as Prometheus text (headroom_engine_proxy_*), for the agent's /metrics.
  std::string Metrics() const;

 private:
  EngineProxy(EngineProxyOptions options, PromptSignal* signal);
  void Forward(const httplib::Request& req, httplib::Response& res);
  // Counts an upstream failure and logs the first of each kind only: an engine that is down
  // would otherwise log once per request.
  void RecordFailure(const std::string& kind, const std::string& message) EXCLUDES(mu_);

  const EngineProxyOptions options_;
  PromptSignal* const signal_;
  std::unique_ptr<httplib::Server> server_;
  EngineProxyCounters counters_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> draining_{false};
  std::atomic<int> in_flight_{0};
  core::Mutex mu_;
  std::set<std::string> logged_failures_ GUARDED_BY(mu_);
};

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_ENGINE_PROXY_H_
