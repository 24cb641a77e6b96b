// `headroom controller`: the row controller daemon. Composes the config, one HttpAgentLink per
// agent, the row meter, service::Controller (the logic) and service::ControllerHttpServer, and
// steps once per control period until SIGINT or SIGTERM. On exit it changes nothing: the agents
// keep their caps until their leases run out, then apply their failsafe.
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cli/daemon_commands.h"
#include "console/terminal.h"
#include "service/audit_log.h"
#include "service/controller.h"
#include "service/controller_config.h"
#include "service/http_server.h"

namespace headroom::cli {

int RunController(const GlobalOptions& global, const ControllerCliOptions& o) {
  UseDaemonLogger("headroom-controller");
  InstallStopHandlers();
  auto catalog = app::LoadCatalog(global.catalog_dir);
  if (!catalog) return ReportError(catalog.error());
  auto config = service::LoadControllerConfig(o.config, *catalog);
  if (!config) return ReportError(config.error());
  if (o.check) {
    std::cout << fmt::format("{}: row {}, budget {:.0f} W, policy {}, {} agents, telemetry {}\n",
                             o.config, config->row_name, config->budget.value(),
                             config->policy_name, config->agents.size(),
                             service::TelemetrySourceName(config->telemetry.source));
    return kExitOk;
  }
  auto listen = service::ParseListenAddress(o.listen);
  if (!listen) return ReportError(listen.error());
  auto tls = service::TlsFilesFromFlags(o.tls_cert, o.tls_key);
  if (!tls) return ReportError(tls.error());
  core::SystemClock clock;
  std::unique_ptr<service::AuditLog> audit;
  if (!o.audit_log.empty()) {
    auto opened = service::AuditLog::Open(o.audit_log, &clock);
    if (!opened) return ReportError(opened.error());
    audit = std::move(*opened);
  }
  std::vector<std::unique_ptr<service::AgentLink>> links;
  for (const service::AgentEndpoint& a : config->agents) {
    links.push_back(std::make_unique<service::HttpAgentLink>(a.url, a.token, config->agent_timeout,
                                                             config->tls_ca_file));
  }
  auto meter = service::MakeRowMeter(config->telemetry, config->tls_ca_file, &clock);
  if (!meter) return ReportError(meter.error());
  service::ControllerOptions options{.dry_run = o.dry_run,
                                     .instance_id = service::NewInstanceId(clock)};
  if (audit) options.audit = [&audit](const nlohmann::ordered_json& r) { return audit->Write(r); };

  const core::Duration period = config->period;
  const std::string up = fmt::format("controller up: row {}, {} agents, policy {}{}",
                                     config->row_name, config->agents.size(), config->policy_name,
                                     o.dry_run ? ", DRY RUN (nothing is sent)" : "");
  auto controller = service::Controller::Create(std::move(*config), std::move(links),
                                                std::move(*meter), &clock, std::move(options));
  if (!controller) return ReportError(controller.error());
  service::ControllerHttpServer server(controller->get(), 5 * period, *tls);
  auto port = server.Bind(*listen);
  if (!port) return ReportError(port.error());
  std::cout << fmt::format("listening on {}:{}", listen->host, *port) << std::endl;
  spdlog::info(up);
  std::thread serving([&server] { server.Serve(); });
  service::RunControlLoop(**controller, clock, period, StopRequested());
  spdlog::info("stopping; the agents keep their caps until their leases run out");
  server.Stop();
  serving.join();
  return kExitOk;
}

}  // namespace headroom::cli
