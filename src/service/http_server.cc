#include "service/http_server.h"

#include <exception>
#include <memory>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/parse.h"
#include "service/auth.h"

namespace headroom::service {
namespace {

constexpr const char* kJson = "application/json";

void SendError(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(nlohmann::json{{"error", message}}.dump() + "\n", kJson);
}

void SendJson(httplib::Response& res, const nlohmann::ordered_json& body) {
  res.status = 200;
  res.set_content(body.dump(2) + "\n", kJson);
}

void SendResult(httplib::Response& res, const core::Result<nlohmann::ordered_json>& result) {
  if (result) {
    SendJson(res, *result);
  } else {
    SendError(res, HttpStatusFor(result.error().code()), result.error().message());
  }
}

}  // namespace

core::Result<std::optional<TlsFiles>> TlsFilesFromFlags(const std::string& cert,
                                                        const std::string& key) {
  if (cert.empty() != key.empty()) {
    return core::Fail(
        core::Error::InvalidArgument("--tls-cert and --tls-key go together (HTTPS needs both)"));
  }
  if (cert.empty()) return std::optional<TlsFiles>();
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

std::unique_ptr<httplib::Server> MakeServer(const std::optional<TlsFiles>& tls) {
  if (!tls) return std::make_unique<httplib::Server>();
  return std::make_unique<httplib::SSLServer>(tls->cert.c_str(), tls->key.c_str());
}

}  // namespace

HttpServer::HttpServer(const std::optional<TlsFiles>& tls) : server_(MakeServer(tls)), tls_(tls) {
  // What one client can cost a daemon (docs/deploy.md, "Limits"): a worker per connection from
  // a bounded pool, given back when the client is idle or slow for longer than the timeouts, and
  // request bodies no larger than any real caps request needs.
  server_->new_task_queue = [] { return new httplib::ThreadPool(kHttpWorkers); };
  server_->set_read_timeout(kHttpReadTimeout);
  server_->set_write_timeout(kHttpWriteTimeout);
  server_->set_keep_alive_timeout(
      std::chrono::duration_cast<std::chrono::seconds>(kHttpKeepAlive).count());
  server_->set_payload_max_length(kHttpMaxBodyBytes);
  // Small answers on a kept-alive connection otherwise wait for the client's delayed ACK
  // (~40 ms each): the controller polls every agent every period on one connection.
  server_->set_tcp_nodelay(true);
  server_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = fmt::format("internal error: {}", e.what());
        } catch (...) {
        }
        SendError(res, 500, what);
      });
  // After the headers, before any body is read (cpp-httplib runs this before it reads content).
  server_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (const std::string bad = HeaderWithControlBytes(req.headers); !bad.empty()) {
      res.set_header("Connection", "close");
      SendError(res, 400, "a request header holds control bytes");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (admit_ && !admit_(req, res)) return httplib::Server::HandlerResponse::Handled;
    return httplib::Server::HandlerResponse::Unhandled;
  });
}

HttpServer::~HttpServer() = default;

AgentHttpServer::AgentHttpServer(Agent* agent, std::string token,
                                 const std::optional<TlsFiles>& tls)
    : HttpServer(tls), agent_(agent), token_(std::move(token)) {
  server().Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"status\":\"ok\"}\n", kJson);
  });
  server().Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(agent_->Metrics(), "text/plain; version=0.0.4; charset=utf-8");
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
    SendError(res, 401, "missing or wrong bearer token");
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
  int port = address.port;
  if (port == 0) {
    port = server_->bind_to_any_port(address.host);
  } else if (!server_->bind_to_port(address.host, port)) {
    port = -1;
  }
  if (port < 0) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("cannot listen on {}:{}", address.host, address.port)));
  }
  return port;
}

void HttpServer::Serve() { server_->listen_after_bind(); }

bool HttpServer::running() const { return server_->is_running(); }

void HttpServer::Stop() { server_->stop(); }

ControllerHttpServer::ControllerHttpServer(const Controller* controller, core::Duration stale_after,
                                           const std::optional<TlsFiles>& tls)
    : HttpServer(tls) {
  server().Get(
      "/healthz", [controller, stale_after](const httplib::Request&, httplib::Response& res) {
        const core::Duration since = controller->SinceLastStep();
        if (since > stale_after) {
          SendError(res, 503, fmt::format("no control step for {:.1f} s", core::ToSeconds(since)));
          return;
        }
        res.set_content(fmt::format("{{\"status\":\"ok\",\"steps\":{}}}\n", controller->steps()),
                        kJson);
      });
  server().Get("/metrics", [controller](const httplib::Request&, httplib::Response& res) {
    res.set_content(controller->Metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server().Get("/v1/status", [controller](const httplib::Request&, httplib::Response& res) {
    SendJson(res, controller->Status());
  });
}

}  // namespace headroom::service
