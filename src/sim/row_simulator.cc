#include "sim/row_simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <utility>

#include <fmt/format.h>

#include "sim/least_work_table.h"
#include "telemetry/engine_histogram.h"
#include "telemetry/token_energy_meter.h"

namespace headroom::sim {
namespace {

using policy::ServerTargets;

enum class EventKind : std::uint8_t {
  kArrival,
  kIterationEnd,
  kTelemetry,
  kControl,
  kApplyCaps,
  kApplyBrake
};

struct Payload {
  EventKind kind;
  int index = 0;     // instance or server
  double value = 0;  // kControl: the metered row power
};

struct Request {
  SimTime arrival{0};
  double arrival_s = 0;
  int prompt = 0;
  int output = 0;
  int cached = 0;     // prompt tokens whose KV cache the instance already holds (prefix caching)
  int prefilled = 0;  // prompt tokens in the KV cache: the cached ones, then the chunks done
  // Output tokens made before its last preemption: prefilled again with the prompt (vLLM
  // recomputes a preempted sequence), and not made again.
  int resumed = 0;
  std::int64_t done_at_step = 0;  // the instance's step count at which its last token comes
  std::uint64_t order = 0;        // admission order, to break ties between completions
  SimTime first_token{0};
  Priority priority = Priority::kHigh;
  int server = 0;
  int budget_event = -1;  // RowResult::budget_events in force at its arrival; -1: none
  // Its cached tokens are the scenario's shared prefix (PrefixCacheConfig::shared_prefix_tokens),
  // whose KV cache the instance holds once for all the sequences that share it.
  bool shares_prefix = false;

  int KvPrompt() const { return prompt + resumed; }  // what its (next) prefill puts in KV
  int ToGenerate() const { return output - resumed; }
};

// One model instance and its continuous-batching scheduler.
struct Instance {
  int server = 0;
  std::deque<int> waiting;  // request slots, FIFO
  // Running sequences by the step at which they finish (earliest on top, ties in admission
  // order): an iteration's end touches only the sequences that finish, not the whole batch.
  struct Finish {
    std::int64_t step;
    std::uint64_t order;
    int slot;
    bool operator>(const Finish& o) const {
      return step != o.step ? step > o.step : order > o.order;
    }
  };
  std::priority_queue<Finish, std::vector<Finish>, std::greater<>> running;
  std::int64_t step = 0;      // decode steps (tokens per running sequence) so far
  std::vector<int> admitted;  // prefilled in the iteration under way
  std::vector<int> chunks;    // the prompt tokens of each of them prefilled in it
  // Chunked prefill: requests admitted whose prompt is not all prefilled yet, in arrival order
  // (only the last one's chunk of an iteration can leave some of it).
  std::deque<int> prefilling;
  // KV-cache tokens held, allocated as sequences grow (vLLM's paged blocks): the running
  // sequences' contexts, and the prompts of those admitted whose prefill is not done.
  double context = 0;
  double kv_pending = 0;
  // The shared prefix (Request::shares_prefix): the sequences in the cache that share it, their
  // cached tokens together, and of those the ones beyond the one copy held, which context and
  // kv_pending count but KvFree gives back (kept, not derived: KvFree is on the hot path).
  int prefix_sharers = 0;
  double prefix_tokens = 0;
  double kv_shared = 0;
  double outstanding = 0;  // tokens still to prefill or generate (router's "work")

  // The iteration (or run of decode steps) under way.
  bool busy = false;
  bool mixed = false;
  SimTime start{0};
  SimTime end{0};  // its end event's time
  int steps = 0;
  double first_step_s = 0;    // time of the first decode step of a run
  double per_first_step = 0;  // its reciprocal, for StepsDone's first guess
  int steps_seen = 0;         // StepsDone's last answer in this run: a lower bound, time only grows
  double step_growth_s = 0;   // increase of step time per step (the KV cache grows)
  double first_energy_j = 0;
  double energy_growth_j = 0;
  // RunOptions::attribute_token_energy: what a decode step alone would have cost the running
  // sequences of the iteration that prefills, above idle.
  double decode_share_j = 0;
};

// RowConfig::energy_saver_prefill_boost, per instance (kept apart: the hot path never reads it
// when the boost is off): requests routed here whose first token has not left, and the agent's
// spans of the highest clock for them, the last ([from, to), open while some await) and the one
// before: a switch takes effect its latency after the agent saw the arrival or the first token.
struct PrefillBoost {
  int awaiting_first = 0;
  SimTime from = SimTime::max();
  SimTime to = SimTime::max();
  SimTime was_from = SimTime::max();
  SimTime was_to = SimTime::max();
  bool lifted = false;  // the last raise lifted a lowered saver's clock (EnergySaverRun::boosts)
};

struct Server {
  bool hp = false;
  ServerTargets requested;  // what the controller last asked for
  ServerTargets effective;  // what the GPUs run under now
  std::deque<ServerTargets> pending_caps;
  std::deque<bool> pending_brake;
  int pending = 0;  // entries in the two queues: what the control step reads of them every second
  std::vector<int> instances;
  // Tokens its instances prefilled and generated, for its engine's window (PowerDeliveryConfig::
  // engine_window): the totals, those at the window's start, and the last window's signal.
  double prompt_tokens = 0;
  double generated_tokens = 0;
  double window_prompt_tokens = 0;
  double window_generated_tokens = 0;
  // RowConfig::energy_saver: its step, whose clock the GPUs run at under the row's cap, and the
  // engine's latency histograms.
  std::optional<policy::EnergySaver> saver;
  std::optional<telemetry::BucketCounter> ttft;
  std::optional<telemetry::BucketCounter> itl;
  std::optional<telemetry::EngineLatencyReader> latency;  // reads the two as the agent does
  double iterations = 0;                                  // its instances' iterations done
  // RunOptions::attribute_token_energy: the attribution, read at each window as the agent reads
  // its GPUs and engine, and the exact split (ServerTokenEnergy).
  std::optional<telemetry::TokenEnergyMeter> energy;
  double prompt_j = 0;
  double generated_j = 0;
};

bool Capped(const ServerTargets& t) { return t.sm_clock_cap || t.power_limit; }

}  // namespace

int CachedPrefix(const PrefixCacheConfig& cache, int prompt, std::optional<int> recorded) {
  // The last prompt token is computed whatever is cached: its logits give the first output token.
  const int most = std::max(0, prompt - 1);
  // A log's record of the request's own hit is better evidence than the scenario's assumption.
  if (recorded) return std::clamp(*recorded, 0, most);
  if (cache.shared_prefix_tokens > 0) return std::min(cache.shared_prefix_tokens, most);
  if (cache.hit_rate > 0) return std::min(most, static_cast<int>(cache.hit_rate * prompt));
  return 0;
}

core::Result<int> InstancesPerServer(const InstanceConfig& instance, int gpus,
                                     const std::string& server) {
  const int tp = instance.tp;
  const int wanted = instance.instances_per_server;
  if (tp < 1 || wanted < 0) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("tp {} and instances_per_server {} must be positive", tp, wanted)));
  }
  if (wanted == 0 && gpus % tp != 0) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("tp {} (tensor parallelism) does not divide the {} GPUs of a {} (or set "
                    "instances_per_server)",
                    tp, gpus, server)));
  }
  const int instances = wanted > 0 ? wanted : gpus / tp;
  if (instances < 1 || tp * instances > gpus) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} instance(s) of {} GPU(s) do not fit the {} GPUs of a {}", instances, tp,
                    gpus, server)));
  }
  return instances;
}

core::Status ValidateServing(const InstanceConfig& instance) {
  const int budget = instance.max_num_batched_tokens;
  if (budget < 0) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "max_num_batched_tokens {} is negative (0 turns chunked prefill off)", budget)));
  }
  if (budget > 0 && budget < instance.max_batch_sequences) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "max_num_batched_tokens {} is smaller than one decode batch (max_batch_sequences {}): "
        "a full batch would leave no token for any prompt",
        budget, instance.max_batch_sequences)));
  }
  const PrefixCacheConfig& cache = instance.prefix_cache;
  if (cache.shared_prefix_tokens < 0 || !(cache.hit_rate >= 0 && cache.hit_rate < 1)) {
    return core::Fail(core::Error::InvalidArgument(
        "prefix_cache: shared_prefix_tokens must be >= 0 and hit_rate in [0, 1)"));
  }
  if (cache.shared_prefix_tokens > 0 && cache.hit_rate > 0) {
    return core::Fail(core::Error::InvalidArgument(
        "prefix_cache: give shared_prefix_tokens or hit_rate, not both"));
  }
  const ServerOverheadConfig& o = instance.overhead;
  if (!(o.per_request_s >= 0) || !(o.per_prompt_token_s >= 0) || !std::isfinite(o.per_request_s) ||
      !std::isfinite(o.per_prompt_token_s)) {
    return core::Fail(core::Error::InvalidArgument("overhead: times must be finite and >= 0"));
  }
  return core::Ok();
}

double ServerOverheadSeconds(const ServerOverheadConfig& overhead, int prompt) {
  return overhead.per_request_s + overhead.per_prompt_token_s * prompt;
}

namespace {

// Sum of the first `n` terms of an arithmetic sequence.
double ArithmeticSum(double first, double growth, double n) {
  return n * first + growth * n * (n - 1) / 2;
}

class Simulation {
 public:
  Simulation(const RowConfig& config, RequestSource& source, policy::RowPolicy& policy,
             const RunOptions& options)
      : config_(config),
        model_(*config.model),
        gpu_(config.model->gpu()),
        spec_(config.model->gpu().spec()),
        source_(source),
        policy_(policy),
        options_(options) {}

  core::Result<RowResult> Run();

 private:
  // Set-up and the request stream.
  core::Status Setup();
  // The servers (HP spread evenly), their instances and the routers' tables.
  void BuildServers(int per_server);
  core::Result<bool> ScheduleNextArrival();
  core::Status OnArrival();

