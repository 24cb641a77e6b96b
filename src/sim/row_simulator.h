// RowSimulator: a discrete-event simulation of one datacenter row of LLM inference servers under
// a power budget and a row controller (policy/). Servers host model instances; a router spreads
// requests over the instances of the request's priority class; each instance batches
// continuously (iteration-level batching, new prompts prefilled together with the running
// sequences' next decode step, limits on batch sequences, prefill tokens and KV-cache memory).
// Iteration time and GPU power come from the InferenceModel at the GPU's effective clock (clock
// cap, power brake, or the clock a power limit settles at). Row power is metered like a PDU
// (averaged over a period, seen by the controller after a delay) and the controller's targets take
// effect after the latency of their actuation path.
//
// Speed: between events nothing changes for an instance, so a run of decode steps up to the next
// completion is one event ("macro step", timed in closed form; see docs/row-simulator.md), cut
// short at the next step boundary when an arrival or a control change reaches the instance.
// Deterministic: the same config, source and policy give identical results.
// Thread-compatible: one simulator per thread; it reads the shared InferenceModel (immutable).
#ifndef HEADROOM_SIM_ROW_SIMULATOR_H_
#define HEADROOM_SIM_ROW_SIMULATOR_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "model/gpu_spec.h"
#include "model/inference_model.h"
#include "policy/budget_schedule.h"
#include "policy/energy_saver.h"
#include "policy/row_controller.h"
#include "policy/row_policy.h"
#include "sim/event_queue.h"
#include "sim/latency_histogram.h"
#include "sim/power_spectrum.h"
#include "sim/request_source.h"
#include "telemetry/engine_histogram.h"
#include "telemetry/token_energy.h"

