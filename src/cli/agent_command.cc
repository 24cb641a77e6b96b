// `headroom agent`: the node agent daemon. Composes the backend's devices, the catalog ranges,
// service::Agent (the logic) and service::AgentHttpServer (the API), and runs until SIGINT or
// SIGTERM, then restores the GPUs.
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/daemon_commands.h"
#include "console/terminal.h"
#include "core/files.h"
#include "core/parse.h"
#include "gpu/sim/sim_device.h"
#include "gpu/sim/sim_load_file.h"
#include "service/agent.h"
#include "service/agent_config.h"
#include "service/agent_daemon.h"

namespace headroom::cli {
namespace {

// Fills every option not given on the command line from the YAML config file (flags win).
core::Status ApplyConfig(const CLI::App& cmd, AgentCliOptions* o) {
  HEADROOM_ASSIGN_OR_RETURN(std::string text, core::ReadFile(o->config));
  HEADROOM_ASSIGN_OR_RETURN(service::AgentConfigFile file,
                            service::ParseAgentConfig(text, o->config));
  auto take = [&cmd](const char* flag, const auto& from, auto* to) {
    if (from && cmd.count(flag) == 0) *to = *from;
  };
  take("--backend", file.backend, &o->backend.backend);
  take("--sim-gpu", file.sim_gpu, &o->backend.sim_gpu);
  take("--sim-count", file.sim_count, &o->backend.sim_count);
  take("--sim-load", file.sim_load, &o->backend.sim_load);
  take("--sim-load-file", file.sim_load_file, &o->sim_load_file);
  take("--gpus", file.gpus, &o->backend.gpus);
  take("--listen", file.listen, &o->settings.listen);
  take("--token-file", file.token_file, &o->settings.token_file);
  take("--state-file", file.state_file, &o->settings.state_file);
  take("--priority", file.priority, &o->settings.priority);
  take("--actuation-delay", file.actuation_delay, &o->settings.actuation_delay);
  take("--sample-interval", file.sample_interval, &o->settings.sample_interval);
  take("--tls-cert", file.tls_cert, &o->settings.tls_cert);
  take("--tls-key", file.tls_key, &o->settings.tls_key);
  take("--engine-metrics", file.engine_metrics, &o->settings.engine_metrics);
  take("--engine-metrics-interval", file.engine_metrics_interval,
       &o->settings.engine_metrics_interval);
  take("--engine-prompt-tokens-metric", file.engine_prompt_tokens_metric,
       &o->settings.engine_prompt_tokens_metric);
  take("--engine-generation-tokens-metric", file.engine_generation_tokens_metric,
       &o->settings.engine_generation_tokens_metric);
  take("--engine-running-metric", file.engine_running_metric, &o->settings.engine_running_metric);
  take("--engine-waiting-metric", file.engine_waiting_metric, &o->settings.engine_waiting_metric);
  if (file.failsafe_sm_clock_mhz && cmd.count("--failsafe-sm-clock") == 0) {
    o->failsafe_sm_clock_mhz = file.failsafe_sm_clock_mhz;
  }
  return core::Ok();
}

// Applies a changed load file, logging the new load.
core::Status PollLoadFile(gpu::sim::SimLoadFile& file) {
  HEADROOM_ASSIGN_OR_RETURN(std::optional<std::string> applied, file.Poll());
  if (applied) spdlog::info("sim load is now '{}' (from {})", *applied, file.path());
  return core::Ok();
}

}  // namespace

int RunAgent(const GlobalOptions& global, const CLI::App& cmd, AgentCliOptions options) {
  UseDaemonLogger("headroom-agent");
  InstallStopHandlers();
  if (!options.config.empty()) {
    if (auto st = ApplyConfig(cmd, &options); !st) return ReportError(st.error());
  }
  auto settings = service::ResolveAgentSettings(options.settings, options.backend.backend);
  if (!settings) return ReportError(settings.error());
  core::SystemClock clock;
  auto set = app::OpenDevices(global.catalog_dir, options.backend, &clock);
  if (!set) return ReportError(set.error());
  std::unique_ptr<gpu::sim::SimLoadFile> load_file;
  if (!options.sim_load_file.empty()) {
    if (set->backend != "sim") {
      return ReportError(core::Error::InvalidArgument("--sim-load-file needs --backend sim"));
    }
    std::vector<gpu::sim::SimDevice*> sims;
    for (const auto& d : set->devices) sims.push_back(dynamic_cast<gpu::sim::SimDevice*>(d.get()));
    load_file = std::make_unique<gpu::sim::SimLoadFile>(options.sim_load_file, std::move(sims));
    if (auto st = PollLoadFile(*load_file); !st) return ReportError(st.error());
  }
  auto catalog = app::LoadCatalog(global.catalog_dir);
  if (!catalog) return ReportError(catalog.error());
  auto gpus = service::AgentGpusOf(set->devices, *catalog, options.failsafe_sm_clock_mhz);
  if (!gpus) return ReportError(gpus.error());
  auto agent = service::Agent::Create(std::move(*gpus), settings->agent, &clock);
  if (!agent) return ReportError(agent.error());
  service::AgentHttpServer server(agent->get(), settings->token, settings->tls);
  auto port = server.Bind(settings->listen);
  if (!port) {
    (void)(*agent)->Shutdown();
    return ReportError(port.error());
  }
  std::cout << fmt::format("listening on {}:{}", settings->listen.host, *port) << std::endl;
  spdlog::info("agent up: {} GPU(s), backend {}, priority {}, state file {}", set->devices.size(),
               set->backend, settings->agent.priority, settings->agent.state_file);
  std::optional<service::EngineScrapeLoop> engine;
  if (settings->engine) {
    spdlog::info("scraping the serving engine's metrics at {} every {}", settings->engine->url,
                 core::FormatDuration(settings->engine->interval));
    engine.emplace(**agent, *settings->engine, clock);
  }
  auto done = service::RunAgentDaemon(**agent, server, clock, StopRequested(), [&load_file] {
    if (load_file == nullptr) return;
    if (auto st = PollLoadFile(*load_file); !st) spdlog::error("{}", st.error().message());
  });
  return done ? kExitOk : kExitRuntime;
}

}  // namespace headroom::cli
