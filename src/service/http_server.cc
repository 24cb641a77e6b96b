#include "service/http_server.h"

#include <exception>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include "core/files.h"
#include "core/parse.h"
#include "service/auth.h"
#include "telemetry/prometheus_text.h"

namespace headroom::service {
namespace {

constexpr const char* kJson = "application/json";

void SendJson(httplib::Response& res, const nlohmann::ordered_json& body) {
  res.status = 200;
  res.set_content(body.dump(2) + "\n", kJson);
}

void SendResult(httplib::Response& res, const core::Result<nlohmann::ordered_json>& result) {
  if (result) {
    SendJson(res, *result);
  } else {
    SendJsonError(res, HttpStatusFor(result.error().code()), result.error().message());
  }
}

}  // namespace

core::Result<int> BindTo(httplib::Server& server, const ListenAddress& address,
                         std::string_view what) {
  int port = address.port;
  if (port == 0) {
    port = server.bind_to_any_port(address.host);
  } else if (!server.bind_to_port(address.host, port)) {
    port = -1;
  }
  if (port < 0) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("{} cannot listen on {}:{}", what, address.host, address.port)));
  }
  return port;
}

void SendJsonError(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(nlohmann::json{{"error", message}}.dump() + "\n", kJson);
}

void AnswerException(httplib::Response& res, std::exception_ptr ep, std::string_view what) {
  std::string message(what);
  try {
    if (ep) std::rethrow_exception(ep);
  } catch (const std::exception& e) {
    message = fmt::format("{}: {}", what, e.what());
  } catch (...) {
  }
  SendJsonError(res, 500, message);
}

core::Result<std::optional<TlsFiles>> TlsFilesFromFlags(const std::string& cert,
                                                        const std::string& key) {
  if (cert.empty() != key.empty()) {
    return core::Fail(
        core::Error::InvalidArgument("--tls-cert and --tls-key go together (HTTPS needs both)"));
  }
  if (cert.empty()) return std::optional<TlsFiles>();
  // OpenSSL would block on a FIFO for ever, deaf to SIGTERM: refused here, naming the flag.
  for (const auto& [flag, path] : {std::pair{"--tls-cert", &cert}, std::pair{"--tls-key", &key}}) {
    if (auto file = core::RegularFile::Open(*path); !file) {
      return core::Fail(
          core::Error::InvalidArgument(fmt::format("{} {}", flag, file.error().message())));
    }
  }
  return std::optional<TlsFiles>(TlsFiles{.cert = cert, .key = key});
}

core::Result<ListenAddress> ParseListenAddress(const std::string& text) {
  const size_t colon = text.rfind(':');
  auto bad = [&text] {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--listen '{}': expected HOST:PORT, e.g. 127.0.0.1:9400", text)));
  };
  if (colon == std::string::npos || colon == 0) return bad();
  auto port = core::ParseInteger(text.substr(colon + 1));
  if (!port || *port < 0 || *port > 65535) return bad();
  return ListenAddress{text.substr(0, colon), static_cast<int>(*port)};
}

namespace {

// The name of the first header whose name or value holds a control byte (tab aside), or empty.
// Checked on the stored strings: cpp-httplib's get_header_value() would stop at a NUL and hide
// what follows it.
std::string HeaderWithControlBytes(const httplib::Headers& headers) {
  auto has_control = [](std::string_view text) {
    for (const char c : text) {
      const auto b = static_cast<unsigned char>(c);
      if ((b < 0x20 && b != '\t') || b == 0x7f) return true;
    }
    return false;
  };
  for (const auto& [name, value] : headers) {
    if (has_control(name) || has_control(value)) return name;
  }
  return {};
}

// The request's one Authorization header as received; empty if absent or given more than once.
std::string AuthorizationHeader(const httplib::Request& req) {
  if (req.get_header_value_count("Authorization") != 1) return {};
  return req.headers.find("Authorization")->second;
}

bool HasBody(const httplib::Request& req) {
  return req.has_header("Transfer-Encoding") ||
         (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
}

}  // namespace

// Calls into the cpp-httplib server it is mixed into, for the connection front.
class HttpServer::Hooks {
 public:
  virtual ~Hooks() = default;
  virtual void SetFront(HttpConnectionFront* front) = 0;
  // Parses, routes and answers one request whose head is on `stream`.
  virtual bool ServeOne(httplib::Stream& stream, bool close_connection,
                        bool& connection_closed) = 0;
  // The TLS context of an HTTPS server; null for plain HTTP.
  virtual SSL_CTX* tls_context() = 0;
  // Lets `backlog` connections wait to be accepted (cpp-httplib listens with 5: a burst of
  // connections would see their handshakes dropped and retried seconds later).
  virtual void SetBacklog(int backlog) = 0;
};

namespace {

// The overrides below lean on 0.11's internals (CMakeLists.txt says which, and checks the
// version at configure time; this catches a build that found another httplib.h).
static_assert(std::string_view(CPPHTTPLIB_VERSION).starts_with("0.11."),
              "FrontedServer is written against cpp-httplib 0.11's Server internals");

// cpp-httplib's server (Base: httplib::Server or httplib::SSLServer) with its per-connection
// worker loop replaced: an accepted socket goes to the front, which calls ServeOne once a
// request's head has arrived (http_connections.h says why).
template <typename Base>
class FrontedServer final : public Base, public HttpServer::Hooks {
 public:
  using Base::Base;
  void SetFront(HttpConnectionFront* front) override { front_ = front; }
  bool ServeOne(httplib::Stream& stream, bool close_connection, bool& connection_closed) override {
    return this->process_request(stream, close_connection, connection_closed,
                                 [](httplib::Request&) {});
  }
  SSL_CTX* tls_context() override {
    if constexpr (std::is_same_v<Base, httplib::SSLServer>) {
      return this->ssl_context();
    } else {
      return nullptr;
    }
  }
  void SetBacklog(int backlog) override { ::listen(this->svr_sock_, backlog); }