  // Instances.
  int Route(bool hp);
  int RouteLeastWork(bool hp, int cursor);
  void SyncRoute(int i);
  // Room for one more sequence beside `sequences` others, and KV cache for its prompt.
  bool HasRoom(const Instance& inst, const Request& r, std::size_t sequences) const;
  // KV-cache tokens neither held by its sequences nor promised to the prompts it admitted.
  double KvFree(const Instance& inst) const;
  // A sequence sharing the scenario's prefix enters (+1) or leaves (-1) the KV cache.
  void SharePrefix(Instance& inst, const Request& r, int change) const;
  // The copies of the shared prefix counted beyond one, with `sharers` sequences holding
  // `tokens` of it between them.
  double SharedCopies(int sharers, double tokens) const;
  bool CanAdmit(const Instance& inst, const Request& r, int admitted, double tokens) const;
  // Preempts sequences until every running one has room for its next token; whether it had to.
  bool PreemptForRoom(Instance& inst);
  void PreemptLastRunning(Instance& inst);
  // Puts a preempted request back at the head of the queue, with `recompute` tokens of work
  // more for the router.
  void Requeue(Instance& inst, int slot, int recompute);
  void NoteFirstToken(Server& server, Request& r);
  void Plan(int i);
  // The prompts an iteration prefills (Instance::admitted and chunks), with their tokens and
  // attention cost: whole prompts (FormPrefill), or chunks within max_num_batched_tokens.
  void FormPrefill(Instance& inst, double* tokens, double* tokens_squared);
  // `admit`: whether it may take waiting requests beside those partly prefilled.
  void FormChunks(Instance& inst, bool admit, double* tokens, double* tokens_squared);
  void AddChunk(Instance& inst, int slot, int chunk, double* tokens, double* tokens_squared);
  void OnIterationEnd(int i);
  void Interrupt(int i);
  // Decode steps of the run under way completed by now (0 for a prefill or an idle instance).
  int StepsDone(Instance& inst) const;
  void Complete(Instance& inst, int slot);
  // The clock an iteration runs at: under the energy saver's clock where `saver_applies` (a
  // phase-aware saver, or a boosted instance, leaves prefill at the highest the row allows).
  core::Megahertz ClockFor(const Server& server, const model::Phase& phase,
                           bool saver_applies) const;
  struct Step {
    double seconds;
    double joules;  // all the instance's GPUs
  };
  Step Evaluate(const model::Phase& phase, const model::ClockRates& rates) const;
  // At `*f`, or where that would draw more than the GPUs' default power limit (TDP), at the
  // highest clock within it, as their firmware holds it (`*f` lowered); the clock is decided on
  // the first of a run's two ends.
  bool AboveTdp(const Step& step) const;
  Step EvaluateHeld(const model::Phase& phase, core::Megahertz* f);
  std::pair<Step, Step> EvaluateEndsHeld(const model::Phase& first, const model::Phase& last,
                                         core::Megahertz* f);
  // RowConfig::energy_saver_prefill_boost: whether the instance runs at the boosted clock at `t`,
  // and the next time after `t` that changes (SimTime::max(): none in sight).
  bool Boosted(const Instance& inst, SimTime t) const;
  SimTime NextBoostChange(const Instance& inst, SimTime t) const;
  const PrefillBoost& BoostOf(const Instance& inst) const {
    return boost_[static_cast<std::size_t>(&inst - instances_.data())];
  }
  // A request reached the instance (+1) or its first token left (-1). REQUIRES: the boost is on.
  void NoteAwaiting(Instance& inst, int change);
  // A prefilling iteration that starts before the boost takes effect: its work at the low clock
  // until then, the rest at the high one.
  Step BoostMidway(const Instance& inst, const Server& server, const model::Phase& phase, Step low);
  // A run of decode steps ends at the first step across a change of the boost.
  int StepsBeforeBoostChange(const Instance& inst, const model::Phase& first, core::Megahertz f,
                             int steps);
  void PlanDecodeRun(Instance& inst, const Server& server, int batch);
  // The model's parts of a decode step of `batch` sequences, and of a clock: each computed once
  // in a run, where the run's tens of millions of steps use a few of them.
  const model::InferenceModel::DecodeBatch& DecodeTerms(int batch);
  const model::ClockRates& RatesAt(core::Megahertz f);
  void SetInstancePower(Instance& inst, double watts);

  // Power delivery and control.
  void Integrate();
  double GpuPower(std::size_t server) const;  // its instances' GPUs
  double ServerPower(double gpu_w) const;     // and the rest of its server
  void OnTelemetry();
  void AddToWindow(double start_s, double row_w);
  // PowerDeliveryConfig::budget_schedule: the event in force at `t` (made at its first sight),
  // or -1; a metered sample of the period from `start` counted toward it.
  int BudgetEventAt(SimTime t);
  void MeterBudgetEvent(SimTime start, double row_w, double period_s);
  // RowResult::swing_*, from the kept series.
  void MeasureSwing();
  // The lowered budget in force now, as the controller is shown it.
  void ShowBudget(SimTime now, policy::RowView& view) const;
  void OnControl(double row_w);
  // What the run keeps of a control step: its state, events and ramp notes.
  void NoteStep(const policy::RowStep& step);
  // Whether a control step of `row` would change nothing (its policy and the row at rest).
  bool Idle(const policy::RowController& row, const policy::RowView& view) const;
  // RunOptions::shadows: each quiet one stepped on the view; the first to act is done.
  void StepShadows(const policy::RowView& view);
  void UpdateEngineWindows();
  // RowConfig::energy_saver: each server's saver made, and stepped at the end of a window.
  core::Status SetupEnergySaver();
  void StepEnergySaver(Server& server, SimTime window);
  // What an iteration's end adds to the engine's histograms and the run's energy by phase.
  void NoteIteration(const Instance& inst, Server& server, double batch);
  // RunOptions::attribute_token_energy: the decode share of an iteration that prefills beside
  // `batch` running sequences at `f`, and each server's window of GPU energy and tokens.
  void NoteDecodeShare(Instance& inst, int batch, core::Megahertz f);
  void AddEnergyWindow(Server& server);
  void FinishTokenEnergy();
  // EnergySaverRun's boost figures: the spans still open at the run's end.
  void FinishPrefillBoost();
  // The control view's report of server s, where what it reads changes.
  void ReportHolds(std::size_t s);
  void ReportPending(std::size_t s);
  // Sends server s `want` through its actuation path (caps and brake, each with its delay).
  void SendTargets(std::size_t s, const ServerTargets& want);
  // RunOptions::outside_commands due by now, sent as the controller's are.
  void ApplyOutsideCommands();
  void OnApplyCaps(int s);
  void OnApplyBrake(int s);
  void Reschedule(Server& server);

  int StateIndex(const std::string& state);

  const RowConfig& config_;
  const model::InferenceModel& model_;
  const model::GpuPowerModel& gpu_;
  const model::GpuSpec& spec_;
  RequestSource& source_;
  policy::RowPolicy& policy_;
  const RunOptions& options_;
  std::optional<policy::RowController> row_;  // drives policy_; made once the servers are
  // RunOptions::shadows, each with its own controller, stepped while it is quiet.
  struct Shadow {
    std::optional<policy::RowController> row;
    bool quiet = true;
  };
  std::vector<Shadow> shadows_;
  bool acted_ = false;  // the run's own policy sent a command: no shadow's run is this one
  // Every server answers every step and no controller restarts: the condition for Idle.
  bool all_answer_ = false;
  std::vector<policy::ControlledServer> controlled_;
  // RunOptions::restart_controller_at: the policy after the restart, and when it started.
  std::unique_ptr<policy::RowPolicy> restarted_policy_;
  SimTime control_start_{0};
  policy::RowView control_view_;  // OnControl's, reused
  std::vector<bool> reachable_;   // OnControl's, reused
  // The controller's target for each server at the last step (sent or not), kept for
  // RunOptions::keep_target_changes.
  std::vector<ServerTargets> decided_;
  std::size_t next_outside_ = 0;  // RunOptions::outside_commands sent so far

  EventQueue<Payload> queue_;
  std::vector<Server> servers_;
  std::vector<Instance> instances_;
  std::vector<PrefillBoost> boost_;  // one per instance with the prefill boost; empty without
  // Each instance's power, the average over its iteration (all tp GPUs): apart from the rest of
  // the instance, so that summing a server's every second reads a few adjacent doubles.
  std::vector<double> instance_w_;
  // RunOptions::attribute_token_energy: each instance's GPU energy until instance_since_.
  std::vector<double> instance_energy_j_;
  std::vector<SimTime> instance_since_;
  std::size_t instances_per_server_ = 0;
  std::vector<double> gpu_w_;  // each server's GPUs at the last telemetry sample
  bool gpu_w_fresh_ = false;   // gpu_w_ is the servers' power now (the control step's read)
  int braked_servers_ = 0;     // under the brake now (Server::effective)
  int capped_servers_ = 0;     // under a clock cap or power limit now
  std::vector<Request> requests_;
  std::vector<int> free_slots_;
  // Idle instances that took a request at this instant: planned once every request arriving at
  // the same instant has arrived, so that they share one iteration as an engine's scheduler,
  // which takes every waiting request at its next step, runs them.
  std::vector<int> plan_after_arrivals_;
  std::size_t active_requests_ = 0;
  std::uint64_t next_order_ = 0;
  std::optional<TraceRequest> next_request_;
  bool source_done_ = false;
  std::vector<int> hp_instances_;
  std::vector<int> lp_instances_;
  LeastWorkTable hp_route_;  // by position in hp_instances_
  LeastWorkTable lp_route_;
  // By instance: its table and position there.
  std::vector<std::pair<LeastWorkTable*, std::size_t>> route_of_;
  std::vector<std::optional<model::InferenceModel::DecodeBatch>> decode_terms_;  // by batch
  std::vector<model::ClockRates> clock_rates_;
  int hp_cursor_ = 0;
  int lp_cursor_ = 0;

  // The highest clock the GPUs run at: InstanceConfig::sm_clock_lock_mhz on the GPU's grid, or
  // its maximum.
  core::Megahertz top_clock_{0};
  double kv_capacity_ = 0;
  double tdp_w_ = 0;               // the instance's GPUs' default power limits together
  bool has_overhead_ = false;      // InstanceConfig::overhead adds to TTFT and E2E
  double instance_idle_w_ = 0;     // an instance with nothing to do
  double unused_gpus_idle_w_ = 0;  // a server's GPUs in no instance (idle)
  double non_gpu_slope_ = 0;       // model::NonGpuSlope of the row's servers

  double row_power_w_ = 0;
  double row_energy_j_ = 0;
  double power_sum_w_ = 0;                              // of the metered samples
  int window_samples_ = 0;                              // in the last power window
  std::deque<std::pair<SimTime, double>> rise_window_;  // (time, watts), increasing watts
  std::deque<double> recent_w_;  // the last minute's samples, with a budget schedule only
  double last_row_w_ = 0;        // the last metered sample
  SimTime integrated_until_{0};
  double energy_at_last_sample_ = 0;
  bool over_budget_ = false;
  SimTime last_control_{0};
  SimTime engine_window_at_{0};  // when the servers' engine windows last ended
  int state_ = 0;
  double last_arrival_s_ = 0;

