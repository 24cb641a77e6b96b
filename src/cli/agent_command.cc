// `headroom agent`: the node agent daemon. Composes the backend's devices, the catalog ranges,
// service::Agent (the logic) and service::AgentHttpServer (the API), and runs until SIGINT or
// SIGTERM, then restores the GPUs.

#include "cli/daemon_commands.h"
#include "console/terminal.h"

namespace headroom::cli {
namespace {

// Fills every option not given on the command line from the YAML config file (flags win).
core::Status ApplyConfig(const CLI::App& cmd, AgentCliOptions* o) {
  HEADROOM_ASSIGN_OR_RETURN(const service::AgentConfigFile file, app::ReadAgentConfig(o->config));
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
  take("--engine-proxy", file.engine_proxy, &o->settings.engine_proxy);
  take("--engine-url", file.engine_url, &o->settings.engine_url);
  take("--engine-proxy-workers", file.engine_proxy_workers, &o->settings.engine_proxy_workers);
  take("--engine-proxy-drain", file.engine_proxy_drain, &o->settings.engine_proxy_drain);
  take("--engine-metrics-interval", file.engine_metrics_interval,
       &o->settings.engine_metrics_interval);
  take("--engine-prompt-tokens-metric", file.engine_prompt_tokens_metric,
       &o->settings.engine_prompt_tokens_metric);
  take("--engine-generation-tokens-metric", file.engine_generation_tokens_metric,
       &o->settings.engine_generation_tokens_metric);
  take("--engine-running-metric", file.engine_running_metric, &o->settings.engine_running_metric);
  take("--engine-waiting-metric", file.engine_waiting_metric, &o->settings.engine_waiting_metric);
  take("--engine-ttft-metric", file.engine_ttft_metric, &o->settings.engine_ttft_metric);
  take("--engine-itl-metric", file.engine_itl_metric, &o->settings.engine_itl_metric);
  take("--engine-iterations-metric", file.engine_iterations_metric,
       &o->settings.engine_iterations_metric);
  if (const auto& saver = file.energy_saver) {
    const auto given = [](const std::string& s) { return std::optional<std::string>(s); };
    take("--energy-saver-itl-p50", given(saver->itl_p50), &o->settings.energy_saver_itl_p50);
    take("--energy-saver-ttft-p99", given(saver->ttft_p99), &o->settings.energy_saver_ttft_p99);
    take("--energy-saver-margin", saver->margin, &o->settings.energy_saver_margin);
    take("--energy-saver-settle", saver->settle, &o->settings.energy_saver_settle);
    take("--energy-saver-floor-percent", saver->floor_percent,
         &o->settings.energy_saver_floor_percent);
  }
  if (file.failsafe_sm_clock_mhz && cmd.count("--failsafe-sm-clock") == 0) {
    o->failsafe_sm_clock_mhz = file.failsafe_sm_clock_mhz;
  }
  o->power_smoothing = file.power_smoothing;
  return core::Ok();
}

}  // namespace

int RunAgent(const GlobalOptions& global, const CLI::App& cmd, AgentCliOptions options) {
  UseDaemonLogger("headroom-agent");
  InstallStopHandlers();
  if (!options.config.empty()) {
    if (auto st = ApplyConfig(cmd, &options); !st) return ReportError(st.error());
  }
  auto done = app::RunAgent({.catalog_dir = global.catalog_dir,
                             .backend = options.backend,
                             .settings = options.settings,
                             .failsafe_sm_clock_mhz = options.failsafe_sm_clock_mhz,
                             .sim_load_file = options.sim_load_file,
                             .power_smoothing = options.power_smoothing,
                             .stop = &StopRequested(),
                             .stop_at_once = &StopInsisted(),
                             .print = PrintLineFlushed});
  if (!done) return ReportError(done.error());
  return *done ? kExitOk : kExitRuntime;
}

}  // namespace headroom::cli