namespace headroom::sim {

enum class RouterKind { kLeastWork, kLeastRequests, kRoundRobin };

// Prefix caching: the share of each prompt whose KV cache an instance already holds (a shared
// system prompt, earlier turns of a conversation), prefilled again by nobody. At most one of the
// two; the last prompt token is always computed (its logits make the first output token).
struct PrefixCacheConfig {
  int shared_prefix_tokens = 0;  // the first N tokens of every prompt
  double hit_rate = 0;           // this share of every prompt, in [0, 1)
};

// The serving process's own time per request, beside the engine's iterations (HTTP, chat
// template and tokenization before the first token; detokenization streams alongside): added to
// TTFT and E2E, holding no GPU.
struct ServerOverheadConfig {
  double per_request_s = 0;
  double per_prompt_token_s = 0;
  // Not set by the scenario or a flag: the engine calibration's own time per request
  // (InferenceEfficiency::server_request_s), filled in when the scenario is resolved.
  bool from_engine = true;
};

struct InstanceConfig {
  int tp = 8;  // GPUs per instance (tensor parallelism)
  // Instances per server; 0: as many as its GPUs hold (gpus / tp). Fewer leave GPUs idle (one
  // vLLM server on one GPU of a DGX: tp 1, 1 instance): they draw their idle power.
  int instances_per_server = 0;
  int max_batch_sequences = 128;  // running sequences per instance (vLLM's max_num_seqs scale)
  int max_prefill_tokens = 8192;  // prompt tokens one iteration may prefill (whole prompts)
  // Chunked prefill (vLLM V1, SGLang, TensorRT-LLM's in-flight batching), when above 0: each
  // iteration holds at most this many tokens, the running sequences' decode tokens first, then
  // prompt chunks in arrival order; a prompt longer than what is left goes on in the next
  // iteration (vLLM's max_num_batched_tokens). 0: whole prompts up to max_prefill_tokens per
  // iteration, a longer one alone (the 2023 stacks).
  int max_num_batched_tokens = 0;
  PrefixCacheConfig prefix_cache;
  ServerOverheadConfig overhead;
  double memory_fraction = 0.9;  // of GPU memory for weights + KV cache (vLLM's default)
  // Every GPU's SM clock locked here by its operator (nvidia-smi -lgc), MHz; 0: none. The row's
  // caps and the energy saver only lower it further.
  double sm_clock_lock_mhz = 0;
};

struct PowerDeliveryConfig {
  core::Watts budget{0};                               // provisioned row power
  SimTime telemetry_period = std::chrono::seconds(1);  // PDU averaging period
  SimTime telemetry_delay = std::chrono::seconds(0);   // until the controller sees a sample
  SimTime cap_delay = std::chrono::seconds(40);        // out-of-band clock/power caps
  SimTime brake_delay = std::chrono::seconds(5);       // power brake on or off
  bool in_band = false;                                // host-owned GPUs: caps via NVML
  SimTime in_band_delay = std::chrono::milliseconds(10);
  // Each server reports its engine's window (policy::ServingSignal: prefill share of tokens,
  // requests waiting and running) this often, as an agent scraping the engine's metrics would;
  // zero: no server reports one (the policy sees the GPUs' power only).
  SimTime engine_window = std::chrono::seconds(10);
  // When the grid asks the row for less than its budget (scenario power.budget_schedule), on the
  // simulator's clock (the trace's start as midnight of day 0).
  policy::BudgetSchedule budget_schedule;
  // The grid's ramp limit (policy::ControlSettings::ramp_up_w_per_s; 0: none) and its window.
  double ramp_up_w_per_s = 0;
  SimTime ramp_window = std::chrono::seconds(10);
};

// The serving engine whose calibration the model runs: named in every output (issue 45).
struct EngineName {
  std::string name;         // data/fits/<name>.yaml, e.g. "vllm"
  std::string version;      // the releases it describes, where known
  std::string description;  // how it was measured
  // "NAME" or "NAME VERSION", as catalog::InferenceFits::Label names it.
  std::string Label() const { return version.empty() ? name : name + " " + version; }
};

struct RowConfig {
  model::ServerSpec server;
  std::shared_ptr<const model::InferenceModel> model;
  EngineName engine;
  int servers = 1;
  double hp_server_fraction = 0.5;  // share of servers serving high-priority requests
  InstanceConfig instance;
  RouterKind router = RouterKind::kLeastWork;
  PowerDeliveryConfig power;
  // The step around the policy that the controller daemon runs too (policy/row_controller.h):
  // escalation to the brake when caps do not take over budget, and its release.
  policy::ControlSettings control;
  bool macro_steps = true;  // false: one event per decode iteration (the reference for tests)
  // The energy saver (policy::EnergySaver, issue 51) on every server, as the agent beside each
  // engine runs it: stepped at the end of each engine window (PowerDeliveryConfig::engine_window,
  // which must be set) on the window of the engine's own latency histograms, kept at vLLM's
  // bucket bounds (telemetry/engine_histogram.h) so that it reads what the agent reads; its clock
  // applied at once (the agent sets it through NVML in milliseconds), the row controller's clock
  // cap always winning. Absent: every server at the highest clock the row allows.
  std::optional<policy::EnergySaverSettings> energy_saver;
  // The saver's clock applies to decode-only iterations; those that prefill run at the highest
  // clock the row allows. An agent cannot do this from outside the engine (an iteration lasts
  // tens of milliseconds); an engine that sets the clock before each iteration could: the
  // simulator shows what that would be worth.
  bool energy_saver_phase_aware = false;
  // What an agent that sees each request pass (a proxy in front of the engine) can do instead:
  // hold an instance at the highest clock the row allows from this long after a request reaches
  // it (NVML's switch latency, and the agent's own) until this long after the last waiting
  // request's first token leaves, and at the saver's clock otherwise. An iteration under way when
  // the raise takes effect finishes at the higher clock; a run of decode steps ends at the change.
  // Absent: off.
  std::optional<SimTime> energy_saver_prefill_boost;
  // The LP servers' settings where they differ (their own SLOs); absent: energy_saver's.
  std::optional<policy::EnergySaverSettings> energy_saver_lp;
  // The TTFT P99 the saver reads is over this much of the engine's histogram (a P99 needs a few
  // hundred requests; an engine window holds a few dozen); the ITL P50 over the engine window.
  SimTime energy_saver_ttft_window = std::chrono::minutes(5);
};

// What the energy saver did over a run (RowConfig::energy_saver).
struct EnergySaverRun {
  std::vector<double> clocks_mhz;      // its clocks, highest first
  std::vector<double> server_seconds;  // by clock: server-seconds the saver held it
  std::uint64_t lowered = 0;           // steps down, all servers
  std::uint64_t raised = 0;            // steps back to the highest clock
  std::uint64_t row_cap_won = 0;       // server-windows where the row's cap was lower
  // RowConfig::energy_saver_prefill_boost: whether it ran, the times a waiting prompt lifted the
  // saver's lowered clock from an instance (as the agent counts its boosts), and the
  // instance-seconds until it was back (a span that outlasts the run by at most one switch
  // counted whole), of all the instances' seconds.
  bool prefill_boost = false;
  std::uint64_t boosts = 0;
  double boosted_instance_seconds = 0;
  double instance_seconds = 0;
  // The time-weighted mean of the saver's clock over the servers and the run.
  double MeanClockMhz() const {
    double seconds = 0;
    double weighted = 0;
    for (std::size_t k = 0; k < clocks_mhz.size() && k < server_seconds.size(); ++k) {
      seconds += server_seconds[k];
      weighted += server_seconds[k] * clocks_mhz[k];
    }
    return seconds > 0 ? weighted / seconds : 0;
  }
  double BoostedShare() const {
    return instance_seconds > 0 ? boosted_instance_seconds / instance_seconds : 0;
  }
};

// One request's outcome (per-request CSV).
struct RequestResult {
  double arrival_s = 0;
  int prompt_tokens = 0;
  int output_tokens = 0;
  Priority priority = Priority::kHigh;
  int server = 0;
  double ttft_s = 0;
  double tbt_s = 0;  // mean time between output tokens after the first; 0 with one token
  double e2e_s = 0;
};

struct ClassMetrics {
  LatencyHistogram ttft;
  LatencyHistogram tbt;
  LatencyHistogram e2e;
  std::uint64_t requests = 0;
  std::uint64_t rejected = 0;  // larger than an instance's KV-cache memory
  // Sequences evicted from a full KV cache, to be prefilled again (vLLM's num_preemptions).
  std::uint64_t preemptions = 0;
  double output_tokens = 0;
  double throughput_tok_s = 0;  // output tokens / arrival span
};

struct PowerSample {
  double time_s = 0;  // end of the metering period
  double row_w = 0;   // average over the period
  int state = 0;      // index into RowResult::states at the time of the sample
};

// Metered row power over a window of whole metering periods.
struct PowerWindow {
  double start_s = 0;
  double mean_w = 0;
  double max_w = 0;
};

// One occurrence of a lowered budget (PowerDeliveryConfig::budget_schedule) during a run: how
// the row met it. Metered samples are attributed by the start of their period.
struct BudgetEvent {
  std::string reason;
  double start_s = 0;
  double end_s = 0;
  double budget_w = 0;  // asked of the row
  double comply_within_s = 0;
  double power_before_w = 0;            // metered mean over the minute before it (0: none metered)
  policy::BudgetCompliance compliance;  // how fast and how well the row met it
  double energy_j = 0;                  // the row's, during it
  double metered_s = 0;                 // how much of it the run metered
  // The row's mean power over what was metered of it (0: nothing metered).
  double mean_w() const { return metered_s > 0 ? energy_j / metered_s : 0; }
  std::uint64_t brake_events = 0;
  std::uint64_t brake_events_before = 0;  // the run's count at its start
  // Metered time during it with every server braked, and the row's energy then: how much the
  // row draws at the brake's floor under this load.
  double braked_s = 0;
  double braked_energy_j = 0;
  // The E2E latency of the requests that arrived during it, per class.
  LatencyHistogram hp_e2e;
  LatencyHistogram lp_e2e;
};

// One server's energy per token over a run (RunOptions::attribute_token_energy): as the agent
// attributes it (telemetry::TokenEnergyFit over the engine windows' GPU energy and token
// counts), and the simulator's exact split of the same energy: each iteration's energy above
// its GPUs' idle power goes to the tokens it generated when it only decodes; an iteration that
// prefills gives its running sequences what a decode step alone would have cost them, and the
// rest to the prompt tokens.
struct ServerTokenEnergy {
  bool hp = false;
  std::optional<telemetry::TokenEnergy> fit;
  std::string why;  // no fit: why
  double prompt_tokens = 0;
  double generated_tokens = 0;
  double prompt_j = 0;     // above idle, exact
  double generated_j = 0;  // above idle, exact
  double idle_w = 0;       // the GPUs' idle power
  double TrueJPerPromptToken() const { return prompt_tokens > 0 ? prompt_j / prompt_tokens : 0; }
  double TrueJPerGeneratedToken() const {
    return generated_tokens > 0 ? generated_j / generated_tokens : 0;
  }
};

struct RowResult {
  int servers = 0;
  int hp_servers = 0;
  std::string policy;
  EngineName engine;       // RowConfig::engine
  InstanceConfig serving;  // RowConfig::instance: the scheduler's settings
  double duration_s = 0;   // arrival span of the trace
  double simulated_s = 0;  // including the drain after the last arrival
  double budget_w = 0;
  ClassMetrics hp;
  ClassMetrics lp;
  double energy_j = 0;  // row energy over the simulated span
  // The GPUs' energy in iterations, exact: those that decode only, and those that prefill (with
  // the running sequences' decode step beside them); idle time in neither. Tokens prefilled
  // (cached ones not) and generated, all servers.
  double decode_energy_j = 0;
  double prefill_energy_j = 0;
  double decode_seconds = 0;  // instance-seconds in decode-only iterations
  double prompt_tokens = 0;
  double generated_tokens = 0;
  std::optional<EnergySaverRun> energy_saver;   // RowConfig::energy_saver
  std::vector<ServerTokenEnergy> token_energy;  // RunOptions::attribute_token_energy, by server
  double peak_w = 0;                            // highest metered sample
  double mean_w = 0;
  // Largest rise of metered row power within one out-of-band actuation delay (40 s by
  // default): the production row's was 11.8% of its budget (brief §1).
  double max_rise_w = 0;
  // Largest rise from one metered sample to the next, per second (the row's ramp).
  double max_ramp_w_per_s = 0;
  // With a ramp limit (PowerDeliveryConfig::ramp_up_w_per_s): lifts held back, server-steps,
  // and the times the row rose faster than the limit on its own.
  std::uint64_t ramp_held_server_steps = 0;
  std::uint64_t load_ramps = 0;
  // The metered row power's swing in the grid's bands (sim/power_spectrum.h), from the kept
  // series (RunOptions::keep_power_series; none without it): 0.1-2 Hz and 3-30 Hz, each only up to
  // the metering's Nyquist frequency (swing_nyquist_hz: 0.5 Hz at the PDU's 1 s), so a band
  // above it is empty, not absent.
  double swing_nyquist_hz = 0;  // 0: not computed
  BandSwing swing_low;
  BandSwing swing_high;
  std::vector<PowerSample> power;  // every metered sample
  // RunOptions::power_window_periods samples each, reduced as the run goes (the last may hold
  // fewer): a week's power for a plot without keeping its 600,000 samples.
  std::vector<PowerWindow> power_windows;
  // Metered samples by row power as a fraction of the budget: bin b holds [b/20, (b+1)/20), the
  // last everything from 100% up. Kept whether or not the series is.
  std::vector<std::uint64_t> power_bins = std::vector<std::uint64_t>(21, 0);
  std::uint64_t power_samples = 0;
  std::vector<std::string> states;         // the policy's states
  std::vector<double> state_seconds;       // time in each state
  std::vector<policy::Event> events;       // policy state changes
  std::uint64_t brake_events = 0;          // steps at which the row went from no brake to a brake
  std::vector<BudgetEvent> budget_events;  // in time order
  // Every change of a server's target as decided (sent or not), in order
  // (RunOptions::keep_target_changes).
  struct TargetChange {
    SimTime at{0};
    int server = 0;
    policy::ServerTargets targets;
  };
  std::vector<TargetChange> target_changes;
  // With RunOptions::keep_target_changes: when the controller found a server holding other caps
  // than it had accepted (RunOptions::outside_commands) and sent its target again.
  std::vector<TargetChange> reasserted;
  double brake_seconds = 0;  // server-seconds with the brake on
  double over_budget_s = 0;  // metered time above the budget
  std::uint64_t over_budget_episodes = 0;
  std::uint64_t cap_actions = 0;     // commands that tighten a server's caps
  std::uint64_t uncap_actions = 0;   // commands that loosen them
  double capped_server_seconds = 0;  // server-seconds under a clock cap or power limit
  std::uint64_t events_processed = 0;
  bool stopped_early = false;    // RunOptions::stop_after_power_events: the metrics are partial
  std::uint64_t iterations = 0;  // decode/prefill iterations simulated
  // What the simulator planned, for the cost of a run (make bench): the iterations that prefill
  // (one event each), the runs of decode steps timed as one (one event each), and those runs cut
  // short where a prompt arrived or the clock changed.
  std::uint64_t prefill_iterations = 0;
  std::uint64_t decode_runs = 0;
  std::uint64_t interrupted_runs = 0;
  // By RunOptions::shadows: whether that policy never acted on this run, nor did the run's own
  // (so that a run under it would have been this one).
  std::vector<bool> quiet_shadows;
};

// A server's engine at the end of an engine window, as the agent would scrape it, and the energy
// saver's clock after its step on it (RunOptions::on_energy_saver): to replay to the agent's twin.
struct SaverStep {
  int server = 0;
  SimTime at{0};
  telemetry::LatencyHistogramSample itl;   // cumulative, vLLM's buckets
  telemetry::LatencyHistogramSample ttft;  // cumulative
  double prompt_tokens = 0;                // counters
  double generated_tokens = 0;
  core::Megahertz clock{0};
};

struct RunOptions {
  std::function<void(double fraction)> progress;         // called now and then; may be empty
  std::function<void(const RequestResult&)> on_request;  // every completed request; may be empty
  // What the row controller is shown at each step (to replay it to the daemon's twin); may be
  // empty.
  std::function<void(const policy::RowView&)> on_control_view;
  const std::atomic<bool>* stop = nullptr;  // set to abandon the run (kCancelled)
  double expected_duration_s = 0;           // for progress; 0 when unknown
  bool keep_power_series = true;
  int power_window_periods = 0;  // RowResult::power_windows; 0: none
  bool keep_target_changes = false;
  // Servers whose agent does not answer for a while (to run the daemon's faults in the
  // simulator): counted conservatively, sent nothing, caught up when back.
  struct Unreachable {
    int server = 0;
    SimTime from{0};
    SimTime length{0};
  };
  std::vector<Unreachable> unreachable;
  // Commands from outside the controller (another controller, a person's PUT, a replayed
  // request): server `server` is told at `at` to hold `targets`, through the same actuation path
  // as the controller's. The controller finds them in what the server holds (RowStep::reasserted).
  // REQUIRES: sorted by `at`.
  struct OutsideCommand {
    int server = 0;
    SimTime at{0};
    policy::ServerTargets targets;
  };
  std::vector<OutsideCommand> outside_commands;
  // Restarts the controller at this time: a fresh policy from make_policy, and the restart hold
  // of RowConfig::control over what the servers then hold (the daemon's restart, played here).
  std::optional<SimTime> restart_controller_at;
  std::function<std::unique_ptr<policy::RowPolicy>()> make_policy;
  // Stop early, with RowResult::stopped_early set, once brake events or over-budget episodes
  // exceed this: a capacity search needs no more of a run that has already failed its SLO.
  std::optional<std::uint64_t> stop_after_power_events;
  // Policies stepped beside the run's own on the very view it is shown, each until it would first
  // act (send a server a target other than what it holds, or brake). Until then a run under it
  // is this run, event for event: the row sees nothing of a policy but its commands. So a shadow
  // that never acts (RowResult::quiet_shadows) would have run exactly as this run did, which a
  // capacity plan need not simulate again. Not with restart_controller_at (none is quiet then).
  // REQUIRES: each outlives the run.
  std::vector<policy::RowPolicy*> shadows;
  // RowResult::token_energy: each server's engine windows (PowerDeliveryConfig::engine_window)
  // with their GPU energy, and the exact split to check the attribution against.
  bool attribute_token_energy = false;
  // The windows read for it end here (a run's steady state, e.g.); nullopt: the whole run.
  std::optional<SimTime> token_energy_until;
  // Each energy saver's step (RowConfig::energy_saver); may be empty.
  std::function<void(const SaverStep&)> on_energy_saver;
};

// Runs the whole source through the row. Requests of priority kUnspecified are an error; a
// class with requests but no servers is an error.
[[nodiscard]] core::Result<RowResult> SimulateRow(const RowConfig& config, RequestSource& source,
                                                  policy::RowPolicy& policy,
                                                  const RunOptions& options = {});

// How many of `servers` serve high-priority requests (hp_fraction clamped to [0, 1]); the
// simulator spreads them evenly: server s is HP when HpServers(s + 1) > HpServers(s).
int HpServers(int servers, double hp_fraction);

// The serving settings' own consistency (a token budget below one decode batch, a hit rate out of
// [0, 1), both prefix-cache forms at once, negative times): kInvalidArgument naming the key.
[[nodiscard]] core::Status ValidateServing(const InstanceConfig& instance);
// The prompt tokens of a `prompt`-token request that the prefix cache holds (at most prompt - 1):
// what its trace recorded (TraceRequest::cached_tokens) where it did, else the scenario's cache.
int CachedPrefix(const PrefixCacheConfig& cache, int prompt,
                 std::optional<int> recorded = std::nullopt);
// The serving process's own seconds for a request of `prompt` tokens.
double ServerOverheadSeconds(const ServerOverheadConfig& overhead, int prompt);

// Instances on each server of `gpus` GPUs (InstanceConfig::instances_per_server or gpus / tp), or
// kInvalidArgument naming the shape that does not fit the server.
[[nodiscard]] core::Result<int> InstancesPerServer(const InstanceConfig& instance, int gpus,
                                                   const std::string& server);

// KV-cache capacity of one instance, in tokens (0 when the weights alone do not fit).
double KvCapacityTokens(const RowConfig& config);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_ROW_SIMULATOR_H_