  RowResult result_;
};

double KvCapacity(const model::InferenceModel& model, const model::GpuSpec& spec,
                  const InstanceConfig& instance) {
  const double usable = static_cast<double>(spec.memory_bytes) * instance.memory_fraction -
                        model.WeightBytesPerGpu(instance.tp);
  const double per_token = model.KvBytesPerGpu(instance.tp, 1);
  return usable <= 0 || per_token <= 0 ? 0.0 : std::floor(usable / per_token);
}

void Simulation::BuildServers(int per_server) {
  servers_.resize(static_cast<std::size_t>(config_.servers));
  const double f = config_.hp_server_fraction;
  for (int s = 0; s < config_.servers; ++s) {
    Server& server = servers_[static_cast<std::size_t>(s)];
    // Spread the HP servers evenly: server s is HP when the running HP count steps up.
    server.hp = HpServers(s + 1, f) > HpServers(s, f);
    result_.hp_servers += server.hp ? 1 : 0;
    for (int k = 0; k < per_server; ++k) {
      server.instances.push_back(static_cast<int>(instances_.size()));
      (server.hp ? hp_instances_ : lp_instances_).push_back(static_cast<int>(instances_.size()));
      Instance inst;
      inst.server = s;
      instances_.push_back(std::move(inst));
      instance_w_.push_back(instance_idle_w_);
    }
  }
  route_of_.resize(instances_.size());
  for (LeastWorkTable* route : {&hp_route_, &lp_route_}) {
    const std::vector<int>& ids = route == &hp_route_ ? hp_instances_ : lp_instances_;
    *route = LeastWorkTable(ids.size());
    for (std::size_t k = 0; k < ids.size(); ++k)
      route_of_[static_cast<std::size_t>(ids[k])] = {route, k};
  }
}

core::Status Simulation::Setup() {
  const int gpus = config_.server.gpus_per_server;
  const int tp = config_.instance.tp;
  if (config_.servers < 1)
    return core::Fail(core::Error::InvalidArgument("a row needs at least one server"));
  HEADROOM_ASSIGN_OR_RETURN(const int per_server,
                            InstancesPerServer(config_.instance, gpus, config_.server.name));
  if (model_.model().architecture == model::ModelArchitecture::kEncoder) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} is encoder-only: it generates no tokens to serve", model_.model().name)));
  }
  if (config_.power.budget.value() <= 0) {
    return core::Fail(core::Error::InvalidArgument("the row power budget must be positive"));
  }
  HEADROOM_RETURN_IF_ERROR(ValidateServing(config_.instance));
  has_overhead_ = config_.instance.overhead.per_request_s > 0 ||
                  config_.instance.overhead.per_prompt_token_s > 0;
  kv_capacity_ = KvCapacity(model_, spec_, config_.instance);
  tdp_w_ = spec_.power_limit_default.value() * config_.instance.tp;
  if (kv_capacity_ < 1) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} at tensor parallelism {} does not fit in {:.0f} GB per GPU",
                    model_.model().name, tp, static_cast<double>(spec_.memory_bytes) / 1e9)));
  }
  top_clock_ = config_.instance.sm_clock_lock_mhz > 0
                   ? spec_.SnapClock(core::Megahertz(config_.instance.sm_clock_lock_mhz))
                   : spec_.sm_clock_max;
  instance_idle_w_ = spec_.idle_power.value() * tp;
  unused_gpus_idle_w_ = spec_.idle_power.value() * (gpus - tp * per_server);
  non_gpu_slope_ = model::NonGpuSlope(config_.server, spec_);
  BuildServers(per_server);
  for (const Server& server : servers_) {
    controlled_.push_back(
        {.priority = server.hp ? policy::ServerPriority::kHigh : policy::ServerPriority::kLow,
         .rated_power = config_.server.max_system_power,
         .non_gpu_power = config_.server.non_gpu_power,
         .gpu_idle_floor = policy::IdleFloor(config_.server.gpus_per_server, spec_.idle_power),
         .gpu = spec_});
  }
  row_.emplace(policy_, config_.control, controlled_);
  all_answer_ = options_.unreachable.empty() && !options_.restart_controller_at &&
                options_.outside_commands.empty();
  shadows_.resize(options_.shadows.size());
  for (std::size_t k = 0; k < shadows_.size(); ++k) {
    shadows_[k].row.emplace(*options_.shadows[k], config_.control, controlled_);
    shadows_[k].quiet = !options_.restart_controller_at;
  }
  result_.servers = config_.servers;
  result_.engine = config_.engine;
  result_.serving = config_.instance;
  result_.budget_w = config_.power.budget.value();
  result_.policy = policy_.name();
  result_.states = policy_.states();
  result_.state_seconds.assign(result_.states.size(), 0.0);
  state_ = StateIndex(result_.states.empty() ? std::string("normal") : result_.states.front());
  instances_per_server_ = static_cast<std::size_t>(per_server);
  gpu_w_.resize(servers_.size());
  for (std::size_t s = 0; s < servers_.size(); ++s) row_power_w_ += ServerPower(GpuPower(s));
  // The control step's view of each server: what it holds (nothing yet), all else default.
  control_view_.servers.resize(servers_.size());
  for (std::size_t s = 0; s < servers_.size(); ++s) ReportHolds(s);
  if (options_.keep_target_changes) decided_.resize(servers_.size());
  return SetupEnergySaver();
}

core::Status Simulation::SetupEnergySaver() {
  if (options_.attribute_token_energy) {
    if (config_.power.engine_window.count() <= 0) {
      return core::Fail(core::Error::InvalidArgument(
          "attributing energy to tokens reads the engine's windows: power.engine_window must be "
          "positive"));
    }
    instance_energy_j_.assign(instances_.size(), 0.0);
    instance_since_.assign(instances_.size(), SimTime(0));
    // A week of windows: the attribution over the whole run, to check against the exact split.
    // The agent knows its GPUs' rated idle power (the catalog's), as the fit is told here.
    const double idle_w = spec_.idle_power.value() * config_.server.gpus_per_server;
    for (Server& server : servers_) {
      server.energy.emplace(std::numeric_limits<std::size_t>::max(), idle_w);
      server.energy->Add({.at = core::TimePoint(SimTime(0))});  // the first read: all zero
    }
  }
  if (!config_.energy_saver) return core::Ok();
  if (config_.power.engine_window.count() <= 0) {
    return core::Fail(core::Error::InvalidArgument(
        "the energy saver reads the engine's windows: power.engine_window must be positive"));
  }
  EnergySaverRun& run = result_.energy_saver.emplace();
  for (const core::Megahertz f : config_.energy_saver->clocks) run.clocks_mhz.push_back(f.value());
  run.server_seconds.assign(run.clocks_mhz.size(), 0.0);
  if (config_.energy_saver_prefill_boost) boost_.assign(instances_.size(), PrefillBoost{});
  for (Server& server : servers_) {
    const bool lp_own = !server.hp && config_.energy_saver_lp;
    policy::EnergySaverSettings settings =
        lp_own ? *config_.energy_saver_lp : *config_.energy_saver;
    if (config_.energy_saver_phase_aware || config_.energy_saver_prefill_boost) {
      settings = policy::WithPrefillAtTopClock(std::move(settings));
    }
    HEADROOM_ASSIGN_OR_RETURN(policy::EnergySaver saver, policy::EnergySaver::Make(settings));
    server.saver.emplace(std::move(saver));
    server.ttft.emplace(telemetry::kVllmTtftBucketsS);
    server.itl.emplace(telemetry::kVllmItlBucketsS);
    // The engine's first scrape, as it starts: nothing observed yet.
    server.latency.emplace(config_.energy_saver_ttft_window);
    (void)server.latency->Add(server.itl->Sample(), server.ttft->Sample(), SimTime(0));
  }
  return core::Ok();
}

int Simulation::StateIndex(const std::string& state) {
  for (std::size_t i = 0; i < result_.states.size(); ++i) {
    if (result_.states[i] == state) return static_cast<int>(i);
  }
  result_.states.push_back(state);
  result_.state_seconds.push_back(0.0);
  return static_cast<int>(result_.states.size() - 1);
}

core::Result<bool> Simulation::ScheduleNextArrival() {
  HEADROOM_ASSIGN_OR_RETURN(next_request_, source_.Next());
  if (!next_request_) {
    source_done_ = true;
    return false;
  }
  const TraceRequest& r = *next_request_;
  if (r.priority == Priority::kUnspecified) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("request at {:.3f} s has no priority; assign one by trace, service or fraction",
                    r.arrival_s)));
  }
  if ((r.priority == Priority::kHigh ? result_.hp_servers : config_.servers - result_.hp_servers) ==
      0) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "the trace has {} requests but the row has no {} servers (hp_server_fraction {})",
        r.priority == Priority::kHigh ? "high-priority" : "low-priority",
        r.priority == Priority::kHigh ? "HP" : "LP", config_.hp_server_fraction)));
  }
  const SimTime at = std::max(queue_.now(), core::FromSeconds(r.arrival_s));
  queue_.Schedule(at, {EventKind::kArrival});
  return true;
}

core::Status Simulation::OnArrival() {
  const TraceRequest r = *next_request_;
  last_arrival_s_ = r.arrival_s;
  const bool hp = r.priority == Priority::kHigh;
  ClassMetrics& metrics = hp ? result_.hp : result_.lp;
  if (r.prompt_tokens + r.output_tokens > kv_capacity_ || r.prompt_tokens < 1 ||
      r.output_tokens < 1) {
    ++metrics.rejected;
  } else {
    int slot;
    if (free_slots_.empty()) {
      slot = static_cast<int>(requests_.size());
      requests_.emplace_back();
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
    }
    const int i = Route(hp);
    Instance& inst = instances_[static_cast<std::size_t>(i)];
    Request& req = requests_[static_cast<std::size_t>(slot)];
    const int cached =
        CachedPrefix(config_.instance.prefix_cache, r.prompt_tokens, r.cached_tokens);
    req = Request{.arrival = queue_.now(),
                  .arrival_s = r.arrival_s,
                  .prompt = r.prompt_tokens,
                  .output = r.output_tokens,
                  .cached = cached,
                  .prefilled = cached,
                  .priority = r.priority,
                  .server = inst.server,
                  .shares_prefix = !r.cached_tokens && cached > 0 &&
                                   config_.instance.prefix_cache.shared_prefix_tokens > 0};
    if (!config_.power.budget_schedule.empty()) req.budget_event = BudgetEventAt(queue_.now());
    ++active_requests_;
    if (!boost_.empty()) NoteAwaiting(inst, +1);
    inst.waiting.push_back(slot);
    inst.outstanding += (req.prompt - cached) + req.output;
    const auto [table, k] = route_of_[static_cast<std::size_t>(i)];
    table->SetOutstanding(k, inst.outstanding);
    if (!inst.busy) {
      if (std::find(plan_after_arrivals_.begin(), plan_after_arrivals_.end(), i) ==
          plan_after_arrivals_.end()) {
        plan_after_arrivals_.push_back(i);
      }
    } else if (inst.waiting.size() == 1 && CanAdmit(inst, req, 0, 0)) {
      Interrupt(i);  // join the batch at the next step boundary
    }
  }
  HEADROOM_RETURN_IF_ERROR(ScheduleNextArrival());
  if (!next_request_ || core::FromSeconds(next_request_->arrival_s) > queue_.now()) {
    for (const int i : plan_after_arrivals_) {
      if (!instances_[static_cast<std::size_t>(i)].busy) Plan(i);
    }
    plan_after_arrivals_.clear();
  }
  return core::Ok();
}

