#include "service/engine_proxy.h"

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/check.h"
#include "core/error.h"
#include "core/parse.h"
#include "service/http_client.h"
#include "telemetry/prometheus_text.h"

namespace headroom::service {
namespace {

using std::chrono::milliseconds;

// How often a worker waiting on the engine looks whether the proxy is stopping: how late Stop()
// may cut an open stream.
constexpr milliseconds kStopPollInterval{50};

// How much of an answer may wait between the engine and a slow client before the proxy stops
// reading from the engine (an SSE event of one token is ~200 bytes).
constexpr std::size_t kMaxBufferedBytes = 1024 * 1024;

// Headers that describe one connection, not the message (RFC 9110 §7.6.1), plus the ones a
// connection names in its own Connection header.
constexpr std::string_view kHopByHop[] = {"Connection",
                                          "Keep-Alive",
                                          "Proxy-Authenticate",
                                          "Proxy-Authorization",
                                          "Proxy-Connection",
                                          "TE",
                                          "Trailer",
                                          "Transfer-Encoding",
                                          "Upgrade"};

// Request headers the proxy does not pass on: the engine's client sets Host and Content-Length
// for its own connection; the body was already decoded and any 100-continue answered by the
// proxy's server; Accept-Encoding is the proxy's own (EngineRequest); cpp-httplib's server adds
// the REMOTE_/LOCAL_ ones to every request it reads.
constexpr std::string_view kNotForwarded[] = {"Host",        "Content-Length",  "Content-Encoding",
                                              "Expect",      "Accept-Encoding", "REMOTE_ADDR",
                                              "REMOTE_PORT", "LOCAL_ADDR",      "LOCAL_PORT"};

// Every path, newlines included (a decoded %0A): the proxy has one handler for all.
constexpr const char* kAnyPath = R"([\s\S]*)";

bool SameName(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

template <typename Names>
bool Listed(const Names& names, std::string_view name) {
  return std::any_of(std::begin(names), std::end(names),
                     [name](std::string_view listed) { return SameName(listed, name); });
}

// The header names a message's Connection headers list ("Connection: close, X-Trace").
std::vector<std::string> ConnectionTokens(const httplib::Headers& headers) {
  std::vector<std::string> tokens;
  const auto [first, last] = headers.equal_range("Connection");
  for (auto it = first; it != last; ++it) {
    std::string token;
    for (const char c : it->second + ",") {
      if (c == ',') {
        if (!token.empty()) tokens.push_back(token);
        token.clear();
      } else if (c != ' ' && c != '\t') {
        token += c;
      }
    }
  }
  return tokens;
}

// The message's end-to-end headers, less `also_dropped`.
template <typename Names>
httplib::Headers EndToEndHeaders(const httplib::Headers& headers, const Names& also_dropped) {
  const std::vector<std::string> tokens = ConnectionTokens(headers);
  httplib::Headers kept;
  for (const auto& [name, value] : headers) {
    if (Listed(kHopByHop, name) || Listed(tokens, name) || Listed(also_dropped, name)) continue;
    kept.emplace(name, value);
  }
  return kept;
}

// Why the engine call failed, in words for the 502's body and the log.
std::string DescribeFailure(httplib::Error error, const EngineProxyOptions& options) {
  switch (error) {
    case httplib::Error::Connection:
      return "cannot connect (is the engine running and listening there?)";
    case httplib::Error::ConnectionTimeout:
      return fmt::format("no connection within {:.0f} s", core::ToSeconds(options.connect_timeout));
    case httplib::Error::Read:
      return fmt::format("the answer broke off, or the engine was silent for {:.0f} s",
                         core::ToSeconds(options.read_timeout));
    case httplib::Error::Write:
      return "the request could not be sent (the engine closed the connection)";
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
      return fmt::format("TLS failed ({})", httplib::to_string(error));
    default:
      return fmt::format("the call failed ({})", httplib::to_string(error));
  }
}

bool IsGeneration(const httplib::Request& req) {
  return req.method == "POST" && Listed(kGenerationPaths, req.path);
}

// An answer that has no body whatever its headers say (RFC 9110 §6.4.1).
bool HasNoBody(const std::string& method, int status) {
  return method == "HEAD" || (status >= 100 && status < 200) || status == 204 || status == 304;
}

// Calls FirstTokenLeft() once for the PromptArrived() its construction made: at Release(), or at
// its end at the latest, so that a prompt never holds the clock high for ever.
class PromptGuard {
 public:
  // `signal` null: the request carries no prompt, nothing is signalled.
  explicit PromptGuard(PromptSignal* signal) : signal_(signal) {
    if (signal_ != nullptr) signal_->PromptArrived();
  }
  ~PromptGuard() { Release(); }
  PromptGuard(const PromptGuard&) = delete;
  PromptGuard& operator=(const PromptGuard&) = delete;

  void Release() {
    if (signal_ != nullptr && !released_.exchange(true)) signal_->FirstTokenLeft();
  }

 private:
  PromptSignal* const signal_;
  std::atomic<bool> released_{false};
};

// The engine's answer as the worker receives it: its head, then its body piece by piece.
struct AnswerHead {
  int status = 0;
  httplib::Headers headers;  // end to end, with Content-Type and without Content-Length
};
enum class HeadState { kWaiting, kReady, kFailed };
enum class BodyState { kPiece, kEnd, kFailed, kWaiting };

// One request's trip to the engine. The engine is called on a thread of the exchange's own,
// which hands the answer's head and body pieces (at most kMaxBufferedBytes waiting) to the
// worker; the worker and its response's content provider share the exchange, and its end
// cancels the call and joins the thread. Thread-safe.
class Exchange {
 public:
  // `signal` null: no prompt. Signals PromptArrived() here, before the engine is called.
  Exchange(std::unique_ptr<httplib::Client> client, httplib::Request request, PromptSignal* signal)
      : client_(std::move(client)), request_(std::move(request)), prompt_(signal) {}
  ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  void Start() {
    thread_ = std::thread([this] { Call(); });
  }
  // Waits at most `wait` for the answer's head.
  HeadState WaitForHead(milliseconds wait);
  // REQUIRES: WaitForHead() returned kReady.
  const AnswerHead& head() const { return head_; }
  // Takes the next body piece into `piece`, waiting at most `wait` for it.
  BodyState NextPiece(std::string& piece, milliseconds wait);
  // Why the call failed. REQUIRES: a kFailed state was returned.
  httplib::Error error() const { return error_; }

 private:
  void Call();
  bool TakeHead(const httplib::Response& answer);
  bool TakePiece(const char* data, size_t length);
  void Finish(bool ok, httplib::Error error, const httplib::Response& answer);

  const std::unique_ptr<httplib::Client> client_;
  httplib::Request request_;  // moved to the calling thread
  PromptGuard prompt_;
  std::thread thread_;

  std::mutex mu_;
  std::condition_variable changed_;
  // Guarded by mu_:
  bool head_ready_ = false;
  bool done_ = false;       // the call returned
  bool cancelled_ = false;  // the worker no longer wants the answer
  AnswerHead head_;         // written once, before head_ready_
  httplib::Error error_ = httplib::Error::Success;
  std::deque<std::string> pieces_;
  std::size_t buffered_bytes_ = 0;
};

void Exchange::Call() {
  httplib::Request request = std::move(request_);
  request.response_handler = [this](const httplib::Response& answer) { return TakeHead(answer); };
  request.content_receiver = [this](const char* data, size_t length, uint64_t, uint64_t) {
    return TakePiece(data, length);
  };
  httplib::Response answer;
  httplib::Error error = httplib::Error::Success;
  const bool ok = client_->send(request, answer, error);
  // The call is over, whatever its end: the prompt is no longer waiting.
  prompt_.Release();
  Finish(ok, error, answer);
}

bool Exchange::TakeHead(const httplib::Response& answer) {
  std::lock_guard<std::mutex> lock(mu_);
  head_.status = answer.status;
  head_.headers = EndToEndHeaders(answer.headers, std::array{"Content-Length"});
  head_ready_ = true;
  changed_.notify_all();
  return !cancelled_;
}

bool Exchange::TakePiece(const char* data, size_t length) {
  // The first body bytes: a streamed answer's first token, the prompt prefilled.
  prompt_.Release();
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [this] { return cancelled_ || buffered_bytes_ < kMaxBufferedBytes; });
  if (cancelled_) return false;
  pieces_.emplace_back(data, length);
  buffered_bytes_ += length;
  changed_.notify_all();
  return true;
}

void Exchange::Finish(bool ok, httplib::Error error, const httplib::Response& answer) {
  std::lock_guard<std::mutex> lock(mu_);
  // cpp-httplib calls no response handler for a HEAD request or a 204: the head comes here.
  if (ok && !head_ready_) {
    head_.status = answer.status;
    head_.headers = EndToEndHeaders(answer.headers, std::array{"Content-Length"});
    head_ready_ = true;
  }
  error_ = ok ? httplib::Error::Success : error;
  done_ = true;
  changed_.notify_all();
}

HeadState Exchange::WaitForHead(milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait_for(lock, wait, [this] { return head_ready_ || done_; });
  if (head_ready_) return HeadState::kReady;
  return done_ ? HeadState::kFailed : HeadState::kWaiting;
}

BodyState Exchange::NextPiece(std::string& piece, milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait_for(lock, wait, [this] { return !pieces_.empty() || done_; });
  if (!pieces_.empty()) {
    piece = std::move(pieces_.front());
    pieces_.pop_front();
    buffered_bytes_ -= piece.size();
    changed_.notify_all();
    return BodyState::kPiece;
  }
  if (!done_) return BodyState::kWaiting;
  return error_ == httplib::Error::Success ? BodyState::kEnd : BodyState::kFailed;
}

Exchange::~Exchange() {
  if (!thread_.joinable()) return;
  std::unique_lock<std::mutex> lock(mu_);
  cancelled_ = true;
  changed_.notify_all();
  // A call blocked reading a silent engine only returns when its socket is shut; a stop() that
  // lands before the call has its socket does nothing, hence the retries.
  while (!done_) {
    lock.unlock();
    client_->stop();
    lock.lock();
    changed_.wait_for(lock, kStopPollInterval, [this] { return done_; });
  }
  lock.unlock();
  thread_.join();
}

// A request under way, counted from its arrival until its last owner (the handler, or the
// provider streaming its answer) lets go.
class InFlight {
 public:
  explicit InFlight(std::atomic<int>& count) : count_(count) { ++count_; }
  ~InFlight() { --count_; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  std::atomic<int>& count_;
};

std::unique_ptr<httplib::Client> EngineClient(const EngineProxyOptions& options) {
  auto client = std::make_unique<httplib::Client>(options.upstream);
  ConfigureHttpClient(*client, options.connect_timeout, /*ca_file=*/"");
  client->set_read_timeout(options.read_timeout);
  // One connection per request, closed after it: a pool would save a local handshake per
  // prompt at the cost of connections left to the engine's keep-alive rules.
  client->set_keep_alive(false);
  // The client's path and query string, and the engine's body, go through as they were written.
  client->set_url_encode(false);
  client->set_decompress(false);
  return client;
}

httplib::Request EngineRequest(const httplib::Request& req) {
  httplib::Request forwarded;
  forwarded.method = req.method;
  forwarded.path = req.target;  // still percent-encoded, with its query string
  forwarded.body = req.body;
  forwarded.headers = EndToEndHeaders(req.headers, kNotForwarded);
  // An engine that compressed a stream would hold its events in the compressor's buffer, and the
  // first token with them: the proxy asks for the answer as it is made.
  forwarded.headers.emplace("Accept-Encoding", "identity");
  std::string forwarded_for = req.get_header_value("X-Forwarded-For");
  forwarded.headers.erase("X-Forwarded-For");
  forwarded_for += (forwarded_for.empty() ? "" : ", ") + req.remote_addr;
  forwarded.headers.emplace("X-Forwarded-For", forwarded_for);
  return forwarded;
}

}  // namespace

core::Result<std::string> EngineBaseUrl(const std::string& url) {
  auto bad = [&url](std::string_view why) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("engine URL '{}': {} (expected http://HOST[:PORT] or https://HOST[:PORT], e.g. "
                    "http://127.0.0.1:8000)",
                    url, why)));
  };
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return bad("no scheme");
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") return bad(fmt::format("scheme '{}'", scheme));
  std::string authority = url.substr(scheme_end + 3);
  if (!authority.empty() && authority.back() == '/') authority.pop_back();
  if (authority.find_first_of("/?#") != std::string::npos) {
    return bad("a path, query or fragment (the proxy forwards each request's own path)");
  }
  if (authority.find_first_of("@ \t") != std::string::npos) return bad("user info or spaces");
  // An IPv6 address is bracketed: its colons are not the port's.
  const size_t host_end = authority.starts_with('[') ? authority.find(']') + 1 : 0;
  const size_t colon = authority.find(':', host_end);
  const std::string host = authority.substr(0, colon);
  if (host.empty() || host == "[]" || (authority.starts_with('[') && host_end == 0)) {
    return bad("no host");
  }
  if (colon != std::string::npos) {
    auto port = core::ParseInteger(authority.substr(colon + 1));
    if (!port || *port < 1 || *port > 65535) return bad("the port is not a number in 1-65535");
  }
  return scheme + "://" + authority;
}

