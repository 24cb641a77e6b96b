// Agent: the node agent's core, independent of HTTP and of the real clock. It validates caps
// requests, applies them to the GPUs through gpu::Device (the original settings saved to the
// state file at start), confirms them by reading back, keeps requests idempotent by request_id,
// runs the lease (an expired lease applies the failsafe clock cap) and the actuation delay, and
// puts the original settings back on DeleteCaps, on Shutdown and, after a crash, on the next start.
// With the engine's metrics it also fits the server's J per token, and with the energy saver
// configured steps policy::EnergySaver on the engine's latencies (agent_energy.cc).
// Thread-safe: HTTP handler threads and the ticker thread call it concurrently (one mutex; device
// I/O happens under it, which serializes control changes).
//
// Invariants: a request that fails parsing or validation changes nothing; the state file exists
// on disk from Create() until a clean Shutdown(), so no write stands between a request and the
// GPUs and its presence at start means a crash; every value
// written to a device lies within the GPU's catalog range (checked before any change); the
// energy saver's clock never raises a GPU above the row's cap (the lock is the lower of the two),
// and nothing of the agent's own is applied after Shutdown.
#ifndef HEADROOM_SERVICE_AGENT_H_
#define HEADROOM_SERVICE_AGENT_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "core/thread_annotations.h"
#include "core/time.h"
#include "gpu/device.h"
#include "gpu/listing.h"
#include "model/gpu_spec.h"
#include "policy/energy_saver.h"
#include "service/agent_config.h"
#include "service/caps_request.h"
#include "service/engine_metrics.h"
#include "service/state_file.h"
#include "telemetry/token_energy_meter.h"

namespace headroom::telemetry {
class PrometheusWriter;
}

namespace headroom::service {

struct AgentGpu {
  gpu::Device* device = nullptr;  // not owned; must outlive the Agent
  model::GpuSpec spec;            // ranges and brake clock
  core::Megahertz failsafe_clock{0};
};

// The energy saver as the agent runs it (flags --energy-saver-*, agent.yaml's energy_saver:):
// one policy::EnergySaver for the server, stepped every tick on its engine's last latency window.
struct EnergySaverOptions {
  double itl_p50_slo_s = 0;
  double ttft_p99_slo_s = 0;
  double margin = 0.1;
  core::Duration settle{std::chrono::seconds(30)};
  // A window older than this is distrusted (the highest clock): three scrapes missed.
  core::Duration stale_after{std::chrono::seconds(30)};
  // The clock ladder, as the simulator's (policy::EnergySaverClocks, scenario energy_saver: floor
  // and step, whose defaults these are; issue 51's brief): the highest clock, then steps of about
  // 5% of it, down to half of it.
  double floor_share = 0.5;  // of the highest clock
  double step_share = 0.05;  // of the highest clock
  // The agent sees each prompt arrive and its first token leave (EngineProxy in front of the
  // engine): the saver's clock is lifted while any prompt waits, so that prefill runs at the
  // highest clock the row allows and the saver lowers only decode's (the simulator's
  // energy_saver prefill_boost). The first token's latency is then the boost's to keep, not the
  // saver's: it steps on the inter-token latency alone.
  bool prefill_boost = false;
};

struct AgentOptions {
  std::string state_file = "/var/lib/headroom/agent-state.json";
  std::string priority = "lp";  // "hp" or "lp"; reported only
  std::string backend = "sim";  // reported only
  core::Duration actuation_delay{0};
  core::Duration sample_interval{std::chrono::seconds(1)};
  // Applied at start to every GPU with power smoothing (the others say so in the log and are
  // left alone); restored with the other settings at shutdown, kept across DELETE /v1/caps.
  std::optional<PowerSmoothingConfig> power_smoothing = {};
  // The energy saver, when configured (it needs the engine's metrics). Its clock is a cap like
  // the controller's: the lock held is the lower of the two, restored like every other setting.
  std::optional<EnergySaverOptions> energy_saver = {};
};

// The energy saver's settings for these GPUs (nullopt when `options` is): the simulator's clock
// ladder for their type (policy::EnergySaverClocks), each clock the highest the first GPU
// supports at or below it. kInvalidArgument when the GPUs are of more than one type, it supports
// none of them or the settings are refused; a device error reading its clocks.
[[nodiscard]] core::Result<std::optional<policy::EnergySaverSettings>> EnergySaverSettingsFor(
    const std::vector<AgentGpu>& gpus, const std::optional<EnergySaverOptions>& options);

// Number of request_ids remembered for idempotency: at one request a second this covers the
// last ~17 minutes of retries, far more than any client retry window.
inline constexpr size_t kRememberedRequests = 1024;

class Agent {
 public:
  // If the state file exists (the previous agent did not exit cleanly), first restores the
  // settings it holds and removes it, logging what it restored; fails if that is impossible
  // (then the GPUs need a person). Then reads the original settings it will restore later and
  // saves them to the state file (failing, kInvalidArgument, when it cannot be written). Then
  // applies the config's power smoothing where the GPUs have it (failing, the originals
  // restored, when a GPU that has it refuses), then the failsafe clock cap, held until the first
  // caps request (fails, the originals restored, when it cannot be applied). REQUIRES: every
  // gpus[i].device and clock outlive the Agent.
  [[nodiscard]] static core::Result<std::unique_ptr<Agent>> Create(std::vector<AgentGpu> gpus,
                                                                   AgentOptions options,
                                                                   core::Clock* clock);