int Simulation::Route(bool hp) {
  const std::vector<int>& candidates = hp ? hp_instances_ : lp_instances_;
  int& cursor = hp ? hp_cursor_ : lp_cursor_;
  const int n = static_cast<int>(candidates.size());
  HEADROOM_CHECK(n > 0) << "no instance of the request's class";
  if (config_.router == RouterKind::kLeastWork) {
    const int best = RouteLeastWork(hp, cursor);
    cursor = best + 1 == n ? 0 : best + 1;
    return candidates[static_cast<std::size_t>(best)];
  }
  int best = -1;
  double best_work = std::numeric_limits<double>::infinity();
  // Scan from the cursor so that ties rotate instead of piling on the first instance.
  int k = cursor;
  for (int seen = 0; seen < n; ++seen, k = k + 1 == n ? 0 : k + 1) {
    const int i = candidates[static_cast<std::size_t>(k)];
    Instance& inst = instances_[static_cast<std::size_t>(i)];
    double work = 0;
    switch (config_.router) {
      case RouterKind::kLeastWork:  // RouteLeastWork
      case RouterKind::kLeastRequests:
        work = static_cast<double>(inst.waiting.size() + inst.running.size());
        break;
      case RouterKind::kRoundRobin:
        work = 0;
        break;
    }
    if (work < best_work) {
      best_work = work;
      best = k;
      if (config_.router == RouterKind::kRoundRobin) break;
    }
  }
  cursor = best + 1 == n ? 0 : best + 1;
  return candidates[static_cast<std::size_t>(best)];
}

int Simulation::RouteLeastWork(bool hp, int cursor) {
  const std::vector<int>& ids = hp ? hp_instances_ : lp_instances_;
  // As of now, inside a run of decode steps too, so routing does not depend on how the simulator
  // groups steps into events.
  return static_cast<int>((hp ? hp_route_ : lp_route_)
                              .Least(static_cast<double>(queue_.now().count()),
                                     static_cast<std::size_t>(cursor), [&](std::size_t k) {
                                       return StepsDone(
                                           instances_[static_cast<std::size_t>(ids[k])]);
                                     }));
}

void Simulation::SyncRoute(int i) {
  const Instance& inst = instances_[static_cast<std::size_t>(i)];
  const auto [table, k] = route_of_[static_cast<std::size_t>(i)];
  const bool decoding = inst.busy && !inst.mixed;
  table->Set(k, {.outstanding = inst.outstanding,
                 .running = static_cast<double>(inst.running.size()),
                 .steps = decoding ? inst.steps : 0,
                 .start_ns = static_cast<double>(inst.start.count()),
                 .end_ns = static_cast<double>(inst.end.count()),
                 .first_step_s = inst.first_step_s,
                 .step_growth_s = inst.step_growth_s});
}

bool Simulation::HasRoom(const Instance& inst, const Request& r, std::size_t sequences) const {
  // Its prompt's share of the prefix already held takes no room of its own.
  const double shared =
      r.shares_prefix
          ? SharedCopies(inst.prefix_sharers + 1, inst.prefix_tokens + r.cached) - inst.kv_shared
          : 0;
  // The running sequences' next tokens first, as vLLM V1 allocates them before admitting.
  return sequences < static_cast<std::size_t>(config_.instance.max_batch_sequences) &&
         static_cast<double>(inst.running.size()) + r.KvPrompt() + 1 - shared <= KvFree(inst);
}

double Simulation::KvFree(const Instance& inst) const {
  return kv_capacity_ - inst.context - inst.kv_pending + inst.kv_shared;
}

double Simulation::SharedCopies(int sharers, double tokens) const {
  // One copy of the prefix held (the longest, at most the whole prefix); the rest are counted
  // twice. Each shares all of it but a prompt shorter than the prefix.
  if (sharers == 0) return 0;
  return std::max(0.0, tokens - config_.instance.prefix_cache.shared_prefix_tokens);
}

void Simulation::SharePrefix(Instance& inst, const Request& r, int change) const {
  if (!r.shares_prefix) return;
  inst.prefix_sharers += change;
  inst.prefix_tokens += change * r.cached;
  inst.kv_shared = SharedCopies(inst.prefix_sharers, inst.prefix_tokens);
}

bool Simulation::CanAdmit(const Instance& inst, const Request& r, int admitted,
                          double tokens) const {
  if (!HasRoom(inst, r, inst.running.size() + static_cast<std::size_t>(admitted))) return false;
  // A prompt longer than the prefill budget runs alone rather than never.
  return admitted == 0 || tokens + (r.KvPrompt() - r.cached) <= config_.instance.max_prefill_tokens;
}

core::Megahertz Simulation::ClockFor(const Server& server, const model::Phase& phase,
                                     bool saver_applies) const {
  const ServerTargets& t = server.effective;
  // Locks land on the clock grid, as the agent sets them (288 MHz on an A100 is 285 MHz).
  if (t.brake) return spec_.SnapClock(spec_.brake_clock);
  core::Megahertz f = top_clock_;
  if (t.sm_clock_cap) f = std::min(f, *t.sm_clock_cap);
  if (server.saver && saver_applies) f = std::min(f, server.saver->clock());
  if (t.power_limit && gpu_.PhasePower(phase, f) > *t.power_limit) {
    f = gpu_.MaxClockUnder(*t.power_limit, phase, 1.0, f);
  }
  return f;
}

bool Simulation::AboveTdp(const Step& step) const { return step.joules > tdp_w_ * step.seconds; }

Simulation::Step Simulation::EvaluateHeld(const model::Phase& phase, core::Megahertz* f) {
  const Step step = Evaluate(phase, RatesAt(*f));
  if (!AboveTdp(step)) return step;
  *f = gpu_.MaxClockUnder(spec_.power_limit_default, phase, 1.0, *f);
  return Evaluate(phase, RatesAt(*f));
}

std::pair<Simulation::Step, Simulation::Step> Simulation::EvaluateEndsHeld(
    const model::Phase& first, const model::Phase& last, core::Megahertz* f) {
  // Side by side, so that their chains of divisions and square roots overlap.
  const model::ClockRates* rates = &RatesAt(*f);
  Step a = Evaluate(first, *rates);
  Step b = Evaluate(last, *rates);
  if (AboveTdp(a)) {
    *f = gpu_.MaxClockUnder(spec_.power_limit_default, first, 1.0, *f);
    rates = &RatesAt(*f);
    a = Evaluate(first, *rates);
    b = Evaluate(last, *rates);
  }
  return {a, b};
}

bool Simulation::Boosted(const Instance& inst, SimTime t) const {
  const PrefillBoost& b = BoostOf(inst);
  return (t >= b.from && t < b.to) || (t >= b.was_from && t < b.was_to);
}

SimTime Simulation::NextBoostChange(const Instance& inst, SimTime t) const {
  const PrefillBoost& b = BoostOf(inst);
  SimTime next = SimTime::max();
  for (const SimTime edge : {b.from, b.to, b.was_from, b.was_to}) {
    if (edge > t) next = std::min(next, edge);
  }
  return next;
}

void Simulation::NoteAwaiting(Instance& inst, int change) {
  const auto i = static_cast<int>(&inst - instances_.data());
  PrefillBoost& b = boost_[static_cast<std::size_t>(i)];
  const int before = b.awaiting_first;
  b.awaiting_first += change;
  const SimTime now = queue_.now();
  const SimTime latency = *config_.energy_saver_prefill_boost;
  if (before == 0 && b.awaiting_first > 0) {  // the agent raises the clock
    b.was_from = b.from;
    b.was_to = b.to;
    b.from = now + latency;
    b.to = SimTime::max();
    const Server& server = servers_[static_cast<std::size_t>(inst.server)];
    b.lifted = server.saver->clock() < server.saver->highest();
    if (b.lifted) ++result_.energy_saver->boosts;
    // A run of decode steps planned at the saver's clock ends where the raise takes effect.
    Interrupt(i);
  } else if (before > 0 && b.awaiting_first == 0) {  // and lowers it again
    b.to = now + latency;
    if (b.lifted) result_.energy_saver->boosted_instance_seconds += core::ToSeconds(b.to - b.from);
  }
}

Simulation::Step Simulation::BoostMidway(const Instance& inst, const Server& server,
                                         const model::Phase& phase, Step low) {
  const SimTime now = queue_.now();
  const SimTime change = NextBoostChange(inst, now);
  if (change == SimTime::max()) return low;
  const double low_s = core::ToSeconds(change - now);
  if (low_s >= low.seconds) return low;
  core::Megahertz high_f = ClockFor(server, phase, /*saver_applies=*/false);
  const Step high = EvaluateHeld(phase, &high_f);
  const double done = low_s / low.seconds;  // of the iteration's work, at the low clock
  return {low_s + (1 - done) * high.seconds, done * low.joules + (1 - done) * high.joules};
}

int Simulation::StepsBeforeBoostChange(const Instance& inst, const model::Phase& first,
                                       core::Megahertz f, int steps) {
  const SimTime change = NextBoostChange(inst, queue_.now());
  if (change == SimTime::max()) return steps;
  const double step_s = EvaluateHeld(first, &f).seconds;
  const double fit = std::ceil(core::ToSeconds(change - queue_.now()) / step_s);
  return static_cast<int>(std::clamp<double>(fit, 1, steps));
}

inline Simulation::Step Simulation::Evaluate(const model::Phase& phase,
                                             const model::ClockRates& rates) const {
  const model::PhaseTiming timing = gpu_.Time(phase, rates);
  const double watts = gpu_.Power(timing.activity, rates).value() * config_.instance.tp;
  return {timing.time_s, watts * timing.time_s};
}