core::Result<std::unique_ptr<EngineProxy>> EngineProxy::Create(EngineProxyOptions options,
                                                               PromptSignal* signal) {
  HEADROOM_CHECK(signal != nullptr) << "EngineProxy needs a PromptSignal";
  auto base_url = EngineBaseUrl(options.upstream);
  if (!base_url) return core::Fail(base_url.error());
  options.upstream = *base_url;
  if (options.workers < 1) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("engine proxy: {} workers (at least 1)", options.workers)));
  }
  if (options.connect_timeout <= core::Duration::zero() ||
      options.read_timeout <= core::Duration::zero() ||
      options.keep_alive_timeout < std::chrono::seconds(1)) {
    return core::Fail(core::Error::InvalidArgument(
        "engine proxy: the connect and read timeouts must be positive, the keep-alive at least "
        "1 s"));
  }
  if (!httplib::Client(options.upstream).is_valid()) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("engine URL '{}': cannot set up a client for it", options.upstream)));
  }
  return std::unique_ptr<EngineProxy>(new EngineProxy(std::move(options), signal));
}

EngineProxy::EngineProxy(EngineProxyOptions options, PromptSignal* signal)
    : options_(std::move(options)), signal_(signal), server_(std::make_unique<httplib::Server>()) {
  const auto workers = static_cast<size_t>(options_.workers);
  server_->new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
  server_->set_payload_max_length(kEngineProxyMaxBodyBytes);
  server_->set_keep_alive_timeout(
      std::chrono::duration_cast<std::chrono::seconds>(options_.keep_alive_timeout).count());
  // An SSE event is a small write: Nagle's algorithm would hold each for the previous one's ACK.
  server_->set_tcp_nodelay(true);
  server_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        AnswerException(res, ep, "engine proxy: internal error");
      });
  const httplib::Server::Handler forward = [this](const httplib::Request& req,
                                                  httplib::Response& res) { Forward(req, res); };
  server_->Get(kAnyPath, forward)
      .Post(kAnyPath, forward)
      .Put(kAnyPath, forward)
      .Patch(kAnyPath, forward)
      .Delete(kAnyPath, forward)
      .Options(kAnyPath, forward);
}

