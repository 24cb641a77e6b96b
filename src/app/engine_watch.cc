#include "app/engine_watch.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "catalog/hardware_catalog.h"
#include "core/parse.h"
#include "service/engine_metrics.h"
#include "telemetry/token_energy_meter.h"

namespace headroom::app {
namespace {

struct WatchPlan {
  core::Duration duration{0};
  core::Duration interval{0};
  service::EngineMetricNames names;
};

core::Result<WatchPlan> CheckWatchRequest(const EngineWatchRequest& r) {
  if (auto url = service::CheckEngineMetricsUrl(r.url); !url) {
    return core::Fail(url.error().WithContext("--engine-metrics"));
  }
  WatchPlan plan;
  for (const auto& [flag, text, out] :
       {std::tuple{"--duration", &r.duration, &plan.duration},
        std::tuple{"--engine-metrics-interval", &r.interval, &plan.interval}}) {
    auto d = core::ParseDuration(*text);
    if (!d) return core::Fail(d.error().WithContext(flag));
    if (*d <= core::Duration::zero()) {
      return core::Fail(
          core::Error::InvalidArgument(fmt::format("{} {} must be > 0", flag, *text)));
    }
    *out = *d;
  }
  if (plan.interval > plan.duration) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--engine-metrics-interval {} is longer than --duration {}: no window",
                    r.interval, r.duration)));
  }
  plan.names = {.prompt_tokens = r.prompt_tokens_metric,
                .generation_tokens = r.generation_tokens_metric,
                .running = r.running_metric,
                .waiting = r.waiting_metric,
                .ttft = "",
                .itl = ""};
  for (const auto& [flag, name] :
       {std::pair{"--engine-prompt-tokens-metric", &plan.names.prompt_tokens},
        {"--engine-generation-tokens-metric", &plan.names.generation_tokens},
        {"--engine-running-metric", &plan.names.running},
        {"--engine-waiting-metric", &plan.names.waiting}}) {
    if (name->empty() || name->find_first_of(" \t{}\"") != std::string::npos) {
      return core::Fail(
          core::Error::InvalidArgument(fmt::format("{} '{}' is not a metric name", flag, *name)));
    }
  }
  return plan;
}

// The GPUs' rated idle power from the catalog, summed; nullopt when a GPU is not in it (the fit
// then measures idle power in token-free windows or fits it).
core::Result<std::optional<double>> RatedIdleW(
    const std::string& catalog_dir, const std::vector<std::unique_ptr<gpu::Device>>& devices) {
  HEADROOM_ASSIGN_OR_RETURN(const catalog::HardwareCatalog catalog, LoadCatalog(catalog_dir));
  double w = 0;
  for (const auto& d : devices) {
    if (!d->info().catalog_type) return std::optional<double>();
    auto spec = catalog.Gpu(*d->info().catalog_type);
    if (!spec) return std::optional<double>();
    w += (*spec)->idle_power.value();
  }
  return std::optional<double>(w);
}

// One scrape and the energy beside it.
core::Result<telemetry::TokenEnergyRead> Read(service::EngineScraper& scraper,
                                              const std::vector<gpu::Device*>& devices,
                                              core::Clock& clock) {
  auto sample = scraper.Scrape();
  if (!sample) {
    return core::Fail(core::Error(
        sample.error().code(),
        sample.error().message() + " (is the serving engine up, and is this its metrics URL?)"));
  }
  const core::TimePoint at = clock.Now();
  HEADROOM_ASSIGN_OR_RETURN(core::Joules energy, telemetry::SummedEnergy(devices));
  return telemetry::TokenEnergyRead{.at = at,
                                    .energy = energy,
                                    .prompt_tokens = sample->prompt_tokens,
                                    .generated_tokens = sample->generation_tokens,
                                    .iterations = sample->iterations.value_or(0)};
}

}  // namespace

core::Result<report::TokenEnergyWatch> WatchEngine(const EngineWatchRequest& r) {
  HEADROOM_ASSIGN_OR_RETURN(const WatchPlan plan, CheckWatchRequest(r));
  core::SystemClock clock;
  HEADROOM_ASSIGN_OR_RETURN(DeviceSet set, OpenDevices(r.catalog_dir, r.backend, &clock));
  HEADROOM_ASSIGN_OR_RETURN(const std::optional<double> rated_idle_w,
                            RatedIdleW(r.catalog_dir, set.devices));
  service::EngineScraper scraper(r.url, plan.names,
                                 std::min<core::Duration>(plan.interval, std::chrono::seconds(2)));
  // Every window of the watch is kept: it is as long as the user asked for.
  const auto windows = static_cast<std::size_t>(plan.duration / plan.interval) + 1;
  telemetry::TokenEnergyMeter meter(windows, rated_idle_w);
  std::vector<gpu::Device*> devices;
  for (const auto& d : set.devices) devices.push_back(d.get());
  auto first = Read(scraper, devices, clock);
  if (!first) return core::Fail(first.error());
  report::TokenEnergyWatch watch{.url = r.url, .gpus = static_cast<int>(set.devices.size())};
  ++watch.scrapes;
  meter.Add(*first);
  telemetry::TokenEnergyRead last = *first;
  bool continuous = true;  // no failed read since `last`
  const core::TimePoint end = first->at + plan.duration;
  for (core::TimePoint next = first->at + plan.interval; next <= end; next += plan.interval) {
    clock.SleepUntil(next, r.stop);
    if (r.stop != nullptr && r.stop->load()) break;
    auto read = Read(scraper, devices, clock);
    if (!read) {
      if (watch.failed_scrapes++ == 0 && r.on_warning) r.on_warning(read.error().message());
      meter.Drop();
      continuous = false;
      continue;
    }
    ++watch.scrapes;
    meter.Add(*read);
    if (continuous && read->prompt_tokens >= last.prompt_tokens &&
        read->generated_tokens >= last.generated_tokens) {
      watch.prompt_tokens += read->prompt_tokens - last.prompt_tokens;
      watch.generated_tokens += read->generated_tokens - last.generated_tokens;
      watch.energy_j += read->energy.value() - last.energy.value();
    }
    continuous = true;
    last = *read;
  }
  watch.seconds = core::ToSeconds(last.at - first->at);
  watch.windows = meter.offered();
  watch.fit = meter.Fit();
  if (!watch.fit || !watch.fit->split) watch.why = meter.why();
  return watch;
}

}  // namespace headroom::app