const model::InferenceModel::DecodeBatch& Simulation::DecodeTerms(int batch) {
  const auto b = static_cast<std::size_t>(batch);
  if (b >= decode_terms_.size()) decode_terms_.resize(b + 1);
  if (!decode_terms_[b]) decode_terms_[b] = model_.DecodeBatchTerms(config_.instance.tp, batch);
  return *decode_terms_[b];
}

const model::ClockRates& Simulation::RatesAt(core::Megahertz f) {
  HEADROOM_CHECK(f.value() > 0) << "clock must be positive";
  for (const model::ClockRates& rates : clock_rates_) {
    if (rates.clock == f) return rates;
  }
  return clock_rates_.emplace_back(gpu_.RatesAt(f));
}

void Simulation::SetInstancePower(Instance& inst, double watts) {
  Integrate();
  // The rest of the server follows its GPUs (model::NonGpuPower is affine in their power).
  const auto k = static_cast<std::size_t>(&inst - instances_.data());
  double& power_w = instance_w_[k];
  if (options_.attribute_token_energy) {
    instance_energy_j_[k] += power_w * core::ToSeconds(queue_.now() - instance_since_[k]);
    instance_since_[k] = queue_.now();
  }
  row_power_w_ += (watts - power_w) * (1 + non_gpu_slope_);
  power_w = watts;
}

void Simulation::Plan(int i) {
  Instance& inst = instances_[static_cast<std::size_t>(i)];
  const Server& server = servers_[static_cast<std::size_t>(inst.server)];
  const int tp = config_.instance.tp;
  double tokens = 0;
  double tokens_squared = 0;
  // vLLM V1 admits no waiting request in a step that had to preempt.
  const bool admit = !PreemptForRoom(inst);
  if (config_.instance.max_num_batched_tokens > 0) {
    FormChunks(inst, admit, &tokens, &tokens_squared);
  } else if (admit) {
    FormPrefill(inst, &tokens, &tokens_squared);
  }
  const int batch = static_cast<int>(inst.running.size());
  inst.start = queue_.now();
  if (!inst.admitted.empty()) {
    const model::Phase prefill = model_.PrefillPhaseForBatch(
        tp, static_cast<int>(inst.admitted.size()), tokens, tokens_squared);
    const model::Phase phase =
        batch == 0
            ? prefill
            : model_.MixedPhase(prefill, model_.DecodeStep(DecodeTerms(batch), inst.context), tp);
    const bool boost = !boost_.empty();
    const bool boosted = boost && Boosted(inst, inst.start);
    core::Megahertz f = ClockFor(server, phase, !config_.energy_saver_phase_aware && !boosted);
    inst.mixed = true;
    inst.steps = 1;
    ++result_.prefill_iterations;
    Step step = EvaluateHeld(phase, &f);
    if (boost && !boosted) step = BoostMidway(inst, server, phase, step);
    inst.first_step_s = step.seconds;
    inst.step_growth_s = 0;
    inst.first_energy_j = step.joules;
    inst.energy_growth_j = 0;
    if (options_.attribute_token_energy) NoteDecodeShare(inst, batch, f);
  } else if (batch > 0) {
    PlanDecodeRun(inst, server, batch);
  } else {
    inst.busy = false;
    SetInstancePower(inst, instance_idle_w_);
    SyncRoute(i);
    return;
  }
  inst.busy = true;
  inst.per_first_step = 1 / std::max(inst.first_step_s, 1e-12);
  inst.steps_seen = 0;
  const double seconds = ArithmeticSum(inst.first_step_s, inst.step_growth_s, inst.steps);
  const double joules = ArithmeticSum(inst.first_energy_j, inst.energy_growth_j, inst.steps);
  SetInstancePower(inst, seconds > 0 ? joules / seconds : instance_idle_w_);
  inst.end = inst.start + core::FromSeconds(seconds);
  queue_.ScheduleKeyed(static_cast<std::size_t>(i), inst.end, {EventKind::kIterationEnd, i});
  SyncRoute(i);
}

void Simulation::PlanDecodeRun(Instance& inst, const Server& server, int batch) {
  int steps = 1;
  if (config_.macro_steps) {
    // Up to the next finish, or to the step that finds the KV cache full.
    steps =
        static_cast<int>(std::min<double>(static_cast<double>(inst.running.top().step - inst.step),
                                          std::floor(KvFree(inst) / batch)));
  }
  const model::InferenceModel::DecodeBatch& terms = DecodeTerms(batch);
  const model::Phase first = model_.DecodeStep(terms, inst.context);
  const bool boost = !boost_.empty();
  core::Megahertz f = ClockFor(server, first, !(boost && Boosted(inst, inst.start)));
  if (boost && steps > 1) steps = StepsBeforeBoostChange(inst, first, f, steps);
  inst.mixed = false;
  inst.steps = steps;
  ++result_.decode_runs;
  inst.step_growth_s = 0;
  inst.energy_growth_j = 0;
  if (steps > 1) {
    // Step time and energy are affine in the KV cache's size as long as the phase stays on one
    // side of the roofline, which a run between two events does: time them from both ends.
    const model::Phase last =
        model_.DecodeStep(terms, inst.context + static_cast<double>(steps - 1) * batch);
    const auto [step, end] = EvaluateEndsHeld(first, last, &f);
    inst.first_step_s = step.seconds;
    inst.first_energy_j = step.joules;
    inst.step_growth_s = (end.seconds - inst.first_step_s) / (steps - 1);
    inst.energy_growth_j = (end.joules - inst.first_energy_j) / (steps - 1);
  } else {
    const Step step = EvaluateHeld(first, &f);
    inst.first_step_s = step.seconds;
    inst.first_energy_j = step.joules;
  }
}

namespace {

// Attention's cost of prefilling `chunk` prompt tokens after `before` already in the KV cache,
// in the units of a whole prompt's square (the chunks of a prompt add up to it).
double ChunkSquared(double before, double chunk) { return chunk * (2 * before + chunk); }

}  // namespace

void Simulation::AddChunk(Instance& inst, int slot, int chunk, double* tokens,
                          double* tokens_squared) {
  const Request& r = requests_[static_cast<std::size_t>(slot)];
  inst.admitted.push_back(slot);
  inst.chunks.push_back(chunk);
  *tokens += chunk;
  *tokens_squared += ChunkSquared(r.prefilled, chunk);
}

void Simulation::FormPrefill(Instance& inst, double* tokens, double* tokens_squared) {
  inst.admitted.clear();
  inst.chunks.clear();
  while (!inst.waiting.empty()) {
    const int slot = inst.waiting.front();
    const Request& r = requests_[static_cast<std::size_t>(slot)];
    if (!CanAdmit(inst, r, static_cast<int>(inst.admitted.size()), *tokens)) break;
    inst.waiting.pop_front();
    inst.kv_pending += r.KvPrompt() + 1;
    SharePrefix(inst, r, +1);
    AddChunk(inst, slot, r.KvPrompt() - r.prefilled, tokens, tokens_squared);
  }
}

void Simulation::FormChunks(Instance& inst, bool admit, double* tokens, double* tokens_squared) {
  inst.admitted.clear();
  inst.chunks.clear();
  // The running sequences' decode tokens first, then prompts in arrival order, as vLLM V1's
  // scheduler fills an iteration.
  int budget = config_.instance.max_num_batched_tokens - static_cast<int>(inst.running.size());
  for (const int slot : inst.prefilling) {
    if (budget <= 0) return;
    const Request& r = requests_[static_cast<std::size_t>(slot)];
    const int chunk = std::min(r.KvPrompt() - r.prefilled, budget);
    AddChunk(inst, slot, chunk, tokens, tokens_squared);
    budget -= chunk;
  }
  while (admit && budget > 0 && !inst.waiting.empty()) {
    const int slot = inst.waiting.front();
    const Request& r = requests_[static_cast<std::size_t>(slot)];
    if (!HasRoom(inst, r, inst.running.size() + inst.prefilling.size())) return;
    inst.waiting.pop_front();
    inst.prefilling.push_back(slot);
    inst.kv_pending += r.KvPrompt() + 1;
    SharePrefix(inst, r, +1);
    const int chunk = std::min(r.KvPrompt() - r.prefilled, budget);
    AddChunk(inst, slot, chunk, tokens, tokens_squared);
    budget -= chunk;
  }
}

int Simulation::StepsDone(Instance& inst) const {
  if (!inst.busy || inst.mixed) return 0;
  const double elapsed = core::ToSeconds(queue_.now() - inst.start);
  // The largest n with ArithmeticSum(n) <= elapsed. Steps grow by a tiny fraction each (the KV
  // cache gains one token per sequence), so elapsed / first step is within a step or two of it,
  // and so is the last answer (arrivals come every few steps); the loops make it exact. (Cheaper
  // than the quadratic's root, on the router's hot path.)
  const double guess = std::floor(elapsed * inst.per_first_step);
  int done = std::max(inst.steps_seen, static_cast<int>(std::min<double>(inst.steps, guess)));
  while (done > inst.steps_seen &&
         ArithmeticSum(inst.first_step_s, inst.step_growth_s, done) > elapsed) {
    --done;
  }
  while (done < inst.steps &&
         ArithmeticSum(inst.first_step_s, inst.step_growth_s, done + 1) <= elapsed) {
    ++done;
  }
  inst.steps_seen = done;
  return done;
}

void Simulation::Interrupt(int i) {
  Instance& inst = instances_[static_cast<std::size_t>(i)];
  if (!inst.busy || inst.mixed || inst.steps <= 1) return;
  const int keep = StepsDone(inst) + 1;  // the step under way finishes
  if (keep >= inst.steps) return;
  ++result_.interrupted_runs;
  inst.steps = keep;
  const double seconds = ArithmeticSum(inst.first_step_s, inst.step_growth_s, keep);
  const double joules = ArithmeticSum(inst.first_energy_j, inst.energy_growth_j, keep);
  SetInstancePower(inst, joules / seconds);
  // Replaces the end of the longer run: an instance has one end pending.
  inst.end = std::max(queue_.now(), inst.start + core::FromSeconds(seconds));
  queue_.ScheduleKeyed(static_cast<std::size_t>(i), inst.end, {EventKind::kIterationEnd, i});
  SyncRoute(i);
}