EngineProxy::~EngineProxy() = default;

void EngineProxy::Forward(const httplib::Request& req, httplib::Response& res) {
  // Counted before draining_ is read, so that Drain()'s caller, which sets it and then reads the
  // count, either sees this request or this request sees the drain.
  auto flight = std::make_shared<InFlight>(in_flight_);
  if (draining_) {
    ++counters_.refused_draining;
    res.set_header("Connection", "close");
    res.set_header("Retry-After", "1");
    SendJsonError(res, 503, "the engine proxy is draining (its agent is stopping): send elsewhere");
    return;
  }
  ++counters_.requests;
  const bool generation = IsGeneration(req);
  if (generation) ++counters_.generation_requests;
  auto exchange = std::make_shared<Exchange>(EngineClient(options_), EngineRequest(req),
                                             generation ? signal_ : nullptr);
  // cpp-httplib's server would compress a text answer for a client that accepts gzip, with a
  // deflate that holds every SSE event until its buffer fills, and compress again what the engine
  // already did. It decides from the request after this handler; the object is the server's own
  // non-const one, handed over as const.
  const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
  exchange->Start();
  HeadState head = HeadState::kWaiting;
  while (head == HeadState::kWaiting && !stopping_) {
    head = exchange->WaitForHead(kStopPollInterval);
  }
  if (head != HeadState::kReady) {
    res.set_header("Connection", "close");
    if (head == HeadState::kWaiting) {
      SendJsonError(res, 503, "the engine proxy is stopping");
      return;
    }
    const std::string why = fmt::format("engine at {}: {}", options_.upstream,
                                        DescribeFailure(exchange->error(), options_));
    RecordFailure(httplib::to_string(exchange->error()), why);
    SendJsonError(res, 502, why);
    return;
  }
  const AnswerHead& answer = exchange->head();
  res.status = answer.status;
  if (HasNoBody(req.method, answer.status)) {
    res.headers = answer.headers;
    return;
  }
  // The request stays in flight while its answer streams: the provider holds `flight`.
  res.set_chunked_content_provider("", [this, exchange, flight](size_t, httplib::DataSink& sink) {
    std::string piece;
    switch (exchange->NextPiece(piece, kStopPollInterval)) {
      case BodyState::kPiece:
        return sink.write(piece.data(), piece.size());  // false: the client went away
      case BodyState::kEnd:
        sink.done();
        return true;
      case BodyState::kFailed:
        if (stopping_) return false;
        RecordFailure(httplib::to_string(exchange->error()),
                      fmt::format("engine at {}: {} (the answer was cut)", options_.upstream,
                                  DescribeFailure(exchange->error(), options_)));
        return false;  // closes the client's connection mid-answer
      case BodyState::kWaiting:
        break;
    }
    return !stopping_.load();
  });
  // The provider's Content-Type (empty) gives way to the engine's own, or to none.
  res.headers = answer.headers;
}