  // PUT /v1/caps. Errors: kInvalidArgument (body), kNotFound / kOutOfRange (GPU, range),
  // kFailedPrecondition (request_id reused with another body); anything else is a device
  // failure. Success: {"result": "applied"|"scheduled", ...}.
  [[nodiscard]] core::Result<nlohmann::ordered_json> PutCaps(std::string_view body) EXCLUDES(mu_);
  // DELETE /v1/caps: drops pending changes, the lease and the failsafe, and restores the
  // original settings of every GPU.
  [[nodiscard]] core::Result<nlohmann::ordered_json> DeleteCaps() EXCLUDES(mu_);
  // Counts a request refused before reaching the agent (bad token) as rejected.
  void RecordRejected() EXCLUDES(mu_);
  // One scrape of the serving engine's metrics (EngineScraper, on the daemon's scrape thread):
  // its window is reported in State() ("serving") and Metrics(); a failed scrape reports none.
  // The GPUs' energy counters are read with it: consecutive good scrapes make a window of the
  // J/token fit ("token_energy"); its latencies are the energy saver's signal.
  void RecordEngineScrape(const core::Result<EngineSample>& scrape) EXCLUDES(mu_);

  // The prefill boost (EnergySaverOptions::prefill_boost), told by the engine proxy: a prompt
  // reached the engine; its first token left it (once for each prompt, whatever became of it).
  // The first prompt to wait lifts the saver's clock from the GPUs, the last first token puts it
  // back; neither changes anything where the saver holds the highest clock or is not boosting.
  void PromptArrived() EXCLUDES(mu_);
  void FirstTokenLeft() EXCLUDES(mu_);

  // Applies due delayed changes, expires the lease (-> failsafe), steps the energy saver and
  // refreshes telemetry every sample interval. Call often (the lease is as precise as the calls).
  void Tick() EXCLUDES(mu_);

  nlohmann::ordered_json State() EXCLUDES(mu_);
  std::string Metrics() EXCLUDES(mu_);

  // Restores every GPU and, if that succeeded, deletes the state file. Returns one line per GPU.
  [[nodiscard]] core::Result<std::vector<std::string>> Shutdown() EXCLUDES(mu_);

 private:
  struct Caps {
    std::optional<core::Megahertz> sm_clock;
    std::optional<core::Watts> power_limit;
    bool brake = false;
  };
  struct Readback {
    std::optional<gpu::ClockLock> lock;
    std::optional<core::Watts> power_limit;
    std::string mismatch;  // empty when the device shows what was asked
  };
  struct Pending {
    core::TimePoint due;
    CapsRequest request;
  };
  struct Remembered {
    std::string canonical_body;
    nlohmann::ordered_json response;
  };
  struct LastCommand {
    std::string request_id;
    std::string at;  // UTC, ISO 8601
    std::string result;
  };

  Agent(std::vector<AgentGpu> gpus, AgentOptions options, core::Clock* clock,
        std::vector<OriginalSettings> originals);

  // Caps every GPU at its failsafe clock until a caps request arrives; `why` is logged and
  // reported (State's failsafe_reason).
  core::Status EnterFailsafe(const std::string& why) EXCLUDES(mu_);
  core::Status FailsafeLocked(const std::string& why) REQUIRES(mu_);