 private:
  bool process_and_close_socket(socket_t sock) override {
    front_->Adopt(sock);
    return true;
  }

  HttpConnectionFront* front_ = nullptr;
};

// Runs each accepted connection's task on the accepting thread: the task only hands the socket
// to the front.
class HandOverQueue final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

using ServerAndHooks = std::pair<std::unique_ptr<httplib::Server>, HttpServer::Hooks*>;

template <typename Server, typename... Args>
ServerAndHooks MakeFronted(Args&&... args) {
  auto server = std::make_unique<Server>(std::forward<Args>(args)...);
  HttpServer::Hooks* hooks = server.get();
  return {std::move(server), hooks};
}

ServerAndHooks MakeServer(const std::optional<TlsFiles>& tls) {
  if (!tls) return MakeFronted<FrontedServer<httplib::Server>>();
  return MakeFronted<FrontedServer<httplib::SSLServer>>(tls->cert.c_str(), tls->key.c_str());
}

}  // namespace

HttpServer::HttpServer(const std::optional<TlsFiles>& tls) : tls_(tls) {
  std::tie(server_, hooks_) = MakeServer(tls);
  front_ = std::make_unique<HttpConnectionFront>(
      kHttpLimits, hooks_->tls_context(), &clock_,
      [this](httplib::Stream& stream, bool close_connection, bool& connection_closed) {
        return hooks_->ServeOne(stream, close_connection, connection_closed);
      });
  hooks_->SetFront(front_.get());
  server_->new_task_queue = [] { return new HandOverQueue; };
  server_->set_payload_max_length(kHttpMaxBodyBytes);
  server_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        AnswerException(res, ep, "internal error");
      });
  // After the headers, before any body is read (cpp-httplib runs this before it reads content).
  server_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (const std::string bad = HeaderWithControlBytes(req.headers); !bad.empty()) {
      res.set_header("Connection", "close");
      SendJsonError(res, 400, "a request header holds control bytes");
      return httplib::Server::HandlerResponse::Handled;
    }
    // No GET here takes a body; refusing one keeps an unauthenticated client from holding a
    // worker while it trickles a body in.
    if ((req.method == "GET" || req.method == "HEAD") && HasBody(req)) {
      res.set_header("Connection", "close");
      SendJsonError(res, 400, fmt::format("a {} request takes no body", req.method));
      return httplib::Server::HandlerResponse::Handled;
    }
    if (admit_ && !admit_(req, res)) return httplib::Server::HandlerResponse::Handled;
    return httplib::Server::HandlerResponse::Unhandled;
  });
}

HttpServer::~HttpServer() = default;

void HttpServer::SetHealth(HealthAnswer health) {
  // A probe the front does not take (HEAD, a query string, a body) reaches the router: the same
  // answer.
  server_->Get("/healthz", [health](const httplib::Request&, httplib::Response& res) {
    const auto [status, body] = health();
    res.status = status;
    res.set_content(body, kJson);
  });
  front_->SetHealth(std::move(health));
}

AgentHttpServer::AgentHttpServer(Agent* agent, std::string token,
                                 const std::optional<TlsFiles>& tls)
    : HttpServer(tls), agent_(agent), token_(std::move(token)) {
  SetHealth([] { return std::pair<int, std::string>(200, "{\"status\":\"ok\"}\n"); });
  server().Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        agent_->Metrics() + ConnectionMetrics() + (more_metrics_ ? more_metrics_() : ""),
        "text/plain; version=0.0.4; charset=utf-8");
  });
  server().Get("/v1/state", [this](const httplib::Request&, httplib::Response& res) {
    SendJson(res, agent_->State());
  });
  // Every method but GET needs the token, checked before the body is read, so an
  // unauthenticated client cannot make the agent hold its body.
  SetAdmission([this](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "GET" || BearerAuthorized(AuthorizationHeader(req), token_)) return true;
    agent_->RecordRejected();
    res.set_header("WWW-Authenticate", "Bearer");
    res.set_header("Connection", "close");
    SendJsonError(res, 401, "missing or wrong bearer token");
    return false;
  });
  server().Put("/v1/caps", [this](const httplib::Request& req, httplib::Response& res) {
    SendResult(res, agent_->PutCaps(req.body));
  });
  server().Delete("/v1/caps", [this](const httplib::Request&, httplib::Response& res) {
    SendResult(res, agent_->DeleteCaps());
  });
}