bool Simulation::PreemptForRoom(Instance& inst) {
  bool preempted = false;
  // Every running sequence needs a slot for its next token; the last admitted gives way, as
  // vLLM V1's scheduler pops its running list (partial prefills, admitted last, first).
  while (!inst.running.empty() && static_cast<double>(inst.running.size()) > KvFree(inst)) {
    if (!inst.prefilling.empty()) {
      const int slot = inst.prefilling.back();
      inst.prefilling.pop_back();
      Request& r = requests_[static_cast<std::size_t>(slot)];
      inst.kv_pending -= r.KvPrompt() + 1;
      SharePrefix(inst, r, -1);
      Requeue(inst, slot, r.prefilled - r.cached);
    } else {
      PreemptLastRunning(inst);
    }
    preempted = true;
  }
  return preempted;
}

void Simulation::PreemptLastRunning(Instance& inst) {
  // Rare (only where the KV cache runs out), so the heap is rebuilt rather than indexed.
  std::vector<Instance::Finish> finishes;
  finishes.reserve(inst.running.size());
  for (; !inst.running.empty(); inst.running.pop()) finishes.push_back(inst.running.top());
  const auto last =
      std::max_element(finishes.begin(), finishes.end(),
                       [](const auto& a, const auto& b) { return a.order < b.order; });
  const int slot = last->slot;
  finishes.erase(last);
  for (const Instance::Finish& f : finishes) inst.running.push(f);
  Request& r = requests_[static_cast<std::size_t>(slot)];
  const int generated = static_cast<int>(inst.step - r.done_at_step) + r.ToGenerate();
  inst.context -= r.KvPrompt() + generated;
  SharePrefix(inst, r, -1);
  r.resumed += generated;
  Requeue(inst, slot, r.KvPrompt() - r.cached);
}

void Simulation::Requeue(Instance& inst, int slot, int recompute) {
  Request& r = requests_[static_cast<std::size_t>(slot)];
  r.prefilled = r.cached;
  inst.outstanding += recompute;
  inst.waiting.push_front(slot);
  ++(r.priority == Priority::kHigh ? result_.hp : result_.lp).preemptions;
}

void Simulation::NoteFirstToken(Server& server, Request& r) {
  r.first_token = queue_.now();
  if (server.ttft) {
    server.ttft->Add(
        core::ToSeconds(r.first_token - r.arrival) +
        (has_overhead_ ? ServerOverheadSeconds(config_.instance.overhead, r.prompt) : 0.0));
  }
}

void Simulation::Complete(Instance& inst, int slot) {
  Request& r = requests_[static_cast<std::size_t>(slot)];
  const SimTime now = queue_.now();
  RequestResult out{
      .arrival_s = r.arrival_s,
      .prompt_tokens = r.prompt,
      .output_tokens = r.output,
      .priority = r.priority,
      .server = r.server,
      .ttft_s = core::ToSeconds(r.first_token - r.arrival),
      .tbt_s = r.output > 1 ? core::ToSeconds(now - r.first_token) / (r.output - 1) : 0,
      .e2e_s = core::ToSeconds(now - r.arrival)};
  if (has_overhead_) {
    const double overhead = ServerOverheadSeconds(config_.instance.overhead, r.prompt);
    out.ttft_s += overhead;
    out.e2e_s += overhead;
  }
  ClassMetrics& metrics = r.priority == Priority::kHigh ? result_.hp : result_.lp;
  metrics.ttft.Add(out.ttft_s);
  if (r.output > 1) metrics.tbt.Add(out.tbt_s);
  metrics.e2e.Add(out.e2e_s);
  if (r.budget_event >= 0) {
    BudgetEvent& event = result_.budget_events[static_cast<std::size_t>(r.budget_event)];
    (r.priority == Priority::kHigh ? event.hp_e2e : event.lp_e2e).Add(out.e2e_s);
  }
  ++metrics.requests;
  metrics.output_tokens += r.output;
  if (options_.on_request) options_.on_request(out);
  inst.context -= r.prompt + r.output;
  SharePrefix(inst, r, -1);
  free_slots_.push_back(slot);
  --active_requests_;
}

void Simulation::OnIterationEnd(int i) {
  Instance& inst = instances_[static_cast<std::size_t>(i)];
  result_.iterations += static_cast<std::uint64_t>(inst.steps);
  const int steps = inst.steps;
  const auto batch = static_cast<double>(inst.running.size());
  Server& server = servers_[static_cast<std::size_t>(inst.server)];
  NoteIteration(inst, server, batch);
  server.iterations += steps;
  server.generated_tokens += batch * steps;
  inst.step += steps;
  inst.context += batch * steps;
  inst.outstanding -= batch * steps;
  for (std::size_t k = 0; k < inst.admitted.size(); ++k) {
    const int slot = inst.admitted[k];
    Request& r = requests_[static_cast<std::size_t>(slot)];
    r.prefilled += inst.chunks[k];
    // As vLLM counts them: a request's prompt once, not its recomputation after a preemption.
    if (r.resumed == 0) server.prompt_tokens += inst.chunks[k];
    if (r.prefilled < r.KvPrompt()) {  // its prompt goes on in the next iteration
      inst.outstanding -= inst.chunks[k];
      continue;
    }
    if (!inst.prefilling.empty() && inst.prefilling.front() == slot) inst.prefilling.pop_front();
    if (r.resumed == 0) {
      NoteFirstToken(server, r);
      if (!boost_.empty()) NoteAwaiting(inst, -1);
    }
    // The prefill made the next token; each later step makes one more.
    r.done_at_step = inst.step + r.ToGenerate() - 1;
    r.order = next_order_++;
    server.generated_tokens += 1;
    inst.kv_pending -= r.KvPrompt() + 1;
    inst.context += r.KvPrompt() + 1;
    inst.outstanding -= inst.chunks[k] + 1;
    inst.running.push({r.done_at_step, r.order, slot});
  }
  inst.admitted.clear();
  while (!inst.running.empty() && inst.running.top().step <= inst.step) {
    const int slot = inst.running.top().slot;
    inst.running.pop();
    Complete(inst, slot);
  }
  inst.busy = false;
  Plan(i);
}

void Simulation::NoteIteration(const Instance& inst, Server& server, double batch) {
  const double joules = ArithmeticSum(inst.first_energy_j, inst.energy_growth_j, inst.steps);
  const double seconds = ArithmeticSum(inst.first_step_s, inst.step_growth_s, inst.steps);
  if (inst.mixed) {
    result_.prefill_energy_j += joules;
  } else {
    result_.decode_energy_j += joules;
    result_.decode_seconds += seconds;
  }
  if (options_.attribute_token_energy) {
    const double above = joules - instance_idle_w_ * seconds;
    const double decode = inst.mixed ? std::clamp(inst.decode_share_j, 0.0, above) : above;
    server.generated_j += decode;
    server.prompt_j += above - decode;
  }
  // Each running sequence's token of each step came one step's time after its last.
  if (server.itl) server.itl->AddRun(inst.first_step_s, inst.step_growth_s, inst.steps, batch);
}

void Simulation::NoteDecodeShare(Instance& inst, int batch, core::Megahertz f) {
  inst.decode_share_j = 0;
  if (batch == 0) return;
  const Step alone = Evaluate(model_.DecodeStep(DecodeTerms(batch), inst.context), RatesAt(f));
  inst.decode_share_j = alone.joules - instance_idle_w_ * alone.seconds;
}

void Simulation::AddEnergyWindow(Server& server) {
  const SimTime now = queue_.now();
  double energy = unused_gpus_idle_w_ * core::ToSeconds(now);
  // A run of decode steps credits its tokens at its end; an engine's counter counts each step's
  // as it comes, so the steps done so far count here.
  double generated = server.generated_tokens;
  double iterations = server.iterations;
  for (const int i : server.instances) {
    const auto k = static_cast<std::size_t>(i);
    instance_energy_j_[k] += instance_w_[k] * core::ToSeconds(now - instance_since_[k]);
    instance_since_[k] = now;
    energy += instance_energy_j_[k];
    Instance& inst = instances_[k];
    if (inst.busy && !inst.mixed) {
      const int done = StepsDone(inst);
      generated += done * static_cast<double>(inst.running.size());
      iterations += done;
    }
  }
  server.energy->Add({.at = core::TimePoint(now),
                      .energy = core::Joules(energy),
                      .prompt_tokens = server.prompt_tokens,
                      .generated_tokens = generated,
                      .iterations = iterations});
}

void Simulation::FinishPrefillBoost() {
  EnergySaverRun& run = *result_.energy_saver;
  run.prefill_boost = true;
  const SimTime end = queue_.now();
  run.instance_seconds = core::ToSeconds(end) * static_cast<double>(instances_.size());
  for (const PrefillBoost& b : boost_) {
    if (b.lifted && b.to == SimTime::max() && b.from < end) {
      run.boosted_instance_seconds += core::ToSeconds(end - b.from);
    }
  }
}

void Simulation::FinishTokenEnergy() {
  for (const Server& server : servers_) {
    ServerTokenEnergy& t = result_.token_energy.emplace_back();
    t.hp = server.hp;
    t.fit = server.energy->Fit();
    t.why = server.energy->why();
    t.prompt_tokens = server.prompt_tokens;
    t.generated_tokens = server.generated_tokens;
    t.prompt_j = server.prompt_j;
    t.generated_j = server.generated_j;
    t.idle_w =
        instance_idle_w_ * static_cast<double>(server.instances.size()) + unused_gpus_idle_w_;
  }
}

void Simulation::AddToWindow(double start_s, double row_w) {
  std::vector<PowerWindow>& windows = result_.power_windows;
  if (window_samples_ == 0) windows.push_back({.start_s = start_s, .mean_w = 0, .max_w = row_w});
  PowerWindow& w = windows.back();
  ++window_samples_;
  // A running mean: exact to rounding, and the window is complete whenever the run stops.
  w.mean_w += (row_w - w.mean_w) / window_samples_;
  w.max_w = std::max(w.max_w, row_w);
  if (window_samples_ == options_.power_window_periods) window_samples_ = 0;
}

double Simulation::GpuPower(std::size_t server) const {
  // A server's instances are numbered in a row (Setup): a few adjacent doubles, in its order.
  double w = unused_gpus_idle_w_;
  const std::size_t first = server * instances_per_server_;
  for (std::size_t i = first; i < first + instances_per_server_; ++i) w += instance_w_[i];
  return w;
}

void Simulation::ReportHolds(std::size_t s) {
  policy::ServerReport& report = control_view_.servers[s];
  report.holds = servers_[s].requested;
  if (!report.reachable) report.holds.reset();
}

void Simulation::ReportPending(std::size_t s) {
  control_view_.servers[s].pending = servers_[s].pending > 0;
}

