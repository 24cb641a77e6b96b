#include "app/daemons.h"

#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/files.h"
#include "core/parse.h"
#include "gpu/sim/sim_device.h"
#include "gpu/sim/sim_load_file.h"
#include "service/agent.h"
#include "service/agent_daemon.h"
#include "service/audit_log.h"
#include "service/controller.h"
#include "service/controller_config.h"
#include "service/http_server.h"

namespace headroom::app {
namespace {

// Applies a changed load file, logging the new load.
core::Status PollLoadFile(gpu::sim::SimLoadFile& file) {
  HEADROOM_ASSIGN_OR_RETURN(std::optional<std::string> applied, file.Poll());
  if (applied) spdlog::info("sim load is now '{}' (from {})", *applied, file.path());
  return core::Ok();
}

// A service manager kills what outlives its stop timeout, and an agent killed while its proxy
// drains has not restored its GPUs (the next start does).
void WarnOfALongDrain(core::Duration drain) {
  constexpr core::Duration kShippedStopTimeout = std::chrono::seconds(30);
  if (drain + std::chrono::seconds(5) <= kShippedStopTimeout) return;
  spdlog::warn(
      "--engine-proxy-drain {}: the shipped systemd unit and Kubernetes manifests stop the agent "
      "after 30s; raise TimeoutStopSec or terminationGracePeriodSeconds above the drain and a few "
      "seconds more, or an agent killed while draining leaves its GPUs to be restored at its next "
      "start",
      core::FormatDuration(drain));
}

}  // namespace

core::Result<service::AgentConfigFile> ReadAgentConfig(const std::string& path) {
  HEADROOM_ASSIGN_OR_RETURN(std::string text, core::ReadFile(path));
  return service::ParseAgentConfig(text, path);
}

core::Result<bool> RunAgent(const AgentRequest& options) {
  auto settings = service::ResolveAgentSettings(options.settings, options.backend.backend);
  if (!settings) return core::Fail(settings.error());
  core::SystemClock clock;
  auto set = app::OpenDevices(options.catalog_dir, options.backend, &clock);
  if (!set) return core::Fail(set.error());
  std::unique_ptr<gpu::sim::SimLoadFile> load_file;
  if (!options.sim_load_file.empty()) {
    if (set->backend != "sim") {
      return core::Fail(core::Error::InvalidArgument("--sim-load-file needs --backend sim"));
    }
    std::vector<gpu::sim::SimDevice*> sims;
    for (const auto& d : set->devices) sims.push_back(dynamic_cast<gpu::sim::SimDevice*>(d.get()));
    load_file = std::make_unique<gpu::sim::SimLoadFile>(options.sim_load_file, std::move(sims));
    HEADROOM_RETURN_IF_ERROR(PollLoadFile(*load_file));
  }
  auto catalog = app::LoadCatalog(options.catalog_dir);
  if (!catalog) return core::Fail(catalog.error());
  auto gpus = service::AgentGpusOf(set->devices, *catalog, options.failsafe_sm_clock_mhz);
  if (!gpus) return core::Fail(gpus.error());
  settings->agent.power_smoothing = options.power_smoothing;
  auto agent = service::Agent::Create(std::move(*gpus), settings->agent, &clock);
  if (!agent) return core::Fail(agent.error());
  service::AgentHttpServer server(agent->get(), settings->token, settings->tls);
  auto port = server.Bind(settings->listen);
  if (!port) {
    (void)(*agent)->Shutdown();
    return core::Fail(port.error());
  }
  if (options.print) options.print(fmt::format("listening on {}:{}", settings->listen.host, *port));
  spdlog::info("agent up: {} GPU(s), backend {}, priority {}, state file {}", set->devices.size(),
               set->backend, settings->agent.priority, settings->agent.state_file);
  std::optional<service::EngineScrapeLoop> engine;
  if (settings->engine) {
    spdlog::info("scraping the serving engine's metrics at {} every {}", settings->engine->url,
                 core::FormatDuration(settings->engine->interval));
    engine.emplace(**agent, *settings->engine, clock);
  }
  std::unique_ptr<service::EngineProxyLoop> proxy;
  if (settings->proxy) {
    auto loop = service::EngineProxyLoop::Create(**agent, *settings->proxy);
    if (!loop) {
      (void)(*agent)->Shutdown();
      return core::Fail(loop.error());
    }
    proxy = std::move(*loop);
    server.AddMetrics([p = proxy.get()] { return p->Metrics(); });
    if (options.print) {
      options.print(fmt::format("engine proxy on {}:{}, to {}", settings->proxy->listen.host,
                                proxy->port(), settings->proxy->upstream));
    }
    spdlog::info("engine proxy on {}:{} to {}{}", settings->proxy->listen.host, proxy->port(),
                 settings->proxy->upstream,
                 settings->agent.energy_saver ? ": the energy saver's prefill boost" : "");
    WarnOfALongDrain(settings->proxy->drain);
  }
  service::AgentDaemonExtras extras{.each_tick =
                                        [&load_file] {
                                          if (load_file == nullptr) return;
                                          if (auto st = PollLoadFile(*load_file); !st)
                                            spdlog::error("{}", st.error().message());
                                        },
                                    .proxy = proxy.get(),
                                    .stop_at_once = options.stop_at_once};
  auto done = service::RunAgentDaemon(**agent, server, clock, *options.stop, extras);
  return done.has_value();
}

core::Status RunController(const ControllerRequest& o) {
  auto catalog = app::LoadCatalog(o.catalog_dir);
  if (!catalog) return core::Fail(catalog.error());
  auto config = service::LoadControllerConfig(o.config, *catalog);
  if (!config) return core::Fail(config.error());
  if (o.check) {
    if (o.print) {
      o.print(fmt::format("{}: row {}, budget {:.0f} W, policy {}, {} agents, telemetry {}",
                          o.config, config->row_name, config->budget.value(), config->policy_name,
                          config->agents.size(),
                          service::TelemetrySourceName(config->telemetry.source)));
    }
    return core::Ok();
  }
  auto listen = service::ParseListenAddress(o.listen);
  if (!listen) return core::Fail(listen.error());
  auto tls = service::TlsFilesFromFlags(o.tls_cert, o.tls_key);
  if (!tls) return core::Fail(tls.error());
  core::SystemClock clock;
  std::unique_ptr<service::AuditLog> audit;
  if (!o.audit_log.empty()) {
    auto opened = service::AuditLog::Open(o.audit_log, &clock);
    if (!opened) return core::Fail(opened.error());
    audit = std::move(*opened);
  }
  std::vector<std::unique_ptr<service::AgentLink>> links;
  for (const service::AgentEndpoint& a : config->agents) {
    links.push_back(std::make_unique<service::HttpAgentLink>(a.url, a.token, config->agent_timeout,
                                                             config->tls_ca_file));
  }
  auto meter = service::MakeRowMeter(config->telemetry, config->tls_ca_file, &clock);
  if (!meter) return core::Fail(meter.error());
  service::ControllerOptions options{.dry_run = o.dry_run,
                                     .instance_id = service::NewInstanceId(clock)};
  if (audit) options.audit = [&audit](const nlohmann::ordered_json& r) { return audit->Write(r); };

  const core::Duration period = config->period;
  const std::string up = fmt::format("controller up: row {}, {} agents, policy {}{}",
                                     config->row_name, config->agents.size(), config->policy_name,
                                     o.dry_run ? ", DRY RUN (nothing is sent)" : "");
  auto controller = service::Controller::Create(std::move(*config), std::move(links),
                                                std::move(*meter), &clock, std::move(options));
  if (!controller) return core::Fail(controller.error());
  service::ControllerHttpServer server(controller->get(), 5 * period, *tls);
  auto port = server.Bind(*listen);
  if (!port) return core::Fail(port.error());
  if (o.print) o.print(fmt::format("listening on {}:{}", listen->host, *port));
  spdlog::info(up);
  std::thread serving([&server] { server.Serve(); });
  service::RunControlLoop(**controller, clock, period, *o.stop);
  spdlog::info("stopping; the agents keep their caps until their leases run out");
  server.Stop();
  serving.join();
  return core::Ok();
}

}  // namespace headroom::app