core::Result<int> HttpServer::Bind(const ListenAddress& address) {
  if (!server_->is_valid()) {
    return core::Fail(core::Error::InvalidArgument(
        tls_ ? fmt::format("TLS: cannot load the certificate {} with the key {} (PEM files, "
                           "readable by this user?)",
                           tls_->cert, tls_->key)
             : std::string("the HTTP server could not be set up")));
  }
  HEADROOM_ASSIGN_OR_RETURN(const int port, BindTo(*server_, address, "the server"));
  hooks_->SetBacklog(static_cast<int>(kHttpLimits.max_connections));
  return port;
}

void HttpServer::Serve() {
  front_->Start();
  server_->listen_after_bind();
  front_->Shutdown();
}

std::string HttpServer::ConnectionMetrics() const {
  const HttpFrontCounters& c = front_->counters();
  telemetry::PrometheusWriter out;
  out.Family("headroom_http_connections_open", "gauge",
             "Connections the HTTP server holds (waiting for a request or being answered).");
  out.Sample(static_cast<double>(front_->open_connections()));
  out.Family("headroom_http_connections_accepted_total", "counter",
             "Connections accepted since the start.");
  out.Sample(static_cast<double>(c.accepted.load()));
  out.Family("headroom_http_refused_total", "counter",
             "Connections or requests the HTTP server cut short, by reason.");
  out.Sample(static_cast<double>(c.refused_connection_limit.load()),
             {{"reason", "connection_limit"}});
  out.Sample(static_cast<double>(c.timed_out.load()), {{"reason", "timeout"}});
  out.Sample(static_cast<double>(c.head_too_large.load()), {{"reason", "head_too_large"}});
  out.Sample(static_cast<double>(c.bad_line_ends.load()), {{"reason", "bad_line_ends"}});
  out.Sample(static_cast<double>(c.body_too_large.load()), {{"reason", "body_too_large"}});
  out.Sample(static_cast<double>(c.busy_peer.load()), {{"reason", "busy_peer"}});
  out.Sample(static_cast<double>(c.evicted.load()), {{"reason", "evicted"}});
  out.Family("headroom_http_health_answers_total", "counter",
             "GET /healthz answered by the connection front, without a worker.");
  out.Sample(static_cast<double>(c.health_answers.load()));
  return out.text();
}

bool HttpServer::running() const { return server_->is_running(); }

void HttpServer::Stop() { server_->stop(); }

ControllerHttpServer::ControllerHttpServer(Controller* controller, core::Duration stale_after,
                                           const std::optional<TlsFiles>& tls)
    : HttpServer(tls) {
  SetHealth([controller, stale_after] {
    const core::Duration since = controller->SinceLastStep();
    if (since > stale_after) {
      return std::pair<int, std::string>(
          503, nlohmann::json{{"error",
                               fmt::format("no control step for {:.1f} s", core::ToSeconds(since))}}
                       .dump() +
                   "\n");
    }
    return std::pair<int, std::string>(
        200, fmt::format("{{\"status\":\"ok\",\"steps\":{}}}\n", controller->steps()));
  });
  server().Get("/metrics", [this, controller](const httplib::Request&, httplib::Response& res) {
    res.set_content(controller->Metrics() + ConnectionMetrics(),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  server().Get("/v1/status", [controller](const httplib::Request&, httplib::Response& res) {
    SendJson(res, controller->Status());
  });
  server().Get("/v1/budget", [controller](const httplib::Request&, httplib::Response& res) {
    SendJson(res, controller->Budget());
  });
  // Every method but GET changes the row's budget: the grid's token, checked before the body is
  // read; without one configured the endpoints do not exist.
  SetAdmission([controller](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "GET" || req.method == "HEAD") return true;
    const std::string& token = controller->grid_token();
    if (!token.empty() && BearerAuthorized(AuthorizationHeader(req), token)) return true;
    res.set_header("Connection", "close");
    if (token.empty()) {
      SendJsonError(res, 404, "no budget signal is configured (row.yaml grid.token_file)");
      return false;
    }
    res.set_header("WWW-Authenticate", "Bearer");
    SendJsonError(res, 401, "missing or wrong bearer token");
    return false;
  });
  server().Put("/v1/budget", [controller](const httplib::Request& req, httplib::Response& res) {
    SendResult(res, controller->PutBudget(req.body));
  });
  server().Delete("/v1/budget", [controller](const httplib::Request&, httplib::Response& res) {
    SendResult(res, controller->DeleteBudget());
  });
}

}  // namespace headroom::service