double Simulation::ServerPower(double gpu_w) const {
  return gpu_w + model::NonGpuPower(config_.server, spec_, core::Watts(gpu_w)).value();
}

void Simulation::Integrate() {
  const SimTime now = queue_.now();
  row_energy_j_ += row_power_w_ * core::ToSeconds(now - integrated_until_);
  integrated_until_ = now;
}

void Simulation::OnTelemetry() {
  Integrate();
  // Re-add the row from its parts so rounding never accumulates over a long run; each server's
  // GPU power is kept for the control step, which (without a telemetry delay) reads it at once.
  row_power_w_ = 0;
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    gpu_w_[s] = GpuPower(s);
    row_power_w_ += ServerPower(gpu_w_[s]);
  }
  const double period_s = core::ToSeconds(config_.power.telemetry_period);
  const double row_w = (row_energy_j_ - energy_at_last_sample_) / period_s;
  energy_at_last_sample_ = row_energy_j_;
  const double now_s = core::ToSeconds(queue_.now());
  if (options_.keep_power_series) result_.power.push_back({now_s, row_w, state_});
  if (options_.power_window_periods > 0) AddToWindow(now_s - period_s, row_w);
  ++result_.power_samples;
  const double frac = row_w / result_.budget_w;
  ++result_.power_bins[static_cast<std::size_t>(std::clamp(frac * 20, 0.0, 20.0))];
  power_sum_w_ += row_w;
  // Minimum over the last cap_delay of samples, by a monotonic queue: O(1) per sample.
  while (!rise_window_.empty() && rise_window_.back().second >= row_w) rise_window_.pop_back();
  rise_window_.emplace_back(queue_.now(), row_w);
  while (queue_.now() - rise_window_.front().first > config_.power.cap_delay) {
    rise_window_.pop_front();
  }
  result_.max_rise_w = std::max(result_.max_rise_w, row_w - rise_window_.front().second);
  result_.peak_w = std::max(result_.peak_w, row_w);
  if (result_.power_samples > 1) {
    result_.max_ramp_w_per_s = std::max(result_.max_ramp_w_per_s, (row_w - last_row_w_) / period_s);
  }
  last_row_w_ = row_w;
  const bool over = row_w > result_.budget_w;
  if (over) result_.over_budget_s += period_s;
  if (over && !over_budget_) ++result_.over_budget_episodes;
  over_budget_ = over;
  // A server's period at a time, as a walk over the servers would add them, without the walk.
  for (int k = 0; k < braked_servers_; ++k) result_.brake_seconds += period_s;
  for (int k = 0; k < capped_servers_; ++k) result_.capped_server_seconds += period_s;
  if (!config_.power.budget_schedule.empty()) {
    MeterBudgetEvent(queue_.now() - config_.power.telemetry_period, row_w, period_s);
  }
  if (source_done_ && active_requests_ == 0) return;  // the run is over
  if (config_.power.telemetry_delay.count() == 0) {
    gpu_w_fresh_ = true;
    OnControl(row_w);
    gpu_w_fresh_ = false;
  } else {
    queue_.Schedule(queue_.now() + config_.power.telemetry_delay, {EventKind::kControl, 0, row_w});
  }
  queue_.Schedule(queue_.now() + config_.power.telemetry_period, {EventKind::kTelemetry});
}

bool Tighter(const ServerTargets& from, const ServerTargets& to) {
  const auto lower = [](auto before, auto after) { return after && (!before || *after < *before); };
  return lower(from.sm_clock_cap, to.sm_clock_cap) || lower(from.power_limit, to.power_limit);
}

void Simulation::OnControl(double row_w) {
  const SimTime now = queue_.now();
  result_.state_seconds[static_cast<std::size_t>(state_)] += core::ToSeconds(now - last_control_);
  last_control_ = now;
  if (options_.restart_controller_at && !restarted_policy_ && options_.make_policy &&
      now >= *options_.restart_controller_at) {
    restarted_policy_ = options_.make_policy();
    HEADROOM_CHECK(restarted_policy_ != nullptr) << "RunOptions::make_policy gave no policy";
    row_.emplace(*restarted_policy_, config_.control, controlled_);
    control_start_ = now;
  }
  // Kept from step to step: the row's control step runs once a simulated second, 600,000
  // times a week. Every server answers (unless RunOptions::unreachable says otherwise), holds
  // what was asked of it (acknowledged at once, as an agent's PUT is) and reads back its
  // targets; a change still in its actuation delay is pending. Those parts of its report are
  // written where they change (ReportHolds, ReportPending, UpdateEngineWindows), its power
  // here; the rest keeps its defaults (a plausible report, a lease, confirmed, no command failed
  // or in flight).
  policy::RowView& view = control_view_;
  view.now = now - control_start_;
  view.budget = config_.power.budget;
  if (!config_.power.budget_schedule.empty()) ShowBudget(now, view);
  view.metered = core::Watts(row_w);
  view.telemetry_age = config_.power.telemetry_delay;
  if (!options_.unreachable.empty()) {
    std::vector<bool>& reachable = reachable_;
    reachable.assign(servers_.size(), true);
    for (const RunOptions::Unreachable& u : options_.unreachable) {
      if (u.server >= 0 && static_cast<std::size_t>(u.server) < servers_.size() && now >= u.from &&
          now < u.from + u.length) {
        reachable[static_cast<std::size_t>(u.server)] = false;
      }
    }
    for (std::size_t s = 0; s < servers_.size(); ++s) {
      view.servers[s].reachable = reachable[s];
      ReportHolds(s);
    }
  }
  UpdateEngineWindows();
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    policy::ServerReport& report = view.servers[s];
    report.gpu_power = core::Watts(gpu_w_fresh_ ? gpu_w_[s] : GpuPower(s));
    if (report.serving) report.serving->age = now - engine_window_at_;
  }
  if (!options_.outside_commands.empty()) ApplyOutsideCommands();
  if (options_.on_control_view) options_.on_control_view(view);
  StepShadows(view);
  if (Idle(*row_, view)) return;
  const policy::RowStep& step = row_->Step(view);
  NoteStep(step);
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    const ServerTargets& want = step.decision.targets[s];
    if (options_.keep_target_changes) {
      if (want != decided_[s]) result_.target_changes.push_back({now, static_cast<int>(s), want});
      decided_[s] = want;
    }
    // Nothing to send, or nobody to send it to.
    if (!step.changed[s] || !control_view_.servers[s].reachable) continue;
    Server& server = servers_[s];
    if (want.sm_clock_cap != server.requested.sm_clock_cap ||
        want.power_limit != server.requested.power_limit) {
      if (Tighter(server.requested, want)) {
        ++result_.cap_actions;
      } else {
        ++result_.uncap_actions;
      }
    }
    if (want != server.requested) acted_ = true;
    SendTargets(s, want);
    row_->Accepted(s, want);
  }
  if (options_.keep_target_changes) {
    for (std::size_t s : step.reasserted) {
      result_.reasserted.push_back({now, static_cast<int>(s), step.decision.targets[s]});
    }
  }
  if (step.brake_event) ++result_.brake_events;
}

void Simulation::SendTargets(std::size_t s, const ServerTargets& want) {
  const SimTime now = queue_.now();
  const SimTime cap_delay =
      config_.power.in_band ? config_.power.in_band_delay : config_.power.cap_delay;
  Server& server = servers_[s];
  if (want.sm_clock_cap != server.requested.sm_clock_cap ||
      want.power_limit != server.requested.power_limit) {
    server.pending_caps.push_back(want);
    ++server.pending;
    ReportPending(s);
    queue_.Schedule(now + cap_delay, {EventKind::kApplyCaps, static_cast<int>(s)});
  }
  if (want.brake != server.requested.brake) {
    server.pending_brake.push_back(want.brake);
    ++server.pending;
    ReportPending(s);
    queue_.Schedule(now + config_.power.brake_delay, {EventKind::kApplyBrake, static_cast<int>(s)});
  }
  server.requested = want;
  ReportHolds(s);
}

void Simulation::ApplyOutsideCommands() {
  const SimTime now = queue_.now();
  const std::vector<RunOptions::OutsideCommand>& commands = options_.outside_commands;
  for (; next_outside_ < commands.size() && commands[next_outside_].at <= now; ++next_outside_) {
    const RunOptions::OutsideCommand& c = commands[next_outside_];
    if (c.server < 0 || static_cast<std::size_t>(c.server) >= servers_.size()) continue;
    SendTargets(static_cast<std::size_t>(c.server), c.targets);
  }
}

void Simulation::NoteStep(const policy::RowStep& step) {
  state_ = StateIndex(step.decision.state);
  result_.ramp_held_server_steps += step.ramp_held.size();
  result_.load_ramps += step.load_ramp ? 1 : 0;
  result_.events.insert(result_.events.end(), step.decision.events.begin(),
                        step.decision.events.end());
}

bool Simulation::Idle(const policy::RowController& row, const policy::RowView& view) const {
  // At rest, every server holding what the last step asked (sent at once, all answering), the
  // row under budget (nothing escalates) and its power where the policy's state cannot move
  // (RowPolicy::QuietBelow): the step would decide what the last did and change nothing. Most
  // seconds of an uncapped row's run and of its shadows, and the quiet hours under POLCA.
  // A ramp limit watches the row's own ramps at every step.
  if (!all_answer_ || !row.Resting() || config_.control.ramp_up_w_per_s > 0) return false;
  // A budget that changed is the controller's to see at once (its time to comply starts then).
  const core::Watts budget = policy::BudgetInForce(view);
  if (budget != row.budget()) return false;
  const double p = *view.metered / budget;  // as the policy's Observation::Fraction
  return p < 1 && p <= row.policy().QuietBelow();
}

void Simulation::ShowBudget(SimTime now, policy::RowView& view) const {
  const policy::BudgetSchedule& schedule = config_.power.budget_schedule;
  const std::optional<policy::BudgetOccurrence> in_force = schedule.At(now);
  if (!in_force) {
    view.requested.reset();
    return;
  }
  const policy::BudgetWindow& w = schedule.windows()[static_cast<std::size_t>(in_force->window)];
  view.requested = w.Budget(config_.power.budget);
  view.comply_within = w.comply_within;
}