void EngineProxy::RecordFailure(const std::string& kind, const std::string& message) {
  ++counters_.upstream_failures;
  core::MutexLock lock(&mu_);
  if (!logged_failures_.insert(kind).second) return;
  spdlog::warn(
      "{} (logged once per kind of failure; all are counted in "
      "headroom_engine_proxy_upstream_failures_total)",
      message);
}

core::Result<int> EngineProxy::Bind(const ListenAddress& address) {
  return BindTo(*server_, address, "the engine proxy");
}

void EngineProxy::Serve() {
  if (stopping_) return;
  server_->listen_after_bind();
}

bool EngineProxy::running() const { return server_->is_running(); }

void EngineProxy::Drain() { draining_ = true; }

void EngineProxy::Stop() {
  stopping_ = true;
  server_->stop();
}

std::string EngineProxy::Metrics() const {
  telemetry::PrometheusWriter out;
  out.Family("headroom_engine_proxy_requests_total", "counter",
             "Requests forwarded to the serving engine.");
  out.Sample(static_cast<double>(counters_.requests.load()));
  out.Family("headroom_engine_proxy_generation_requests_total", "counter",
             "Forwarded requests that carried a prompt (the clock raised for their prefill).");
  out.Sample(static_cast<double>(counters_.generation_requests.load()));
  out.Family("headroom_engine_proxy_requests_in_flight", "gauge",
             "Requests under way: from their arrival to their answer's last byte.");
  out.Sample(static_cast<double>(in_flight_.load()));
  out.Family("headroom_engine_proxy_refused_draining_total", "counter",
             "Requests refused (503) while the proxy drained before its agent stopped.");
  out.Sample(static_cast<double>(counters_.refused_draining.load()));
  out.Family("headroom_engine_proxy_upstream_failures_total", "counter",
             "Requests the engine failed: unreachable, silent past a timeout, or an answer cut.");
  out.Sample(static_cast<double>(counters_.upstream_failures.load()));
  return out.text();
}

}  // namespace headroom::service
