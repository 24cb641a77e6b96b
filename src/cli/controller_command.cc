// `headroom controller`: the row controller daemon. Composes the config, one HttpAgentLink per
// agent, the row meter, service::Controller (the logic) and service::ControllerHttpServer, and
// steps once per control period until SIGINT or SIGTERM. On exit it changes nothing: the agents
// keep their caps until their leases run out, then apply their failsafe.
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/terminal.h"
#include "service/controller.h"
#include "service/controller_config.h"
#include "service/http_server.h"

namespace headroom::cli {
namespace {

struct ControllerCliOptions {
  std::string config;
  std::string listen = "127.0.0.1:9500";
  std::string audit_log;
  bool dry_run = false;
  bool check = false;
  std::string tls_cert;
  std::string tls_key;
};

core::Result<std::unique_ptr<service::RowMeter>> MakeMeter(const service::TelemetryConfig& t,
                                                           const std::string& ca_file,
                                                           const core::Clock* clock) {
  switch (t.source) {
    case service::TelemetrySource::kAgents:
      return std::unique_ptr<service::RowMeter>();
    case service::TelemetrySource::kPrometheus:
      return std::unique_ptr<service::RowMeter>(
          std::make_unique<service::PrometheusMeter>(t.url, t.query, t.timeout, ca_file));
    case service::TelemetrySource::kCommand:
      return std::unique_ptr<service::RowMeter>(
          std::make_unique<service::CommandMeter>(t.command, t.timeout, clock));
  }
  return core::Fail(core::Error::Internal("unknown telemetry source"));
}

int RunController(const GlobalOptions& global, const ControllerCliOptions& o) {
  auto logger = spdlog::stderr_color_mt("headroom-controller", LogColorMode());
  spdlog::set_default_logger(logger);
  spdlog::set_level(LogLevel(spdlog::level::info));
  InstallStopHandlers();
  auto catalog = LoadCatalog(global);
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
  std::unique_ptr<std::ofstream> audit;
  if (!o.audit_log.empty()) {
    audit = std::make_unique<std::ofstream>(o.audit_log, std::ios::app);
    if (!*audit) {
      return ReportError(core::Error::InvalidArgument(
          fmt::format("--audit-log {}: cannot open for appending", o.audit_log)));
    }
  }
  std::vector<std::unique_ptr<service::AgentLink>> links;
  for (const service::AgentEndpoint& a : config->agents) {
    links.push_back(std::make_unique<service::HttpAgentLink>(a.url, a.token, config->agent_timeout,
                                                             config->tls_ca_file));
  }
  core::SystemClock clock;
  auto meter = MakeMeter(config->telemetry, config->tls_ca_file, &clock);
  if (!meter) return ReportError(meter.error());
  service::ControllerOptions options;
  options.dry_run = o.dry_run;
  // Start time and pid alone repeat when the clock is set back (a node without a clock source
  // booting at the same time, pid 1 in a container): 32 random bits make that harmless.
  options.instance_id =
      fmt::format("{}.{}.{:08x}", std::time(nullptr), ::getpid(), std::random_device{}());
  if (audit) {
    options.audit = [&audit, path = o.audit_log,
                     lost = std::uint64_t{0}](const nlohmann::ordered_json& record) mutable {
      // Wall-clock time first, for people reading the log next to other logs.
      nlohmann::ordered_json line = {
          {"time",
           fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::floor<std::chrono::milliseconds>(
                                                    std::chrono::system_clock::now()))}};
      line.update(record);
      // After a failed write a partial line may be on disk: end it first.
      *audit << (lost > 0 ? "\n" : "") << line.dump() << '\n';
      audit->flush();
      if (!*audit) {
        // Once per run of failures, not once per period.
        if (lost++ == 0) spdlog::error("writing the audit log {} failed (disk full?)", path);
        audit->clear();
        return false;
      }
      if (lost > 0) spdlog::info("the audit log {} is written again ({} lines lost)", path, lost);
      lost = 0;
      return true;
    };
  }

  const core::Duration period = config->period;
  const std::string row = config->row_name;
  const size_t agents = config->agents.size();
  const std::string policy = config->policy_name;
  auto controller = service::Controller::Create(std::move(*config), std::move(links),
                                                std::move(*meter), &clock, std::move(options));
  if (!controller) return ReportError(controller.error());
  service::ControllerHttpServer server(controller->get(), 5 * period, *tls);
  auto port = server.Bind(*listen);
  if (!port) return ReportError(port.error());
  std::cout << fmt::format("listening on {}:{}", listen->host, *port) << std::endl;
  spdlog::info("controller up: row {}, {} agents, policy {}{}", row, agents, policy,
               o.dry_run ? ", DRY RUN (nothing is sent)" : "");
  std::thread serving([&server] { server.Serve(); });
  const core::TimePoint start = clock.Now();
  for (std::int64_t k = 1; !StopRequested().load(); ++k) {
    (void)(*controller)->Step();
    // Steps on a fixed grid, so that a slow step does not shift every later one.
    core::TimePoint next = start + k * period;
    if (next < clock.Now()) {
      const std::int64_t skipped = (clock.Now() - next) / period;
      k += skipped + 1;
      next = start + k * period;
      spdlog::warn("a step overran its period; skipping {} step(s)", skipped + 1);
    }
    clock.SleepUntil(next, &StopRequested());
  }
  spdlog::info("stopping; the agents keep their caps until their leases run out");
  server.Stop();
  serving.join();
  return kExitOk;
}

}  // namespace

void RegisterController(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  auto options = std::make_shared<ControllerCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "controller", "Run a row controller: read row power, run the policy, cap through agents");
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
  cmd->callback([run, options, &global] {
    *run = [options, &global] { return RunController(global, *options); };
  });
}

}  // namespace headroom::cli
