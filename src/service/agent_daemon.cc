#include "service/agent_daemon.h"

#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/parse.h"
#include "policy/policy_params.h"
#include "policy/row_policy.h"
#include "service/auth.h"

namespace headroom::service {

core::Result<AgentSettings> ResolveAgentSettings(const AgentSettingsText& text,
                                                 const std::string& backend) {
  AgentSettings s;
  if (text.token_file.empty()) {
    return core::Fail(core::Error::InvalidArgument("--token-file is required"));
  }
  HEADROOM_ASSIGN_OR_RETURN(s.token, ReadTokenFile(text.token_file));
  HEADROOM_ASSIGN_OR_RETURN(s.listen, ParseListenAddress(text.listen));
  auto priority = policy::ParsePriority(text.priority);
  if (!priority) return core::Fail(priority.error().WithContext("--priority"));
  auto delay = core::ParseDuration(text.actuation_delay);
  if (!delay) return core::Fail(delay.error().WithContext("--actuation-delay"));
  auto interval = core::ParseDuration(text.sample_interval);
  if (!interval) return core::Fail(interval.error().WithContext("--sample-interval"));
  if (*delay < core::Duration::zero() || *interval <= core::Duration::zero()) {
    return core::Fail(
        core::Error::InvalidArgument("--actuation-delay must be >= 0 and --sample-interval > 0"));
  }
  HEADROOM_ASSIGN_OR_RETURN(s.tls, TlsFilesFromFlags(text.tls_cert, text.tls_key));
  s.agent.state_file = text.state_file;
  s.agent.priority = std::string(policy::PriorityName(*priority));
  s.agent.backend = backend;
  s.agent.actuation_delay = *delay;
  s.agent.sample_interval = *interval;
  return s;
}

core::Result<std::vector<AgentGpu>> AgentGpusOf(
    const std::vector<std::unique_ptr<gpu::Device>>& devices,
    const catalog::HardwareCatalog& catalog, std::optional<double> failsafe_mhz) {
  std::vector<AgentGpu> gpus;
  for (const auto& device : devices) {
    const gpu::DeviceInfo& info = device->info();
    if (!info.catalog_type) {
      return core::Fail(core::Error::NotFound(fmt::format(
          "GPU {} ({}) is not in the hardware catalog; the agent needs its clock and power "
          "ranges",
          info.index, info.name)));
    }
    HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec* spec, catalog.Gpu(*info.catalog_type));
    const core::Megahertz failsafe =
        failsafe_mhz ? core::Megahertz(*failsafe_mhz) : policy::DefaultParamsFor(*spec).lp_t2_clock;
    if (failsafe < spec->sm_clock_min || failsafe > spec->sm_clock_max) {
      return core::Fail(core::Error::OutOfRange(fmt::format(
          "--failsafe-sm-clock {} MHz is outside GPU {}'s range {}-{} MHz", failsafe.value(),
          info.index, spec->sm_clock_min.value(), spec->sm_clock_max.value())));
    }
    gpus.push_back(AgentGpu{
        .device = device.get(), .spec = *spec, .failsafe_clock = spec->SnapClock(failsafe)});
  }
  return gpus;
}

core::Status RunAgentDaemon(Agent& agent, AgentHttpServer& server, core::Clock& clock,
                            const std::atomic<bool>& stop, const std::function<void()>& each_tick) {
  std::atomic<bool> serve_returned{false};
  std::thread serving([&server, &serve_returned] {
    server.Serve();
    serve_returned.store(true);
  });
  auto sleep = [&clock, &stop](core::Duration d) { clock.SleepUntil(clock.Now() + d, &stop); };
  // A Stop() before the server runs would be lost, so wait for it to run (or to fail).
  while (!server.running() && !serve_returned.load()) sleep(std::chrono::milliseconds(5));
  while (!stop.load() && !serve_returned.load()) {
    if (each_tick) each_tick();
    agent.Tick();
    sleep(kAgentTickPeriod);
  }
  const bool failed = serve_returned.load();
  if (failed) spdlog::error("the HTTP server stopped unexpectedly");
  spdlog::info("stopping: no longer serving");
  server.Stop();
  serving.join();
  auto lines = agent.Shutdown();
  if (!lines) {
    spdlog::error("restoring the original GPU settings failed (state file kept): {}",
                  lines.error().message());
    return core::Fail(lines.error());
  }
  for (const std::string& line : *lines) spdlog::info("restored original {}", line);
  spdlog::info("original GPU settings restored; state file removed");
  if (failed) return core::Fail(core::Error::Internal("the HTTP server stopped unexpectedly"));
  return core::Ok();
}

}  // namespace headroom::service
