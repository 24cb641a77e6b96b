// Scenario: everything a row simulation or a capacity plan needs, as one YAML file
// (data/scenarios/*.yaml, compiled into the binary; see docs/row-simulator.md for every key):
// the row (server type, count, power budget), how a model is served on it, the workload (traces,
// per-server load, priorities), power delivery and control latencies, policy constants and the
// SLO that a plan must keep. Parsing is strict (unknown keys and bad values are errors naming
// file:line:field). Thread-compatible value types.
#ifndef HEADROOM_SIM_SCENARIO_H_
#define HEADROOM_SIM_SCENARIO_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "catalog/hardware_catalog.h"
#include "catalog/inference_fits.h"
#include "catalog/model_catalog.h"
#include "core/result.h"
#include "policy/energy_saver.h"
#include "policy/policy_params.h"
#include "sim/request_source.h"
#include "sim/row_simulator.h"
#include "sim/trace_synth.h"

namespace headroom::sim {

// What a plan must keep, relative to the uncapped baseline at the same per-server load.
struct Slo {
  double hp_p50_e2e_pct = 1.0;  // POLCA: HP P50 impact < 1%
  double hp_p99_e2e_pct = 5.0;
  double lp_p50_e2e_pct = 5.0;
  std::uint64_t max_brake_events = 0;  // POLCA: zero brakes
};

// Sets one bound from "key=value" (the keys of the scenario's `slo` section); a negative or
// non-numeric value, or an unknown key, is kInvalidArgument naming it.
[[nodiscard]] core::Status SetSlo(Slo& slo, std::string_view key_value);

// Sets one serving setting from "key=value" (--serving): tp, instances_per_server,
// max_batch_sequences, max_prefill_tokens, max_num_batched_tokens, memory_fraction,
// prefix_shared_tokens, prefix_hit_rate, overhead_per_request and overhead_per_prompt_token
// (durations with units). An unknown key or a malformed value is kInvalidArgument naming it; the
// settings together are checked when the scenario is resolved.
// The key is remembered as set (Scenario::serving_given): the engine's defaults no longer
// replace it.
struct Scenario;
[[nodiscard]] core::Status SetServing(Scenario& scenario, std::string_view key_value);

enum class PriorityAssignment { kByService, kByTrace, kByFraction };
// How a real trace's requests arrive: scaled to the per-server rates (kScaled: the row's load
// grows with its servers), or replayed exactly as recorded (kAsRecorded: a user's own request
// log, each request at its arrival with its prompt, output and cached tokens, whatever the row's
// size). Scenario key `workload.replay` (scaled, as-recorded); `simulate --as-recorded`.
enum class WorkloadReplay { kScaled, kAsRecorded };

struct WorkloadConfig {
  PriorityAssignment priority = PriorityAssignment::kByService;
  std::string hp_trace = "azure-conv";  // by-service: the HP and LP traces
  std::string lp_trace = "azure-code";
  std::string trace;                 // by-trace / by-fraction: one trace
  double hp_request_fraction = 0.5;  // by-fraction
  // as-recorded: one trace (`trace`, or --trace) with priorities by-trace; a request whose
  // trace gives it no priority is low priority (a one-server row's lone server is LP).
  WorkloadReplay replay = WorkloadReplay::kScaled;
  // Load: requests/s per server of each class (long-run mean). The row's load grows with its
  // servers: each added server brings the same load.
  double hp_rate_per_server = 1.0;
  double lp_rate_per_server = 1.0;
  // Synthesize long traces from the real ones (absent: replay the real traces, scaled).
  std::optional<SynthParams> synth;
  double target_baseline_peak = 0;  // documentation of the calibration (plan --calibrate)
  // Not a key: only the synthesized trace's arrivals in [begin, end) of its own time, stamped
  // from begin (SynthParams::window_begin): a power verdict's window (sim/power_verdict.h).
  struct Window {
    core::Duration begin{};
    core::Duration end{};
  };
  std::optional<Window> synth_window;
};

// A demand-response event each policy's answer is asked to hold (plan.demand_response, `plan
// --shed`, sim/demand_response.h): give up `shed` of the provisioned budget within
// `comply_within`, for `length`.
struct DemandResponse {
  double shed = 0;
  core::Duration length{std::chrono::hours(3)};
  core::Duration comply_within{std::chrono::seconds(60)};
};

// kInvalidArgument unless the shed is in (0, 1), the event lasts (0, 24h] and the time to
// comply is positive and shorter than the event.
[[nodiscard]] core::Status CheckDemandResponse(const DemandResponse& d);

// The energy saver on every server (scenario section `energy_saver:`, `simulate --energy-saver
// KEY=VALUE`; RowConfig::energy_saver): its SLOs and pace, and the span of clocks it chooses from.
// Keys: itl_p50_slo and ttft_p99_slo (durations, required), margin (0-1), settle, stale_after,
// breach_memory (durations), floor and step (fractions of the GPU's highest clock), phase_aware
// (true/false), prefill_boost (the clock's switch latency, a duration), lp_itl_p50_slo and
// lp_ttft_p99_slo (the LP servers', when theirs differ), ttft_window (a duration).
struct EnergySaverScenario {
  policy::EnergySaverSettings settings;  // clocks filled in by Resolve
  double floor = 0.5;
  double step = 0.05;
  bool phase_aware = false;                     // RowConfig::energy_saver_phase_aware
  std::optional<core::Duration> prefill_boost;  // RowConfig::energy_saver_prefill_boost
  std::optional<double> lp_itl_p50_slo_s;
  std::optional<double> lp_ttft_p99_slo_s;
  core::Duration ttft_window = std::chrono::minutes(5);
};
[[nodiscard]] core::Status SetEnergySaver(Scenario& scenario, std::string_view key_value);

// A stressed copy of a planning week that a plan must also survive: the same seed as planning
// week 1, with more load, another HP/LP mix, or larger or more frequent bursts.
struct StressCase {
  std::string name;
  double hp_load = 1;  // factor on the HP per-server rate (`load` sets both)
  double lp_load = 1;
  // Synthesized workloads only: replace the scenario's synth values.
  std::optional<double> bursts_per_day;
  std::optional<double> burst_size;
  std::optional<core::Duration> burst_length;
  std::optional<double> peak_to_trough;
  bool operator==(const StressCase&) const = default;
};
// The keys a stress case takes besides its name, as in `plan.stress` and --stress.
inline constexpr std::string_view kStressKeys[] = {
    "load", "hp_load", "lp_load", "bursts_per_day", "burst_size", "burst_length", "peak_to_trough"};
// Sets `key` of `c` from its text ("1.1", "3m"); kInvalidArgument naming the key and the range.
[[nodiscard]] core::Status SetStressKey(StressCase& c, std::string_view key,
                                        std::string_view value);
// "growth:load=1.1", "bursts:burst_size=3,bursts_per_day=24" (the --stress flag's form).
[[nodiscard]] core::Result<StressCase> ParseStressCase(std::string_view spec);
// "growth (load x1.1)", "bursts (burst_size 3, bursts_per_day 24)".
std::string DescribeStress(const StressCase& c);

struct Scenario {
  std::string name;
  std::string description;
  std::string source;  // file it came from

