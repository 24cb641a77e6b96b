// What `headroom monitor` does below its flags: the flags checked, the backend's GPUs opened (on
// simulated time with --virtual-time) and telemetry::RunMonitor's samples streamed to a stream as
// a table, CSV or JSON Lines until the duration is up or a stop is asked for. Not thread-safe.
#ifndef HEADROOM_APP_MONITOR_H_
#define HEADROOM_APP_MONITOR_H_

#include <atomic>
#include <ostream>
#include <string>

#include "app/context.h"
#include "core/result.h"

namespace headroom::app {

struct MonitorRequest {
  std::string catalog_dir = {};  // empty: the built-in catalog
  BackendOptions backend = {};
  std::string interval = {};  // as --interval, 10ms..60s
  std::string duration = {};  // as --duration; empty: until stopped
  std::string format = {};    // as --format: table, csv or jsonl
  bool virtual_time = false;  // simulated time, no waiting (sim backend, with a duration)
  const std::atomic<bool>* stop = nullptr;
  std::ostream* out = nullptr;  // where the samples go, a line each as they are taken
};

// Errors name the flag (kInvalidArgument), or the backend's or a GPU's error, which ends the
// stream. REQUIRES: out set.
[[nodiscard]] core::Status Monitor(const MonitorRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_MONITOR_H_