int Simulation::BudgetEventAt(SimTime t) {
  const policy::BudgetSchedule& schedule = config_.power.budget_schedule;
  const std::optional<policy::BudgetOccurrence> in_force = schedule.At(t);
  if (!in_force) return -1;
  const double start_s = core::ToSeconds(in_force->begins);
  std::vector<BudgetEvent>& events = result_.budget_events;
  // Arrivals and samples reach an event in time order, give or take the instant at which one
  // event ends and the next begins.
  for (std::size_t k = events.size(); k-- > 0 && events[k].start_s >= start_s;) {
    if (events[k].start_s == start_s) return static_cast<int>(k);
  }
  const policy::BudgetWindow& w = schedule.windows()[static_cast<std::size_t>(in_force->window)];
  BudgetEvent event;
  event.reason = w.reason;
  event.start_s = start_s;
  event.end_s = core::ToSeconds(in_force->ends);
  event.budget_w = w.Budget(config_.power.budget).value();
  event.comply_within_s = core::ToSeconds(w.comply_within);
  double sum = 0;
  for (double watts : recent_w_) sum += watts;
  event.power_before_w = recent_w_.empty() ? 0 : sum / static_cast<double>(recent_w_.size());
  event.brake_events_before = result_.brake_events;
  events.push_back(std::move(event));
  return static_cast<int>(events.size() - 1);
}

void Simulation::MeasureSwing() {
  std::vector<double> watts;
  watts.reserve(result_.power.size());
  for (const PowerSample& p : result_.power) watts.push_back(p.row_w);
  const double period_s = core::ToSeconds(config_.power.telemetry_period);
  const Spectrum spectrum = WelchSpectrum(watts, period_s);
  if (spectrum.psd.empty()) return;
  result_.swing_nyquist_hz = 0.5 / period_s;
  result_.swing_low = Band(spectrum, 0.1, 2);
  result_.swing_high = Band(spectrum, 3, 30);
}

void Simulation::MeterBudgetEvent(SimTime start, double row_w, double period_s) {
  const int k = BudgetEventAt(start);
  if (k >= 0) {
    BudgetEvent& e = result_.budget_events[static_cast<std::size_t>(k)];
    const double since_s = core::ToSeconds(start) + period_s - e.start_s;  // at the sample's end
    e.energy_j += row_w * period_s;
    e.metered_s += period_s;
    e.compliance.Meter(since_s, row_w, period_s, e.budget_w, e.comply_within_s,
                       e.end_s - e.start_s);
    e.brake_events = result_.brake_events - e.brake_events_before;
    if (braked_servers_ == static_cast<int>(servers_.size())) {
      e.braked_s += period_s;
      e.braked_energy_j += row_w * period_s;
    }
  }
  recent_w_.push_back(row_w);
  const auto minute = static_cast<std::size_t>(std::max(1.0, std::round(60 / period_s)));
  while (recent_w_.size() > minute) recent_w_.pop_front();
}

void Simulation::StepShadows(const policy::RowView& view) {
  if (acted_) return;  // no shadow's run is this one any more
  for (Shadow& shadow : shadows_) {
    if (!shadow.quiet || Idle(*shadow.row, view)) continue;
    const policy::RowStep& step = shadow.row->Step(view);
    shadow.quiet = !step.brake_event;
    for (std::size_t s = 0; s < servers_.size() && shadow.quiet; ++s) {
      if (!step.changed[s] || !view.servers[s].reachable) continue;
      const ServerTargets& want = step.decision.targets[s];
      // Sending what the server holds changes nothing on the row; anything else is acting.
      shadow.quiet = want == servers_[s].requested;
      if (shadow.quiet) shadow.row->Accepted(s, want);
    }
  }
}

void Simulation::UpdateEngineWindows() {
  const SimTime now = queue_.now();
  if (config_.power.engine_window.count() <= 0 ||
      now - engine_window_at_ < config_.power.engine_window)
    return;
  engine_window_at_ = now;
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    Server& server = servers_[s];
    const double prompt = server.prompt_tokens - server.window_prompt_tokens;
    const double generated = server.generated_tokens - server.window_generated_tokens;
    server.window_prompt_tokens = server.prompt_tokens;
    server.window_generated_tokens = server.generated_tokens;
    policy::ServingSignal signal{.prefill_share =
                                     prompt + generated > 0 ? prompt / (prompt + generated) : 0};
    for (int i : server.instances) {
      const Instance& inst = instances_[static_cast<std::size_t>(i)];
      signal.waiting += static_cast<double>(inst.waiting.size());
      signal.running += static_cast<double>(inst.running.size() + inst.admitted.size());
    }
    control_view_.servers[s].serving = signal;
    if (server.saver) StepEnergySaver(server, config_.power.engine_window);
    if (server.energy && (!options_.token_energy_until || now <= *options_.token_energy_until)) {
      AddEnergyWindow(server);
    }
  }
}

void Simulation::StepEnergySaver(Server& server, SimTime window) {
  EnergySaverRun& run = *result_.energy_saver;
  const std::size_t before = server.saver->level();
  run.server_seconds[before] += core::ToSeconds(window);
  const SimTime now = queue_.now();
  // The window the agent would read from the engine's histograms, scraped at this instant.
  SaverStep step{.server = static_cast<int>(&server - servers_.data()),
                 .at = now,
                 .itl = server.itl->Sample(),
                 .ttft = server.ttft->Sample(),
                 .prompt_tokens = server.prompt_tokens,
                 .generated_tokens = server.generated_tokens};
  const telemetry::EngineLatencyReader::Reading read =
      server.latency->Add(step.itl, step.ttft, now);
  const policy::LatencyWindow w{.at = now,
                                .itl_p50_s = read.itl_p50_s,
                                .ttft_p99_s = read.ttft_p99_s,
                                .invalid = read.invalid};
  const policy::ClockChoice choice = server.saver->Step(
      now, read.first ? std::nullopt : std::optional(w), server.effective.sm_clock_cap);
  if (options_.on_energy_saver) {
    step.clock = choice.saver;
    options_.on_energy_saver(step);
  }
  if (choice.row_cap_wins) ++run.row_cap_won;
  if (!choice.changed) return;
  (server.saver->level() > before ? run.lowered : run.raised) += 1;
  Reschedule(server);
}

void Simulation::Reschedule(Server& server) {
  for (int i : server.instances) Interrupt(i);
}

void Simulation::OnApplyCaps(int s) {
  Server& server = servers_[static_cast<std::size_t>(s)];
  const ServerTargets next = server.pending_caps.front();
  server.pending_caps.pop_front();
  --server.pending;
  ReportPending(static_cast<std::size_t>(s));
  if (next.sm_clock_cap == server.effective.sm_clock_cap &&
      next.power_limit == server.effective.power_limit) {
    return;
  }
  capped_servers_ -= Capped(server.effective) ? 1 : 0;
  server.effective.sm_clock_cap = next.sm_clock_cap;
  server.effective.power_limit = next.power_limit;
  capped_servers_ += Capped(server.effective) ? 1 : 0;
  Reschedule(server);
}

void Simulation::OnApplyBrake(int s) {
  Server& server = servers_[static_cast<std::size_t>(s)];
  const bool brake = server.pending_brake.front();
  server.pending_brake.pop_front();
  --server.pending;
  ReportPending(static_cast<std::size_t>(s));
  if (brake == server.effective.brake) return;
  server.effective.brake = brake;
  braked_servers_ += brake ? 1 : -1;
  Reschedule(server);
}

core::Result<RowResult> Simulation::Run() {
  HEADROOM_RETURN_IF_ERROR(Setup());
  HEADROOM_ASSIGN_OR_RETURN(bool any, ScheduleNextArrival());
  if (!any) return core::Fail(core::Error::InvalidArgument("the trace has no requests"));
  queue_.Schedule(config_.power.telemetry_period, {EventKind::kTelemetry});
  std::uint64_t processed = 0;
  while (auto event = queue_.Pop()) {
    ++processed;
    if ((processed & 0xfff) == 0) {
      if (options_.stop && options_.stop->load()) {
        return core::Fail(core::Error::Cancelled("simulation stopped"));
      }
      if ((processed & 0xffff) == 0 && options_.progress && options_.expected_duration_s > 0) {
        options_.progress(
            std::min(1.0, core::ToSeconds(queue_.now()) / options_.expected_duration_s));
      }
    }
    const Payload& p = event->payload;
    switch (p.kind) {
      case EventKind::kArrival:
        HEADROOM_RETURN_IF_ERROR(OnArrival());
        break;
      case EventKind::kIterationEnd:
        OnIterationEnd(p.index);
        break;
      case EventKind::kTelemetry:
        OnTelemetry();
        break;
      case EventKind::kControl:
        OnControl(p.value);
        break;
      case EventKind::kApplyCaps:
        OnApplyCaps(p.index);
        break;
      case EventKind::kApplyBrake:
        OnApplyBrake(p.index);
        break;
    }
    if (source_done_ && active_requests_ == 0 && p.kind == EventKind::kTelemetry) break;
    if (options_.stop_after_power_events &&
        std::max(result_.brake_events, result_.over_budget_episodes) >
            *options_.stop_after_power_events) {
      result_.stopped_early = true;
      break;
    }
  }
  Integrate();
  result_.events_processed = processed;
  for (const Shadow& shadow : shadows_) result_.quiet_shadows.push_back(shadow.quiet && !acted_);
  result_.simulated_s = core::ToSeconds(queue_.now());
  result_.duration_s = last_arrival_s_;
  result_.energy_j = row_energy_j_;
  if (options_.attribute_token_energy) FinishTokenEnergy();
  if (!boost_.empty()) FinishPrefillBoost();
  for (const Server& server : servers_) {
    result_.prompt_tokens += server.prompt_tokens;
    result_.generated_tokens += server.generated_tokens;
  }
  result_.state_seconds[static_cast<std::size_t>(state_)] +=
      core::ToSeconds(queue_.now() - last_control_);
  result_.mean_w =
      result_.power_samples == 0 ? 0 : power_sum_w_ / static_cast<double>(result_.power_samples);
  if (options_.keep_power_series) MeasureSwing();
  for (ClassMetrics* m : {&result_.hp, &result_.lp}) {
    m->throughput_tok_s = result_.duration_s > 0 ? m->output_tokens / result_.duration_s : 0;
  }
  if (options_.progress) options_.progress(1.0);
  return std::move(result_);
}

}  // namespace

int HpServers(int servers, double hp_fraction) {
  return static_cast<int>(std::floor(servers * std::clamp(hp_fraction, 0.0, 1.0) + 1e-9));
}

double KvCapacityTokens(const RowConfig& config) {
  return KvCapacity(*config.model, config.model->gpu().spec(), config.instance);
}

core::Result<RowResult> SimulateRow(const RowConfig& config, RequestSource& source,
                                    policy::RowPolicy& policy, const RunOptions& options) {
  Simulation simulation(config, source, policy, options);
  return simulation.Run();
}

}  // namespace headroom::sim
