// The flags of `agent` and `controller` (their runs: cli/agent_command.cc,
// cli/controller_command.cc, cli/daemon_exec.cc).
#include "cli/daemon_commands.h"

#include <utility>

namespace headroom::cli {
namespace {

// The serving engine's: its metrics page and their names, and the proxy in front of it.
void AddEngineOptions(CLI::App* cmd, service::AgentSettingsText& settings) {
  cmd->add_option("--engine-metrics", settings.engine_metrics,
                  "The serving engine's Prometheus metrics URL (e.g. vLLM's "
                  "http://127.0.0.1:8000/metrics): its prefill share and queue are reported to "
                  "the controller (docs/deploy.md)");
  cmd->add_option("--engine-proxy", settings.engine_proxy,
                  "Take the engine's API requests at this address (HOST:PORT) and pass them on to "
                  "the engine: with the energy saver, a waiting prompt lifts its clock (the "
                  "prefill boost; docs/agent.md)");
  cmd->add_option("--engine-proxy-workers", settings.engine_proxy_workers,
                  "Requests the engine proxy holds at once (a streamed answer holds one for its "
                  "whole generation; more wait)")
      ->capture_default_str();
  cmd->add_option("--engine-proxy-drain", settings.engine_proxy_drain,
                  "On stop, how long the engine proxy refuses new requests (503) while the "
                  "answers under way finish, before the GPUs are restored (0s: cut them; at most "
                  "10m)")
      ->capture_default_str();
  cmd->add_option("--engine-url", settings.engine_url,
                  "The engine the proxy passes requests to (default: --engine-metrics' scheme, "
                  "host and port)");
  cmd->add_option("--engine-metrics-interval", settings.engine_metrics_interval,
                  "How often the engine's metrics are scraped (the window)")
      ->capture_default_str();
  cmd->add_option("--engine-prompt-tokens-metric", settings.engine_prompt_tokens_metric,
                  "The engine's counter of prompt tokens")
      ->capture_default_str();
  cmd->add_option("--engine-generation-tokens-metric", settings.engine_generation_tokens_metric,
                  "The engine's counter of generated tokens")
      ->capture_default_str();
  cmd->add_option("--engine-running-metric", settings.engine_running_metric,
                  "The engine's gauge of requests running")
      ->capture_default_str();
  cmd->add_option("--engine-waiting-metric", settings.engine_waiting_metric,
                  "The engine's gauge of requests waiting")
      ->capture_default_str();
  cmd->add_option("--engine-ttft-metric", settings.engine_ttft_metric,
                  "The engine's histogram of the time to first token (the energy saver's)")
      ->capture_default_str();
  cmd->add_option("--engine-itl-metric", settings.engine_itl_metric,
                  "The engine's histogram of the inter-token latency (the energy saver's; vLLM "
                  "before V1: vllm:time_per_output_token_seconds)")
      ->capture_default_str();
  cmd->add_option("--engine-iterations-metric", settings.engine_iterations_metric,
                  "The engine's histogram of tokens per step, whose count is its iterations "
                  "(a term of the J/token fit)")
      ->capture_default_str();
}

void RegisterAgent(CLI::App& app, const GlobalOptions& global, RunFunction* run,
                   DaemonRuns::AgentRun agent_run) {
  CLI::App* cmd = app.add_subcommand(
      "agent", "Run the node agent: HTTP API to cap this node's GPUs, with lease and failsafe");
  auto* options = BindOptions<AgentCliOptions>(
      cmd, run, [&global, cmd, agent_run = std::move(agent_run)](const AgentCliOptions& o) {
        return agent_run(global, *cmd, o);
      });
  AddBackendOptions(cmd, &options->backend);
  service::AgentSettingsText& settings = options->settings;
  cmd->add_option("--listen", settings.listen, "HOST:PORT to serve on (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("--token-file", settings.token_file,
                  "File holding the bearer token that PUT and DELETE must carry");
  cmd->add_option("--state-file", settings.state_file,
                  "Where the original GPU settings are saved at start (removed on a clean stop)")
      ->capture_default_str();
  cmd->add_option("--priority", settings.priority, "This node's priority class: hp or lp")
      ->capture_default_str();
  cmd->add_option("--actuation-delay", settings.actuation_delay,
                  "Apply each change this long after it is accepted (out-of-band emulation)")
      ->capture_default_str();
  cmd->add_option("--sample-interval", settings.sample_interval, "Telemetry refresh period")
      ->capture_default_str();
  cmd->add_option("--failsafe-sm-clock", options->failsafe_sm_clock_mhz,
                  "SM clock cap (MHz) applied when the lease expires (default: the policy's LP "
                  "T2 clock for the GPU type)");
  cmd->add_option("--sim-load-file", options->sim_load_file,
                  "Sim backend: read the load script from this file, and again whenever it "
                  "changes (to drive a demo or a test)");
  cmd->add_option("--tls-cert", settings.tls_cert,
                  "Serve HTTPS with this PEM certificate (chain); needs --tls-key");
  cmd->add_option("--tls-key", settings.tls_key, "The PEM private key of --tls-cert");
  AddEngineOptions(cmd, settings);
  cmd->add_option("--energy-saver-itl-p50", settings.energy_saver_itl_p50,
                  "Run the energy saver: the SLO of the engine's inter-token latency P50 (e.g. "
                  "40ms); needs --engine-metrics and --energy-saver-ttft-p99");
  cmd->add_option("--energy-saver-ttft-p99", settings.energy_saver_ttft_p99,
                  "The energy saver's SLO of the engine's time-to-first-token P99 (e.g. 2s)");
  cmd->add_option("--energy-saver-margin", settings.energy_saver_margin,
                  "Lower the clock only while both latencies are within (1 - margin) of their SLO")
      ->capture_default_str();
  cmd->add_option("--energy-saver-settle", settings.energy_saver_settle,
                  "After a change of clock, this long before the next step down")
      ->capture_default_str();
  cmd->add_option("--energy-saver-floor-percent", settings.energy_saver_floor_percent,
                  "The lowest clock the energy saver chooses, % of the GPU's highest")
      ->capture_default_str();
  cmd->add_option("--config", options->config,
                  "YAML file with the same settings (keys like state_file); flags win");
}

void RegisterController(CLI::App& app, const GlobalOptions& global, RunFunction* run,
                        DaemonRuns::ControllerRun controller_run) {
  CLI::App* cmd = app.add_subcommand(
      "controller", "Run a row controller: read row power, run the policy, cap through agents");
  auto* options = BindOptions<ControllerCliOptions>(
      cmd, run,
      [&global, controller_run = std::move(controller_run)](const ControllerCliOptions& o) {
        return controller_run(global, o);
      });
  cmd->add_option("--config", options->config, "The row's YAML file (deploy/controller/row.yaml)")
      ->required();
  cmd->add_option("--listen", options->listen,
                  "HOST:PORT for /healthz, /metrics, /v1/status (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option(
      "--audit-log", options->audit_log,
      "Append one JSON line per control step (inputs, decision, commands) to this file");
  cmd->add_flag("--dry-run", options->dry_run, "Decide and log every step, send nothing");
  cmd->add_flag("--check", options->check, "Check the config file and exit");
  cmd->add_option("--tls-cert", options->tls_cert,
                  "Serve HTTPS with this PEM certificate (chain); needs --tls-key");
  cmd->add_option("--tls-key", options->tls_key, "The PEM private key of --tls-cert");
}

}  // namespace

void RegisterDaemons(CLI::App& app, const GlobalOptions& global, RunFunction* run,
                     DaemonRuns runs) {
  RegisterAgent(app, global, run, std::move(runs.agent));
  RegisterController(app, global, run, std::move(runs.controller));
}

}  // namespace headroom::cli
