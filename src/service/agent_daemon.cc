#include "service/agent_daemon.h"

#include <algorithm>
#include <thread>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/parse.h"
#include "policy/policy_params.h"
#include "policy/row_policy.h"
#include "service/auth.h"

namespace headroom::service {
namespace {

// The energy saver's flags checked; nullopt when its SLOs are not given.
core::Result<std::optional<EnergySaverOptions>> ResolveEnergySaver(
    const AgentSettingsText& text, const std::optional<EngineMetricsSettings>& engine) {
  if (text.energy_saver_itl_p50.empty() && text.energy_saver_ttft_p99.empty()) {
    return std::optional<EnergySaverOptions>();
  }
  const auto bad = [](std::string why) {
    return core::Fail(core::Error::InvalidArgument(std::move(why)));
  };
  if (text.energy_saver_itl_p50.empty() || text.energy_saver_ttft_p99.empty()) {
    return bad("the energy saver needs both --energy-saver-itl-p50 and --energy-saver-ttft-p99");
  }
  if (!engine) {
    return bad(
        "--energy-saver-itl-p50/--energy-saver-ttft-p99 need --engine-metrics: the energy saver "
        "reads the serving engine's latencies");
  }
  EnergySaverOptions o;
  for (const auto& [flag, value, out] :
       {std::tuple{"--energy-saver-itl-p50", &text.energy_saver_itl_p50, &o.itl_p50_slo_s},
        std::tuple{"--energy-saver-ttft-p99", &text.energy_saver_ttft_p99, &o.ttft_p99_slo_s}}) {
    auto d = core::ParseDuration(*value);
    if (!d) return core::Fail(d.error().WithContext(flag));
    if (*d <= core::Duration::zero()) return bad(fmt::format("{} must be > 0", flag));
    *out = core::ToSeconds(*d);
  }
  auto settle = core::ParseDuration(text.energy_saver_settle);
  if (!settle) return core::Fail(settle.error().WithContext("--energy-saver-settle"));
  if (*settle < core::Duration::zero()) return bad("--energy-saver-settle must be >= 0");
  if (!(text.energy_saver_margin >= 0 && text.energy_saver_margin < 1)) {
    return bad(fmt::format("--energy-saver-margin {} is outside [0, 1)", text.energy_saver_margin));
  }
  if (!(text.energy_saver_floor_percent > 0 && text.energy_saver_floor_percent <= 100)) {
    return bad(fmt::format("--energy-saver-floor-percent {} is outside (0, 100]",
                           text.energy_saver_floor_percent));
  }
  o.margin = text.energy_saver_margin;
  o.settle = *settle;
  o.floor_share = text.energy_saver_floor_percent / 100;
  o.stale_after = std::max<core::Duration>(std::chrono::seconds(30), 3 * engine->interval);
  return std::optional<EnergySaverOptions>(o);
}

// "http://127.0.0.1:8000/metrics" -> "http://127.0.0.1:8000": vLLM serves its API and its
// metrics on one port.
std::string UrlOrigin(std::string_view url) {
  const std::size_t host = url.find("://");
  const std::size_t path = url.find('/', host == std::string_view::npos ? 0 : host + 3);
  return std::string(url.substr(0, path));
}

// --engine-proxy and --engine-url checked; nullopt when no proxy is asked for.
core::Result<std::optional<EngineProxySettings>> ResolveEngineProxy(const AgentSettingsText& text) {
  const auto bad = [](std::string why) {
    return core::Fail(core::Error::InvalidArgument(std::move(why)));
  };
  if (text.engine_proxy.empty()) {
    if (!text.engine_url.empty())
      return bad("--engine-url is the engine proxy's: give --engine-proxy too");
    return std::optional<EngineProxySettings>();
  }
  auto listen = ParseListenAddress(text.engine_proxy);
  if (!listen) return core::Fail(listen.error().WithContext("--engine-proxy"));
  if (text.engine_proxy_workers < 1 || text.engine_proxy_workers > kMaxEngineProxyWorkers) {
    return bad(fmt::format("--engine-proxy-workers {} is outside 1-{}", text.engine_proxy_workers,
                           kMaxEngineProxyWorkers));
  }
  auto drain = core::ParseDuration(text.engine_proxy_drain);
  if (!drain) return core::Fail(drain.error().WithContext("--engine-proxy-drain"));
  if (*drain < core::Duration::zero() || *drain > kMaxEngineProxyDrain) {
    return bad(fmt::format("--engine-proxy-drain {} is outside 0s-{}", text.engine_proxy_drain,
                           core::FormatDuration(kMaxEngineProxyDrain)));
  }
  EngineProxySettings proxy{.listen = *listen,
                            .upstream = text.engine_url,
                            .workers = text.engine_proxy_workers,
                            .drain = *drain};
  if (proxy.upstream.empty()) {
    if (text.engine_metrics.empty()) {
      return bad(
          "--engine-proxy needs the engine's URL: --engine-url, or --engine-metrics (whose "
          "scheme, host and port it takes)");
    }
    proxy.upstream = UrlOrigin(text.engine_metrics);
  }
  // Refused here, before any GPU is touched.
  auto base = EngineBaseUrl(proxy.upstream);
  if (!base) {
    return core::Fail(
        base.error().WithContext(text.engine_url.empty() ? "--engine-metrics" : "--engine-url"));
  }
  proxy.upstream = *base;
  return std::optional<EngineProxySettings>(std::move(proxy));
}

}  // namespace

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
  if (!text.engine_metrics.empty()) {
    if (auto url = CheckEngineMetricsUrl(text.engine_metrics); !url) {
      return core::Fail(url.error().WithContext("--engine-metrics"));
    }
    auto every = core::ParseDuration(text.engine_metrics_interval);
    if (!every) return core::Fail(every.error().WithContext("--engine-metrics-interval"));
    if (*every <= core::Duration::zero()) {
      return core::Fail(core::Error::InvalidArgument("--engine-metrics-interval must be > 0"));
    }
    EngineMetricsSettings engine{
        .url = text.engine_metrics,
        .interval = *every,
        .names = {.prompt_tokens = text.engine_prompt_tokens_metric,
                  .generation_tokens = text.engine_generation_tokens_metric,
                  .running = text.engine_running_metric,
                  .waiting = text.engine_waiting_metric,
                  .ttft = text.engine_ttft_metric,
                  .itl = text.engine_itl_metric,
                  .iterations = text.engine_iterations_metric}};
    for (const auto& [flag, name] :
         {std::pair{"--engine-prompt-tokens-metric", &engine.names.prompt_tokens},
          {"--engine-generation-tokens-metric", &engine.names.generation_tokens},
          {"--engine-running-metric", &engine.names.running},
          {"--engine-waiting-metric", &engine.names.waiting},
          {"--engine-ttft-metric", &engine.names.ttft},
          {"--engine-itl-metric", &engine.names.itl},
          {"--engine-iterations-metric", &engine.names.iterations}}) {
      if (name->empty() || name->find_first_of(" \t{}\"") != std::string::npos) {
        return core::Fail(
            core::Error::InvalidArgument(fmt::format("{} '{}' is not a metric name", flag, *name)));
      }
    }
    s.engine = std::move(engine);
  }
  HEADROOM_ASSIGN_OR_RETURN(s.agent.energy_saver, ResolveEnergySaver(text, s.engine));
  HEADROOM_ASSIGN_OR_RETURN(s.proxy, ResolveEngineProxy(text));
  if (s.agent.energy_saver && s.proxy) s.agent.energy_saver->prefill_boost = true;
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

EngineScrapeLoop::EngineScrapeLoop(Agent& agent, const EngineMetricsSettings& settings,
                                   core::Clock& clock) {
  const core::Duration timeout =
      std::min<core::Duration>(settings.interval, std::chrono::seconds(2));
  thread_ = std::thread([this, &agent, &clock, settings, timeout] {
    EngineScraper scraper(settings.url, settings.names, timeout);
    bool failing = false;
    while (!stop_.load()) {
      const core::TimePoint next = clock.Now() + settings.interval;
      auto scrape = scraper.Scrape();
      // One line when the engine goes away and one when it is back, not one per scrape.
      if (!scrape && !failing) {
        spdlog::warn("{} (the policy ranks this server by its GPUs' power until it is back)",
                     scrape.error().message());
      } else if (scrape && failing) {
        spdlog::info("engine metrics {} are back", scraper.url());
      }
      failing = !scrape;
      agent.RecordEngineScrape(scrape);
      clock.SleepUntil(next, &stop_);
    }
  });
}

EngineScrapeLoop::~EngineScrapeLoop() {
  stop_.store(true);
  thread_.join();
}

core::Result<std::unique_ptr<EngineProxyLoop>> EngineProxyLoop::Create(
    Agent& agent, const EngineProxySettings& settings) {
  std::unique_ptr<EngineProxyLoop> loop(new EngineProxyLoop(agent));
  HEADROOM_ASSIGN_OR_RETURN(loop->proxy_, EngineProxy::Create({.upstream = settings.upstream,
                                                               .workers = settings.workers},
                                                              &loop->signal_));
  auto port = loop->proxy_->Bind(settings.listen);
  if (!port) return core::Fail(port.error().WithContext("--engine-proxy"));
  loop->port_ = *port;
  loop->drain_ = settings.drain;
  EngineProxyLoop* self = loop.get();
  loop->thread_ = std::thread([self] {
    self->proxy_->Serve();
    self->served_.store(true);
  });
  return loop;
}

EngineProxyLoop::~EngineProxyLoop() {
  if (!thread_.joinable()) return;
  // A Stop() before the proxy runs would be lost: wait for it to accept first.
  while (!proxy_->running() && !served_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  proxy_->Stop();
  thread_.join();
}

namespace {

// Whether the loop goes on after `stop`: while the proxy drains, up to its deadline (set here at
// the first call).
bool Draining(const AgentDaemonExtras& extras, core::Clock& clock,
              std::optional<core::TimePoint>* until) {
  if (extras.proxy == nullptr || extras.proxy->drain() <= core::Duration::zero()) return false;
  const core::Duration drain = extras.proxy->drain();
  if (!*until) {
    *until = clock.Now() + drain;
    extras.proxy->Drain();
    spdlog::info(
        "engine proxy draining for up to {} (--engine-proxy-drain): {} request(s) in flight, new "
        "ones refused (503)",
        core::FormatDuration(drain), extras.proxy->in_flight());
  }
  const int left = extras.proxy->in_flight();
  if (left == 0) {
    spdlog::info("engine proxy drained");
    return false;
  }
  if (extras.stop_at_once != nullptr && extras.stop_at_once->load()) {
    spdlog::warn("asked again to stop: cutting the engine proxy's {} request(s) in flight", left);
    return false;
  }
  if (clock.Now() < **until) return true;
  spdlog::warn("engine proxy still had {} request(s) in flight after {}: cutting them", left,
               core::FormatDuration(drain));
  return false;
}

}  // namespace

core::Status RunAgentDaemon(Agent& agent, AgentHttpServer& server, core::Clock& clock,
                            const std::atomic<bool>& stop, const AgentDaemonExtras& extras) {
  std::atomic<bool> serve_returned{false};
  std::thread serving([&server, &serve_returned] {
    server.Serve();
    serve_returned.store(true);
  });
  auto sleep = [&clock, &stop](core::Duration d) { clock.SleepUntil(clock.Now() + d, &stop); };
  // A Stop() before the server runs would be lost, so wait for it to run (or to fail).
  while (!server.running() && !serve_returned.load()) sleep(std::chrono::milliseconds(5));
  std::optional<core::TimePoint> drain_until;
  while (!serve_returned.load() && (!stop.load() || Draining(extras, clock, &drain_until))) {
    if (extras.each_tick) extras.each_tick();
    agent.Tick();
    // Asked to stop, the loop sleeps whole ticks while it drains, unless asked again.
    clock.SleepUntil(clock.Now() + kAgentTickPeriod, drain_until ? extras.stop_at_once : &stop);
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
