// What `headroom measure --engine-metrics URL --duration D` does below its flags (issue 51):
// watches a running serving engine from outside for D, scraping its Prometheus metrics every
// interval and reading the local GPUs' energy counters at each scrape, and fits what a prompt
// token, a generated token and idle time cost (telemetry::TokenEnergyFit). The request is a
// plain struct that `headroom` registers; WatchEngine itself is compiled into
// headroom_app_daemons, since the GET goes through service::EngineScraper and only
// headroom-daemon links the HTTP and TLS stack (`headroom measure --engine-metrics` execs it,
// cli/measure_command.h). Not thread-safe (one watch at a time).
#ifndef HEADROOM_APP_ENGINE_WATCH_H_
#define HEADROOM_APP_ENGINE_WATCH_H_

#include <atomic>
#include <functional>
#include <string>

#include "app/context.h"
#include "core/result.h"
#include "report/token_energy_report.h"

namespace headroom::app {

struct EngineWatchRequest {
  std::string catalog_dir = {};  // empty: the built-in catalog
  BackendOptions backend = {};
  std::string url = {};       // --engine-metrics
  std::string duration = {};  // --duration, > 0
  std::string interval = "5s";
  // The engine's counters and gauges (vLLM's by default, as the agent's --engine-*-metric).
  std::string prompt_tokens_metric = "vllm:prompt_tokens_total";
  std::string generation_tokens_metric = "vllm:generation_tokens_total";
  std::string running_metric = "vllm:num_requests_running";
  std::string waiting_metric = "vllm:num_requests_waiting";
  const std::atomic<bool>* stop = nullptr;  // ends the watch early (what was seen is kept)
  std::function<void(const std::string&)> on_warning = {};
};

// kInvalidArgument naming the flag for a bad URL, duration, interval or metric name; the
// engine's own error (kUnavailable, kInvalidArgument for a page that is not its metrics) when
// its first scrape fails; a GPU's error when its energy counter cannot be read at the start.
// Later failed scrapes or reads drop the windows around them and are counted.
[[nodiscard]] core::Result<report::TokenEnergyWatch> WatchEngine(const EngineWatchRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_ENGINE_WATCH_H_
