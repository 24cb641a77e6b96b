// What `headroom agent` composes around the Agent: its settings checked, each device bound to its
// catalog ranges and failsafe clock, and the daemon's loop (serve the API, tick the agent, and on a
// stop request or a dead server stop serving and restore the GPUs). Logs through spdlog.
#ifndef HEADROOM_SERVICE_AGENT_DAEMON_H_
#define HEADROOM_SERVICE_AGENT_DAEMON_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "catalog/hardware_catalog.h"
#include "core/result.h"
#include "core/time.h"
#include "gpu/device.h"
#include "service/agent.h"
#include "service/agent_settings.h"
#include "service/engine_metrics.h"
#include "service/engine_proxy.h"
#include "service/http_server.h"

namespace headroom::service {

struct EngineMetricsSettings {
  std::string url;
  core::Duration interval{std::chrono::seconds(10)};
  EngineMetricNames names;
};

// --engine-proxy: where the agent takes the engine's requests, and the engine they go on to.
// The longest drain asked for: a stop must not wait on it for longer than a service manager does.
inline constexpr core::Duration kMaxEngineProxyDrain = std::chrono::minutes(10);

struct EngineProxySettings {
  ListenAddress listen;
  std::string upstream;  // http(s)://HOST[:PORT]
  int workers = 256;
  core::Duration drain = std::chrono::seconds(20);  // AgentDaemonExtras::drain
};

struct AgentSettings {
  AgentOptions agent;
  ListenAddress listen;
  std::string token;
  std::optional<TlsFiles> tls;
  std::optional<EngineMetricsSettings> engine;  // --engine-metrics given
  std::optional<EngineProxySettings> proxy;     // --engine-proxy given
};

// The settings checked: the token read, the address, priority and durations parsed (delay >= 0,
// interval > 0), the TLS pair complete, the engine metrics URL well formed. kInvalidArgument naming
// the setting by its flag
// (--token-file, --priority, ...); the token file's own errors. `backend` is reported only.
[[nodiscard]] core::Result<AgentSettings> ResolveAgentSettings(const AgentSettingsText& text,
                                                               const std::string& backend);

// The catalog's ranges for each device and its failsafe clock: `failsafe` (MHz) when given, else
// the policy's LP T2 clock for that GPU type. kNotFound naming a GPU the catalog lacks;
// kOutOfRange naming --failsafe-sm-clock when it is outside a GPU's range.
[[nodiscard]] core::Result<std::vector<AgentGpu>> AgentGpusOf(
    const std::vector<std::unique_ptr<gpu::Device>>& devices,
    const catalog::HardwareCatalog& catalog, std::optional<double> failsafe_mhz);

// Scrapes the serving engine every `settings.interval` on a thread of its own (each GET bounded
// by the interval, at most 2 s) and hands each result to the agent, until destroyed (joins).
// REQUIRES: `agent` and `clock` outlive it; `clock` really sleeps (not a FakeClock).
class EngineScrapeLoop {
 public:
  EngineScrapeLoop(Agent& agent, const EngineMetricsSettings& settings, core::Clock& clock);
  ~EngineScrapeLoop();
  EngineScrapeLoop(const EngineScrapeLoop&) = delete;
  EngineScrapeLoop& operator=(const EngineScrapeLoop&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Serves the engine proxy in front of the serving engine on a thread of its own, telling the agent
// of each prompt and its first token (the prefill boost), until destroyed (stops and joins).
// Create fails as EngineProxy::Create and Bind do (a bad URL, an address in use).
class EngineProxyLoop {
 public:
  // REQUIRES: `agent` outlives the loop.
  [[nodiscard]] static core::Result<std::unique_ptr<EngineProxyLoop>> Create(
      Agent& agent, const EngineProxySettings& settings);
  ~EngineProxyLoop();
  EngineProxyLoop(const EngineProxyLoop&) = delete;
  EngineProxyLoop& operator=(const EngineProxyLoop&) = delete;

  int port() const { return port_; }
  std::string Metrics() const { return proxy_->Metrics(); }
  // EngineProxy::Drain() and in_flight(), and how long a stop may drain it (--engine-proxy-drain).
  void Drain() { proxy_->Drain(); }
  int in_flight() const { return proxy_->in_flight(); }
  core::Duration drain() const { return drain_; }

 private:
  class Signal final : public PromptSignal {
   public:
    explicit Signal(Agent& agent) : agent_(agent) {}
    void PromptArrived() override { agent_.PromptArrived(); }
    void FirstTokenLeft() override { agent_.FirstTokenLeft(); }

   private:
    Agent& agent_;
  };
  explicit EngineProxyLoop(Agent& agent) : signal_(agent) {}

  Signal signal_;
  std::unique_ptr<EngineProxy> proxy_;
  int port_ = 0;
  core::Duration drain_{0};
  std::atomic<bool> served_{false};  // Serve() returned (it may, failing, before it ever ran)
  std::thread thread_;
};

// How late a lease expiry or a delayed change may be noticed.
inline constexpr core::Duration kAgentTickPeriod = std::chrono::milliseconds(100);

// What the agent's loop runs beside the agent.
struct AgentDaemonExtras {
  std::function<void()> each_tick;  // every tick, when given
  // The engine proxy to drain when asked to stop, for its drain() at most (0: not at all): the
  // agent goes on ticking (leases, caps, the saver and its boost) while the answers under way
  // finish, and stops once none is left or the time is up, cutting what is left.
  EngineProxyLoop* proxy = nullptr;
  // Turns true when asked again to stop: the drain ends at once (null: never).
  const std::atomic<bool>* stop_at_once = nullptr;
};

// Serves `server` on a thread of its own and ticks the agent (and the extras) every
// kAgentTickPeriod until `stop` (and the proxy's drain) or the server ends; then stops serving and
// restores the GPUs (Agent::Shutdown). kInternal when the server stopped by itself or the
// restore failed.
[[nodiscard]] core::Status RunAgentDaemon(Agent& agent, AgentHttpServer& server, core::Clock& clock,
                                          const std::atomic<bool>& stop,
                                          const AgentDaemonExtras& extras = {});

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_AGENT_DAEMON_H_