  // The lock range to hold on GPU i (nullopt: the original), and its power limit target.
  std::optional<gpu::ClockLock> TargetLock(size_t i) const REQUIRES(mu_);
  core::Watts TargetPowerLimit(size_t i) const REQUIRES(mu_);
  core::Status ApplyGpu(size_t i) REQUIRES(mu_);
  core::Status ApplyAll() REQUIRES(mu_);
  core::Result<nlohmann::ordered_json> ApplyRequest(const CapsRequest& request) REQUIRES(mu_);
  // Puts the originals back; `keep_smoothing` leaves power smoothing as configured (DeleteCaps
  // lifts caps, not the config).
  core::Status RestoreLocked(std::vector<std::string>* lines, bool keep_smoothing) REQUIRES(mu_);
  // The config's power smoothing on every GPU that has it. Fails, naming the GPU, when a GPU
  // that has it refuses it; a GPU without it is logged and skipped.
  core::Status ApplyPowerSmoothing();
  void SampleLocked() REQUIRES(mu_);
  void Remember(const CapsRequest& request, const nlohmann::ordered_json& response) REQUIRES(mu_);
  void NoteCommand(const std::string& request_id, const std::string& result) REQUIRES(mu_);
  nlohmann::ordered_json GpuCapsJson(size_t i) const REQUIRES(mu_);
  std::vector<gpu::Device*> Devices() const;

  // The energy saver and the J/token fit (agent_energy.cc). The saver's clock is a cap on every
  // GPU (none while it holds its highest clock, is paused by DELETE /v1/caps or the agent has
  // stopped); the row's cap is the lowest the controller or the failsafe holds on any GPU.
  bool SaverActive() const REQUIRES(mu_);  // configured, not paused, not stopped
  std::optional<core::Megahertz> SaverCap() const REQUIRES(mu_);
  std::optional<core::Megahertz> RowCap() const REQUIRES(mu_);
  void StepEnergySaver(core::TimePoint now) REQUIRES(mu_);
  void ResetEnergySaver() REQUIRES(mu_);
  void RecordTokenEnergy(const core::Result<EngineSample>& scrape, core::TimePoint now)
      REQUIRES(mu_);
  nlohmann::ordered_json EnergySaverJson(core::TimePoint now) const REQUIRES(mu_);
  void TokenEnergyState(nlohmann::ordered_json& out) const REQUIRES(mu_);
  void EnergyMetrics(telemetry::PrometheusWriter& out) const REQUIRES(mu_);
  void BoostMetrics(telemetry::PrometheusWriter& out) const REQUIRES(mu_);
  core::Duration BoostedFor(core::TimePoint now) const REQUIRES(mu_);

  const std::vector<AgentGpu> gpus_;
  const std::vector<GpuRange> ranges_;
  const AgentOptions options_;
  core::Clock* const clock_;
  const std::vector<OriginalSettings> originals_;

  core::Mutex mu_;
  std::vector<Caps> caps_ GUARDED_BY(mu_);
  std::vector<Readback> readback_ GUARDED_BY(mu_);
  std::vector<gpu::GpuListing> listings_ GUARDED_BY(mu_);
  std::optional<core::TimePoint> next_sample_ GUARDED_BY(mu_);
  std::optional<core::TimePoint> lease_deadline_ GUARDED_BY(mu_);
  bool lease_expired_ GUARDED_BY(mu_) = false;
  bool failsafe_active_ GUARDED_BY(mu_) = false;
  std::string failsafe_reason_ GUARDED_BY(mu_);
  std::deque<Pending> pending_ GUARDED_BY(mu_);
  std::map<std::string, Remembered> remembered_ GUARDED_BY(mu_);
  std::deque<std::string> remembered_order_ GUARDED_BY(mu_);
  std::optional<LastCommand> last_command_ GUARDED_BY(mu_);
  bool engine_scraped_ GUARDED_BY(mu_) = false;  // an engine is configured and was scraped
  EngineWindow engine_ GUARDED_BY(mu_);
  std::map<std::string, std::uint64_t> commands_ GUARDED_BY(mu_);
  // Set once in Create, before the agent is shared.
  std::optional<policy::EnergySaverSettings> saver_settings_;
  std::optional<policy::EnergySaver> saver_ GUARDED_BY(mu_);
  std::optional<policy::ClockChoice> saver_choice_ GUARDED_BY(mu_);
  bool saver_paused_ GUARDED_BY(mu_) = false;  // by DELETE /v1/caps, until the next PUT
  bool stopped_ GUARDED_BY(mu_) = false;       // Shutdown ran: the saver applies nothing more
  // The prefill boost: prompts waiting for their first token; times the saver's clock was lifted
  // for them, and how long in all (the span under way counted from boosted_since_).
  int awaiting_first_ GUARDED_BY(mu_) = 0;
  std::uint64_t boosts_ GUARDED_BY(mu_) = 0;
  core::Duration boosted_ GUARDED_BY(mu_){0};
  std::optional<core::TimePoint> boosted_since_ GUARDED_BY(mu_);
  telemetry::TokenEnergyMeter token_energy_ GUARDED_BY(mu_);
  std::string energy_read_error_ GUARDED_BY(mu_);  // the last energy read's failure
};

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_AGENT_H_
