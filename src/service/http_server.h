// The daemons' HTTP APIs (cpp-httplib), thin adapters over their logic:
// AgentHttpServer over Agent: GET /healthz, GET /metrics, GET /v1/state, PUT /v1/caps,
// DELETE /v1/caps; the mutating endpoints require "Authorization: Bearer <token>".
// ControllerHttpServer over Controller: GET /healthz, GET /metrics, GET /v1/status, GET /v1/budget,
// and with the grid's token PUT /v1/budget and DELETE /v1/budget.
// Errors are JSON {"error": "..."} with the status HttpStatusFor() gives. Connections are
// accepted by cpp-httplib and then held by an HttpConnectionFront until a request's head is in.
// Bind() and Stop() may be called from any thread; Serve() blocks on the calling thread until
// Stop().
#ifndef HEADROOM_SERVICE_HTTP_SERVER_H_
#define HEADROOM_SERVICE_HTTP_SERVER_H_

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/result.h"
#include "service/agent.h"
#include "service/controller.h"
#include "service/http_connections.h"
#include "service/http_status.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace headroom::service {

// The daemons' error answer: `status` and {"error": message}.
void SendJsonError(httplib::Response& res, int status, const std::string& message);
// What a handler's escaped exception is answered with: 500, `what` and the exception's own words.
void AnswerException(httplib::Response& res, std::exception_ptr ep, std::string_view what);

// "127.0.0.1:9400" -> {"127.0.0.1", 9400}; port 0 asks for a free port. kInvalidArgument.
struct ListenAddress {
  std::string host;
  int port = 0;
};

// Binds `server` to `address`: the bound port (the chosen one for port 0), or kUnavailable
// saying what could not listen where ("<what> cannot listen on HOST:PORT").
[[nodiscard]] core::Result<int> BindTo(httplib::Server& server, const ListenAddress& address,
                                       std::string_view what);
[[nodiscard]] core::Result<ListenAddress> ParseListenAddress(const std::string& text);

// A certificate chain and its private key, PEM files, for serving HTTPS (cpp-httplib as Debian
// builds it links OpenSSL).
struct TlsFiles {
  std::string cert;
  std::string key;
};

// The --tls-cert / --tls-key pair of a daemon: both empty -> plain HTTP; both set -> HTTPS; one
// alone is an InvalidArgument error.
[[nodiscard]] core::Result<std::optional<TlsFiles>> TlsFilesFromFlags(const std::string& cert,
                                                                      const std::string& key);

// What one client can cost a daemon's HTTP server (docs/deploy.md, "Limits"): the connection
// front's bounds (service/http_connections.h) and the largest request body (413 beyond).
inline constexpr HttpLimits kHttpLimits{};
inline constexpr std::size_t kHttpMaxBodyBytes = kHttpLimits.max_body_bytes;

class HttpServer {
 public:
  // Plain HTTP without `tls`; HTTPS with it (a bad certificate or key fails Bind()).
  explicit HttpServer(const std::optional<TlsFiles>& tls = std::nullopt);
  virtual ~HttpServer();

  // Binds the socket; returns the bound port (the chosen one when address.port is 0).
  [[nodiscard]] core::Result<int> Bind(const ListenAddress& address);
  // Serves until Stop(). REQUIRES: Bind() succeeded.
  void Serve();
  // True once Serve() accepts connections (Stop() before that would be lost).
  bool running() const;
  void Stop();

 protected:
  // Decides on a request once its headers are read and before its body is: true lets it through;
  // false refuses it with what `res` holds. Requests whose headers carry control bytes (a NUL
  // after a token, CR or escape codes) are refused with 400 before this runs.
  using Admission = std::function<bool(const httplib::Request&, httplib::Response&)>;
  void SetAdmission(Admission admit) { admit_ = std::move(admit); }
  // GET /healthz: answered by the connection front without a worker (so that busy workers
  // cannot fail a liveness probe), and by the router for what the front leaves to it.
  void SetHealth(HealthAnswer health);
  httplib::Server& server() { return *server_; }
  // The front's gauges and counters (headroom_http_*), for the daemon's /metrics.
  std::string ConnectionMetrics() const;

 public:
  class Hooks;  // what the connection front calls in the server (http_server.cc)

 private:
  std::unique_ptr<httplib::Server> server_;
  Hooks* hooks_ = nullptr;  // the same object as server_
  std::optional<TlsFiles> tls_;
  Admission admit_;
  core::SystemClock clock_;
  std::unique_ptr<HttpConnectionFront> front_;  // destroyed first: its workers call server_
};

class AgentHttpServer final : public HttpServer {
 public:
  // REQUIRES: agent outlives the server.
  AgentHttpServer(Agent* agent, std::string token,
                  const std::optional<TlsFiles>& tls = std::nullopt);
  // More of the daemon's metrics on /metrics (the engine proxy's). Call before Serve().
  void AddMetrics(std::function<std::string()> more) { more_metrics_ = std::move(more); }

 private:
  Agent* const agent_;
  const std::string token_;
  std::function<std::string()> more_metrics_;
};

class ControllerHttpServer final : public HttpServer {
 public:
  // /healthz answers 503 once no step was taken for `stale_after` (a stuck loop).
  // REQUIRES: controller outlives the server.
  // PUT and DELETE /v1/budget need the controller's grid token (404 where it has none).
  ControllerHttpServer(Controller* controller, core::Duration stale_after,
                       const std::optional<TlsFiles>& tls = std::nullopt);
};

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_HTTP_SERVER_H_