  std::string server = "dgx-a100";
  int servers = 40;
  std::optional<double> budget_w;     // provisioned row power
  std::optional<int> budget_servers;  // or: this many servers' max system power
  double hp_server_fraction = 0.5;
  // The rest of each server (besides its GPUs) at idle and with every GPU at TDP, over the
  // catalog's non_gpu_idle_w and non_gpu_power_w (model::NonGpuPower).
  std::optional<double> non_gpu_idle_w;
  std::optional<double> non_gpu_at_load_w;

  std::string model = "llama2-70b";
  std::string engine = std::string(catalog::kDefaultEngine);  // its calibration (data/fits/)
  InstanceConfig instance;
  // The serving keys the file or --serving set: the engine's scheduler defaults
  // (catalog::SchedulerDefaults) fill in the others when the scenario is resolved.
  std::set<std::string> serving_given;
  RouterKind router = RouterKind::kLeastWork;

  WorkloadConfig workload;
  PowerDeliveryConfig power;                                     // budget filled in by Resolve
  std::vector<std::pair<std::string, double>> policy_overrides;  // policy_params.h keys
  Slo slo;
  std::vector<std::string> plan_policies;
  int plan_max_extra_pct = 60;  // search up to servers x (1 + this/100)
  // Weeks of a synthesized workload (seeds seed, seed + 1, ...) every count the search keeps must
  // pass, and unseen weeks (seeds from seed + kValidationSeedOffset) its answer is checked on.
  // The unseen weeks are judged on their power alone (sim/power_verdict.h): absent, as many as a
  // count needs, all clean, to bound its weekly risk at plan_max_weekly_risk (CleanWeeksNeeded).
  int plan_weeks = 1;
  std::optional<int> plan_validate_weeks;
  // A count fits only if the chance of a power event in a week, bounded from its unseen weeks at
  // this confidence (one-sided, Clopper-Pearson), is at most this.
  double plan_max_weekly_risk = 0.05;
  double plan_confidence = 0.95;
  // The risk on the unseen weeks at every count within this many servers of each policy's answer
  // (and at the chosen policy's answer), for the risk table and curve.
  int plan_risk_beyond = 0;
  // Stress cases every count the search keeps must also pass (plan.stress).
  std::vector<StressCase> plan_stress;
  // Where the plan's simulations run when `plan --executor` is not given (plan.executor):
  // "local" or "slurm" with Slurm's options (app/plan_executor.h); empty kind: local.
  struct Executor {
    std::string kind = {};
    std::string work_dir = {};
    std::string partition = {};
    std::string account = {};
    std::string time_limit = {};
    int tasks_at_once = 0;
    int retries = 2;
    std::vector<std::string> sbatch_args = {};
    int runs_per_task = 0;
  };
  Executor plan_executor;
  std::optional<EnergySaverScenario> energy_saver;
  // plan.demand_response: {shed: 25%, for: 3h, comply_within: 60s}; none when absent.
  std::optional<DemandResponse> plan_demand_response;
  std::uint64_t seed = 1;
};

// The scenario under the stress case; kInvalidArgument when it changes the synthesized shape of
// a workload that replays real traces.
[[nodiscard]] core::Result<Scenario> Stressed(const Scenario& scenario, const StressCase& c,
                                              std::string_view trace);

[[nodiscard]] core::Result<Scenario> ParseScenario(std::string_view text, std::string source);
// A scenario compiled into the binary by name (e.g. "polca-a100-row"), else a file.
[[nodiscard]] core::Result<Scenario> LoadScenario(std::string_view name_or_path);
// The text of a built-in scenario by name, else of a file, and where it came from.
struct ScenarioFile {
  std::string text;
  std::string source;
};
[[nodiscard]] core::Result<ScenarioFile> ReadScenarioFile(std::string_view name_or_path);
std::vector<std::string> ScenarioNames();
inline constexpr std::string_view kDefaultScenario = "polca-a100-row";

struct Catalogs {
  const catalog::HardwareCatalog* hardware = nullptr;
  const catalog::ModelCatalog* models = nullptr;
  const catalog::EngineCatalog* engines = nullptr;
};

// A scenario bound to the catalog: the row to simulate and the policy constants for its GPU
// type (DefaultParamsFor, then the scenario's overrides, validated).
struct ResolvedScenario {
  Scenario scenario;
  RowConfig row;
  policy::PolicyParams params;
};
[[nodiscard]] core::Result<ResolvedScenario> Resolve(const Scenario& scenario,
                                                     const Catalogs& catalogs);
// LoadScenario then Resolve against the catalogs compiled into the binary.
[[nodiscard]] core::Result<ResolvedScenario> LoadAndResolveBuiltIn(std::string_view name_or_path);

// The seed of a plan's unseen week v (0-based): far from any planning week's seed + k.
inline constexpr std::uint64_t kValidationSeedOffset = 1000;
inline constexpr int kMaxPlanWeeks = 100;
// Unseen weeks a plan may judge a count on (a weekly risk of 0.05% at 95% needs 5,990).
inline constexpr int kMaxUnseenWeeks = 10'000;
inline constexpr int kMaxRiskBeyond = 100;

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_SCENARIO_H_
