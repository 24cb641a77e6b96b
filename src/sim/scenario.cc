#include "sim/scenario.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "catalog/embedded_data.h"
#include "core/files.h"
#include "core/parse.h"
#include "core/yaml_reader.h"
#include "policy/budget_schedule.h"
#include "policy/policy_factory.h"
#include "sim/workload.h"

namespace headroom::sim {
namespace {

core::Result<core::Duration> DurationField(const core::YamlReader& doc, std::string_view key,
                                           core::Duration fallback) {
  HEADROOM_ASSIGN_OR_RETURN(auto text, doc.OptionalString(key));
  if (!text) return fallback;
  auto d = core::ParseDuration(*text);
  if (!d) return core::Fail(doc.ErrorAt(key, d.error().message()));
  if (d->count() < 0) return core::Fail(doc.ErrorAt(key, "must not be negative"));
  return *d;
}

template <class T>
core::Status OptionalNumberInto(const core::YamlReader& doc, std::string_view key, double min,
                                double max, T* out) {
  if (!doc.Has(key)) return core::Ok();
  if constexpr (std::is_integral_v<T>) {
    // A count: `servers: 2.5` is an error, never 2.
    constexpr double kIntMax = std::numeric_limits<int>::max();
    HEADROOM_ASSIGN_OR_RETURN(int v, doc.IntegerIn(key, static_cast<int>(std::max(min, -kIntMax)),
                                                   static_cast<int>(std::min(max, kIntMax))));
    *out = static_cast<T>(v);
  } else {
    HEADROOM_ASSIGN_OR_RETURN(double v, doc.NumberIn(key, min, max));
    *out = static_cast<T>(v);
  }
  return core::Ok();
}

core::Status ParseStressList(const core::YamlReader& plan, Scenario& s) {
  HEADROOM_ASSIGN_OR_RETURN(std::vector<core::YamlReader> items, plan.MapList("stress"));
  s.plan_stress.clear();
  for (const core::YamlReader& item : items) {
    StressCase c;
    HEADROOM_ASSIGN_OR_RETURN(c.name, item.String("name"));
    if (c.name.empty()) return core::Fail(item.ErrorAt("name", "must not be empty"));
    for (const std::string& key : item.Keys()) {
      if (key == "name") continue;
      if (std::find(std::begin(kStressKeys), std::end(kStressKeys), key) == std::end(kStressKeys)) {
        return core::Fail(item.ErrorAt(key, fmt::format("unknown stress key (known: name, {})",
                                                        fmt::join(kStressKeys, ", "))));
      }
      HEADROOM_ASSIGN_OR_RETURN(std::string value, item.String(key));
      const core::Status set = SetStressKey(c, key, value);
      if (!set) return core::Fail(item.ErrorAt(key, set.error().message()));
    }
    for (const StressCase& other : s.plan_stress) {
      if (other.name == c.name) {
        return core::Fail(item.ErrorAt("name", fmt::format("'{}' appears twice", c.name)));
      }
    }
    s.plan_stress.push_back(std::move(c));
  }
  return core::Ok();
}

core::Status ParseRow(const core::YamlReader& row, Scenario& s) {
  HEADROOM_RETURN_IF_ERROR(
      row.CheckKnownKeys({"server", "servers", "budget_w", "budget_servers", "hp_server_fraction",
                          "non_gpu_idle_w", "non_gpu_at_load_w"}));
  for (const auto& [key, out] : {std::pair{"non_gpu_idle_w", &s.non_gpu_idle_w},
                                 std::pair{"non_gpu_at_load_w", &s.non_gpu_at_load_w}}) {
    if (!row.Has(key)) continue;
    HEADROOM_ASSIGN_OR_RETURN(double w, row.NumberIn(key, 0, 1e6));
    *out = w;
  }
  HEADROOM_ASSIGN_OR_RETURN(s.server, row.String("server"));
  HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(row, "servers", 1, 100000, &s.servers));
  if (row.Has("budget_w")) {
    HEADROOM_ASSIGN_OR_RETURN(double w, row.NumberIn("budget_w", 1, 1e9));
    s.budget_w = w;
  }
  if (row.Has("budget_servers")) {
    HEADROOM_ASSIGN_OR_RETURN(int n, row.IntegerIn("budget_servers", 1, 100000));
    s.budget_servers = n;
  }
  if (s.budget_w && s.budget_servers) {
    return core::Fail(row.ErrorAt("budget_w", "give budget_w or budget_servers, not both"));
  }
  return OptionalNumberInto(row, "hp_server_fraction", 0, 1, &s.hp_server_fraction);
}

core::Result<RouterKind> ParseRouter(const core::YamlReader& doc, std::string_view key,
                                     std::string_view text) {
  if (text == "least-work") return RouterKind::kLeastWork;
  if (text == "least-requests") return RouterKind::kLeastRequests;
  if (text == "round-robin") return RouterKind::kRoundRobin;
  return core::Fail(doc.ErrorAt(
      key,
      fmt::format("unknown router '{}' (known: least-work, least-requests, round-robin)", text)));
}

// serving.prefix_cache and serving.overhead: what an engine today does around its iterations.
core::Status ParseServingExtras(const core::YamlReader& doc, InstanceConfig& instance) {
  if (doc.Has("prefix_cache")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader cache, doc.Map("prefix_cache"));
    HEADROOM_RETURN_IF_ERROR(cache.CheckKnownKeys({"shared_prefix_tokens", "hit_rate"}));
    PrefixCacheConfig& c = instance.prefix_cache;
    HEADROOM_RETURN_IF_ERROR(
        OptionalNumberInto(cache, "shared_prefix_tokens", 0, 1 << 24, &c.shared_prefix_tokens));
    HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(cache, "hit_rate", 0, 0.999999, &c.hit_rate));
  }
  if (doc.Has("overhead")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader overhead, doc.Map("overhead"));
    HEADROOM_RETURN_IF_ERROR(overhead.CheckKnownKeys({"per_request", "per_prompt_token"}));
    ServerOverheadConfig& o = instance.overhead;
    HEADROOM_ASSIGN_OR_RETURN(
        core::Duration fixed,
        DurationField(overhead, "per_request", core::FromSeconds(o.per_request_s)));
    HEADROOM_ASSIGN_OR_RETURN(
        core::Duration per_token,
        DurationField(overhead, "per_prompt_token", core::FromSeconds(o.per_prompt_token_s)));
    o.per_request_s = core::ToSeconds(fixed);
    o.per_prompt_token_s = core::ToSeconds(per_token);
    o.from_engine = false;
  }
  return core::Ok();
}

core::Status ParseServing(const core::YamlReader& doc, Scenario& s) {
  HEADROOM_RETURN_IF_ERROR(
      doc.CheckKnownKeys({"model", "engine", "tp", "max_batch_sequences", "max_prefill_tokens",
                          "memory_fraction", "router", "max_num_batched_tokens", "prefix_cache",
                          "overhead", "instances_per_server", "sm_clock_lock"}));
  for (const char* key : {"max_batch_sequences", "max_num_batched_tokens"}) {
    if (doc.Has(key)) s.serving_given.insert(key);
  }
  HEADROOM_ASSIGN_OR_RETURN(s.model, doc.String("model"));
  HEADROOM_ASSIGN_OR_RETURN(auto engine, doc.OptionalString("engine"));
  if (engine) s.engine = *engine;
  HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(doc, "tp", 1, 64, &s.instance.tp));
  HEADROOM_RETURN_IF_ERROR(
      OptionalNumberInto(doc, "instances_per_server", 1, 64, &s.instance.instances_per_server));
  HEADROOM_RETURN_IF_ERROR(
      OptionalNumberInto(doc, "max_batch_sequences", 1, 65536, &s.instance.max_batch_sequences));
  HEADROOM_RETURN_IF_ERROR(
      OptionalNumberInto(doc, "max_prefill_tokens", 1, 1 << 24, &s.instance.max_prefill_tokens));
  HEADROOM_RETURN_IF_ERROR(
      OptionalNumberInto(doc, "memory_fraction", 0.05, 1, &s.instance.memory_fraction));
  HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(doc, "max_num_batched_tokens", 0, 1 << 24,
                                              &s.instance.max_num_batched_tokens));
  HEADROOM_RETURN_IF_ERROR(
      OptionalNumberInto(doc, "sm_clock_lock", 1, 1e5, &s.instance.sm_clock_lock_mhz));
  HEADROOM_RETURN_IF_ERROR(ParseServingExtras(doc, s.instance));
  // The settings together (sim::ValidateServing, which a run checks too), named in the file.
  if (auto st = ValidateServing(s.instance); !st) {
    return core::Fail(doc.ErrorAt("", st.error().message()));
  }
  HEADROOM_ASSIGN_OR_RETURN(auto router, doc.OptionalString("router"));
  if (router) {
    HEADROOM_ASSIGN_OR_RETURN(s.router, ParseRouter(doc, "router", *router));
  }
  return core::Ok();
}

core::Status ParseSynth(const core::YamlReader& doc, SynthParams& p) {
  HEADROOM_RETURN_IF_ERROR(
      doc.CheckKnownKeys({"duration", "peak_to_trough", "peak_hour", "weekend_factor",
                          "bursts_per_day", "burst_size", "burst_length"}));
  HEADROOM_ASSIGN_OR_RETURN(p.duration, DurationField(doc, "duration", p.duration));
  if (p.duration.count() <= 0) return core::Fail(doc.ErrorAt("duration", "must be positive"));
  HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(doc, "peak_to_trough", 1, 100, &p.peak_to_trough));
  HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(doc, "peak_hour", 0, 24, &p.peak_hour));
  HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(doc, "weekend_factor", 0.01, 10, &p.weekend_factor));
  HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(doc, "bursts_per_day", 0, 10000, &p.bursts_per_day));
  HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(doc, "burst_size", 1, 100, &p.burst_size));
  HEADROOM_ASSIGN_OR_RETURN(p.burst_length, DurationField(doc, "burst_length", p.burst_length));
  return core::Ok();
}

// `workload.replay` (scaled, as-recorded). As recorded, one trace is replayed at its own load
// with its own priorities: the keys that set a load or a mix would silently do nothing, so each
// is refused by name.
core::Status ParseReplay(const core::YamlReader& doc, WorkloadConfig& w) {
  HEADROOM_ASSIGN_OR_RETURN(auto replay, doc.OptionalString("replay"));
  if (!replay || *replay == "scaled") return core::Ok();
  if (*replay != "as-recorded") {
    return core::Fail(doc.ErrorAt(
        "replay", fmt::format("unknown replay '{}' (known: scaled, as-recorded)", *replay)));
  }
  w.replay = WorkloadReplay::kAsRecorded;
  for (const char* key : {"hp_trace", "lp_trace", "hp_request_fraction", "hp_rate_per_server",
                          "lp_rate_per_server", "synth", "target_baseline_peak"}) {
    if (doc.Has(key)) {
      return core::Fail(doc.ErrorAt(
          key, "does not apply with replay: as-recorded (one trace replayed at its own load)"));
    }
  }
  if (doc.Has("priority") && w.priority != PriorityAssignment::kByTrace) {
    return core::Fail(doc.ErrorAt(
        "priority", "must be by-trace with replay: as-recorded (each request keeps its own)"));
  }
  w.priority = PriorityAssignment::kByTrace;
  return core::Ok();
}

core::Status ParseWorkload(const core::YamlReader& doc, WorkloadConfig& w) {
  HEADROOM_RETURN_IF_ERROR(doc.CheckKnownKeys(
      {"priority", "hp_trace", "lp_trace", "trace", "hp_request_fraction", "hp_rate_per_server",
       "lp_rate_per_server", "synth", "target_baseline_peak", "replay"}));
  HEADROOM_ASSIGN_OR_RETURN(auto priority, doc.OptionalString("priority"));
  if (priority) {
    if (*priority == "by-service") {
      w.priority = PriorityAssignment::kByService;
    } else if (*priority == "by-trace") {
      w.priority = PriorityAssignment::kByTrace;
    } else if (*priority == "by-fraction") {
      w.priority = PriorityAssignment::kByFraction;
    } else {
      return core::Fail(doc.ErrorAt(
          "priority", fmt::format("unknown assignment '{}' (known: by-service, by-trace, "
                                  "by-fraction)",
                                  *priority)));
    }
  }
  HEADROOM_RETURN_IF_ERROR(ParseReplay(doc, w));
  HEADROOM_ASSIGN_OR_RETURN(auto hp, doc.OptionalString("hp_trace"));
  if (hp) w.hp_trace = *hp;
  HEADROOM_ASSIGN_OR_RETURN(auto lp, doc.OptionalString("lp_trace"));
  if (lp) w.lp_trace = *lp;
  HEADROOM_ASSIGN_OR_RETURN(auto one, doc.OptionalString("trace"));
  if (one) w.trace = *one;
  if (w.priority != PriorityAssignment::kByService && w.trace.empty()) {
    return core::Fail(doc.ErrorAt("trace", "required unless priority is by-service"));
  }
  HEADROOM_RETURN_IF_ERROR(
      OptionalNumberInto(doc, "hp_request_fraction", 0, 1, &w.hp_request_fraction));
  HEADROOM_RETURN_IF_ERROR(
      OptionalNumberInto(doc, "hp_rate_per_server", 0, 1e6, &w.hp_rate_per_server));
  HEADROOM_RETURN_IF_ERROR(
      OptionalNumberInto(doc, "lp_rate_per_server", 0, 1e6, &w.lp_rate_per_server));
  HEADROOM_RETURN_IF_ERROR(
      OptionalNumberInto(doc, "target_baseline_peak", 0, 1, &w.target_baseline_peak));
  if (doc.Has("synth")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader synth, doc.Map("synth"));
    SynthParams p;
    HEADROOM_RETURN_IF_ERROR(ParseSynth(synth, p));
    w.synth = p;
  }
  return core::Ok();
}

core::Status ParsePower(const core::YamlReader& doc, PowerDeliveryConfig& p) {
  HEADROOM_RETURN_IF_ERROR(doc.CheckKnownKeys(
      {"telemetry_period", "telemetry_delay", "cap_delay", "brake_delay", "in_band",
       "in_band_delay", "engine_window", "budget_schedule", "ramp_up_w_per_s", "ramp_window"}));
  if (doc.Has("ramp_up_w_per_s")) {
    // Zero is no limit at all: leave the key out for that.
    HEADROOM_ASSIGN_OR_RETURN(p.ramp_up_w_per_s, doc.NumberIn("ramp_up_w_per_s", 1e-3, 1e9));
  }
  HEADROOM_ASSIGN_OR_RETURN(p.ramp_window, DurationField(doc, "ramp_window", p.ramp_window));
  if (p.ramp_window.count() <= 0) return core::Fail(doc.ErrorAt("ramp_window", "must be positive"));
  if (doc.Has("budget_schedule")) {
    HEADROOM_ASSIGN_OR_RETURN(std::vector<core::YamlReader> items, doc.MapList("budget_schedule"));
    HEADROOM_ASSIGN_OR_RETURN(p.budget_schedule,
                              policy::ParseBudgetSchedule(items, /*once_allowed=*/true));
  }
  HEADROOM_ASSIGN_OR_RETURN(p.telemetry_period,
                            DurationField(doc, "telemetry_period", p.telemetry_period));
  if (p.telemetry_period.count() <= 0) {
    return core::Fail(doc.ErrorAt("telemetry_period", "must be positive"));
  }
  HEADROOM_ASSIGN_OR_RETURN(p.telemetry_delay,
                            DurationField(doc, "telemetry_delay", p.telemetry_delay));
  HEADROOM_ASSIGN_OR_RETURN(p.cap_delay, DurationField(doc, "cap_delay", p.cap_delay));
  HEADROOM_ASSIGN_OR_RETURN(p.brake_delay, DurationField(doc, "brake_delay", p.brake_delay));
  HEADROOM_ASSIGN_OR_RETURN(p.in_band_delay, DurationField(doc, "in_band_delay", p.in_band_delay));
  HEADROOM_ASSIGN_OR_RETURN(p.engine_window, DurationField(doc, "engine_window", p.engine_window));
  if (doc.Has("in_band")) {
    HEADROOM_ASSIGN_OR_RETURN(p.in_band, doc.Bool("in_band"));
  }
  return core::Ok();
}

core::Status ParseSlo(const core::YamlReader& doc, Slo& slo) {
  HEADROOM_RETURN_IF_ERROR(doc.CheckKnownKeys(
      {"hp_p50_e2e_pct", "hp_p99_e2e_pct", "lp_p50_e2e_pct", "max_brake_events"}));
  HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(doc, "hp_p50_e2e_pct", 0, 1e6, &slo.hp_p50_e2e_pct));
  HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(doc, "hp_p99_e2e_pct", 0, 1e6, &slo.hp_p99_e2e_pct));
  HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(doc, "lp_p50_e2e_pct", 0, 1e6, &slo.lp_p50_e2e_pct));
  return OptionalNumberInto(doc, "max_brake_events", 0, 1e12, &slo.max_brake_events);
}

}  // namespace

core::Status SetSlo(Slo& slo, std::string_view key_value) {
  const auto eq = key_value.find('=');
  const std::string_view key = core::Trim(key_value.substr(0, eq));
  auto value = eq == std::string_view::npos
                   ? core::Result<double>(core::Fail(core::Error::InvalidArgument("")))
                   : core::ParseDouble(key_value.substr(eq + 1));
  if (!value || *value < 0) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "SLO '{}': expected key=value with a value >= 0, e.g. lp_p50_e2e_pct=10", key_value)));
  }
  if (key == "hp_p50_e2e_pct") {
    slo.hp_p50_e2e_pct = *value;
  } else if (key == "hp_p99_e2e_pct") {
    slo.hp_p99_e2e_pct = *value;
  } else if (key == "lp_p50_e2e_pct") {
    slo.lp_p50_e2e_pct = *value;
  } else if (key == "max_brake_events") {
    // A count: whole and within what the cast can hold (1e300 was undefined behaviour).
    if (*value != std::floor(*value) || *value > std::numeric_limits<int>::max()) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("SLO '{}': max_brake_events must be a whole number up to {}", key_value,
                      std::numeric_limits<int>::max())));
    }
    slo.max_brake_events = static_cast<std::uint64_t>(*value);
  } else {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("unknown SLO key '{}' (known: hp_p50_e2e_pct, hp_p99_e2e_pct, "
                    "lp_p50_e2e_pct, max_brake_events)",
                    key)));
  }
  return core::Ok();
}

namespace {

// One --serving value for `key`: a whole number, a number or a duration, by the key.
core::Status SetServingValue(InstanceConfig& i, std::string_view key, std::string_view text) {
  const auto whole = [&](int* out) -> core::Status {
    auto v = core::ParseInteger(text);
    if (!v || *v < 0 || *v > (1 << 24)) {
      return core::Fail(core::Error::InvalidArgument("expected a whole number"));
    }
    *out = static_cast<int>(*v);
    return core::Ok();
  };
  const auto seconds = [&](double* out) -> core::Status {
    HEADROOM_ASSIGN_OR_RETURN(core::Duration d, core::ParseDuration(text));
    if (d.count() < 0) return core::Fail(core::Error::InvalidArgument("must not be negative"));
    *out = core::ToSeconds(d);
    return core::Ok();
  };
  if (key == "tp") return whole(&i.tp);
  if (key == "instances_per_server") return whole(&i.instances_per_server);
  if (key == "max_batch_sequences") return whole(&i.max_batch_sequences);
  if (key == "max_prefill_tokens") return whole(&i.max_prefill_tokens);
  if (key == "max_num_batched_tokens") return whole(&i.max_num_batched_tokens);
  if (key == "prefix_shared_tokens") return whole(&i.prefix_cache.shared_prefix_tokens);
  if (key.starts_with("overhead_")) i.overhead.from_engine = false;
  if (key == "overhead_per_request") return seconds(&i.overhead.per_request_s);
  if (key == "overhead_per_prompt_token") return seconds(&i.overhead.per_prompt_token_s);
  if (key == "sm_clock_lock") {
    HEADROOM_ASSIGN_OR_RETURN(double v, core::ParseDouble(text));
    if (!(v > 0)) return core::Fail(core::Error::InvalidArgument("expected a clock in MHz"));
    i.sm_clock_lock_mhz = v;
    return core::Ok();
  }
  if (key == "prefix_hit_rate" || key == "memory_fraction") {
    HEADROOM_ASSIGN_OR_RETURN(double v, core::ParseDouble(text));
    (key == "prefix_hit_rate" ? i.prefix_cache.hit_rate : i.memory_fraction) = v;
    return core::Ok();
  }
  return core::Fail(core::Error::InvalidArgument(
      "unknown key (known: tp, instances_per_server, max_batch_sequences, max_prefill_tokens, "
      "max_num_batched_tokens, memory_fraction, prefix_shared_tokens, prefix_hit_rate, "
      "overhead_per_request, overhead_per_prompt_token, sm_clock_lock)"));
}

}  // namespace

namespace {

core::Status SetEnergySaverValue(EnergySaverScenario& e, std::string_view key,
                                 std::string_view text) {
  const auto fraction = [&](double lo, double hi, double* out) -> core::Status {
    HEADROOM_ASSIGN_OR_RETURN(double v, core::ParseDouble(text));
    if (!(v > lo && v <= hi)) {
      return core::Fail(core::Error::InvalidArgument(fmt::format("must be in ({}, {}]", lo, hi)));
    }
    *out = v;
    return core::Ok();
  };
  const auto duration = [&](core::Duration* out) -> core::Status {
    HEADROOM_ASSIGN_OR_RETURN(*out, core::ParseDuration(text));
    if (out->count() < 0) return core::Fail(core::Error::InvalidArgument("must not be negative"));
    return core::Ok();
  };
  const auto slo = [&](double* out) -> core::Status {
    core::Duration d{};
    HEADROOM_RETURN_IF_ERROR(duration(&d));
    if (d.count() <= 0) return core::Fail(core::Error::InvalidArgument("must be above 0"));
    *out = core::ToSeconds(d);
    return core::Ok();
  };
  policy::EnergySaverSettings& s = e.settings;
  if (key == "itl_p50_slo") return slo(&s.itl_p50_slo_s);
  if (key == "ttft_p99_slo") return slo(&s.ttft_p99_slo_s);
  if (key == "settle") return duration(&s.settle);
  if (key == "stale_after") return duration(&s.stale_after);
  if (key == "breach_memory") return duration(&s.breach_memory);
  if (key == "floor") return fraction(0, 1, &e.floor);
  if (key == "lp_itl_p50_slo") return slo(&e.lp_itl_p50_slo_s.emplace());
  if (key == "lp_ttft_p99_slo") return slo(&e.lp_ttft_p99_slo_s.emplace());
  if (key == "ttft_window") {
    HEADROOM_RETURN_IF_ERROR(duration(&e.ttft_window));
    if (e.ttft_window.count() <= 0) {
      return core::Fail(core::Error::InvalidArgument("must be above 0"));
    }
    return core::Ok();
  }
  if (key == "phase_aware") {
    if (text != "true" && text != "false") {
      return core::Fail(core::Error::InvalidArgument("expected true or false"));
    }
    e.phase_aware = text == "true";
    return core::Ok();
  }
  if (key == "prefill_boost") return duration(&e.prefill_boost.emplace());
  if (key == "step") return fraction(0, 0.5, &e.step);
  if (key == "margin") {
    HEADROOM_ASSIGN_OR_RETURN(double v, core::ParseDouble(text));
    if (!(v >= 0 && v < 1)) return core::Fail(core::Error::InvalidArgument("must be in [0, 1)"));
    s.margin = v;
    return core::Ok();
  }
  return core::Fail(core::Error::InvalidArgument(
      "unknown key (known: itl_p50_slo, ttft_p99_slo, margin, settle, stale_after, "
      "breach_memory, floor, step, phase_aware, prefill_boost, lp_itl_p50_slo, lp_ttft_p99_slo, "
      "ttft_window)"));
}

// Both SLOs must be given: there is no latency a saver could assume for an engine.
core::Status CheckEnergySaverSlos(const EnergySaverScenario& e) {
  if (e.settings.itl_p50_slo_s <= 0 || e.settings.ttft_p99_slo_s <= 0) {
    return core::Fail(
        core::Error::InvalidArgument("give both itl_p50_slo and ttft_p99_slo (e.g. 60ms, 3s)"));
  }
  // Two answers to one question (what clock prefill runs at): the engine's, and the agent's.
  if (e.phase_aware && e.prefill_boost) {
    return core::Fail(core::Error::InvalidArgument(
        "phase_aware and prefill_boost exclude each other: an engine that sets the clock per "
        "iteration needs no boost from outside"));
  }
  return core::Ok();
}

core::Status ParseEnergySaver(const core::YamlReader& doc, Scenario& s) {
  EnergySaverScenario e;
  for (const std::string& key : doc.Keys()) {
    HEADROOM_ASSIGN_OR_RETURN(std::string text, doc.String(key));
    if (auto st = SetEnergySaverValue(e, key, text); !st) {
      return core::Fail(doc.ErrorAt(key, st.error().message()));
    }
  }
  if (auto st = CheckEnergySaverSlos(e); !st) {
    return core::Fail(st.error().WithContext(s.source + ": energy_saver"));
  }
  s.energy_saver = e;
  return core::Ok();
}

}  // namespace

core::Status SetEnergySaver(Scenario& scenario, std::string_view key_value) {
  const auto eq = key_value.find('=');
  if (eq == std::string_view::npos) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "--energy-saver {}: expected key=value, e.g. --energy-saver itl_p50_slo=60ms", key_value)));
  }
  EnergySaverScenario& e =
      scenario.energy_saver ? *scenario.energy_saver : scenario.energy_saver.emplace();
  const std::string_view key = core::Trim(key_value.substr(0, eq));
  if (auto st = SetEnergySaverValue(e, key, core::Trim(key_value.substr(eq + 1))); !st) {
    return core::Fail(st.error().WithContext(fmt::format("--energy-saver {}", key_value)));
  }
  return core::Ok();
}

core::Status SetServing(Scenario& scenario, std::string_view key_value) {
  const auto eq = key_value.find('=');
  if (eq == std::string_view::npos) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--serving {}: expected key=value, e.g. --serving max_num_batched_tokens=2048",
                    key_value)));
  }
  const std::string_view key = core::Trim(key_value.substr(0, eq));
  if (auto st = SetServingValue(scenario.instance, key, core::Trim(key_value.substr(eq + 1)));
      !st) {
    return core::Fail(st.error().WithContext(fmt::format("--serving {}", key_value)));
  }
  scenario.serving_given.insert(std::string(key));
  return core::Ok();
}

namespace {

// plan.executor: {kind: slurm, work_dir: /shared/headroom, partition, account, time_limit,
// tasks_at_once, retries, sbatch_args: [...]}.
core::Status ParseExecutor(const core::YamlReader& plan, Scenario::Executor& e) {
  HEADROOM_ASSIGN_OR_RETURN(const core::YamlReader x, plan.Map("executor"));
  HEADROOM_RETURN_IF_ERROR(
      x.CheckKnownKeys({"kind", "work_dir", "partition", "account", "time_limit", "tasks_at_once",
                        "retries", "sbatch_args", "runs_per_task"}));
  HEADROOM_ASSIGN_OR_RETURN(e.kind, x.String("kind"));
  if (e.kind != "local" && e.kind != "slurm") {
    return core::Fail(x.ErrorAt("kind", "expected local or slurm"));
  }
  for (auto [key, value] :
       {std::pair{"work_dir", &e.work_dir}, std::pair{"partition", &e.partition},
        std::pair{"account", &e.account}, std::pair{"time_limit", &e.time_limit}}) {
    HEADROOM_ASSIGN_OR_RETURN(const std::optional<std::string> text, x.OptionalString(key));
    *value = text.value_or("");
  }
  if (x.Has("tasks_at_once")) {
    HEADROOM_ASSIGN_OR_RETURN(e.tasks_at_once, x.IntegerIn("tasks_at_once", 0, 1'000'000));
  }
  if (x.Has("retries")) {
    HEADROOM_ASSIGN_OR_RETURN(e.retries, x.IntegerIn("retries", 0, 100));
  }
  HEADROOM_ASSIGN_OR_RETURN(e.sbatch_args, x.StringList("sbatch_args"));
  if (x.Has("runs_per_task")) {
    HEADROOM_ASSIGN_OR_RETURN(e.runs_per_task, x.IntegerIn("runs_per_task", 0, 1'000'000));
  }
  return core::Ok();
}

core::Status ParseDemandResponse(const core::YamlReader& plan, Scenario& s) {
  HEADROOM_ASSIGN_OR_RETURN(const core::YamlReader x, plan.Map("demand_response"));
  HEADROOM_RETURN_IF_ERROR(x.CheckKnownKeys({"shed", "for", "comply_within"}));
  DemandResponse d;
  HEADROOM_ASSIGN_OR_RETURN(const std::string shed, x.String("shed"));
  auto pct = core::ParsePercent(shed);
  if (!pct) return core::Fail(x.ErrorAt("shed", pct.error().message()));
  d.shed = *pct / 100;
  for (auto [key, value] :
       {std::pair{"for", &d.length}, std::pair{"comply_within", &d.comply_within}}) {
    HEADROOM_ASSIGN_OR_RETURN(const std::optional<std::string> text, x.OptionalString(key));
    if (!text) continue;
    auto duration = core::ParseDuration(*text);
    if (!duration) return core::Fail(x.ErrorAt(key, duration.error().message()));
    *value = *duration;
  }
  if (auto ok = CheckDemandResponse(d); !ok) return core::Fail(x.ErrorAt("", ok.error().message()));
  s.plan_demand_response = d;
  return core::Ok();
}

}  // namespace

core::Result<Scenario> ParseScenario(std::string_view text, std::string source) {
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader doc, core::YamlReader::Parse(text, source));
  // A training row (sim/training_scenario.h) is its own file: `simulate` and `plan` run it.
  if (doc.Has("kind")) {
    return core::Fail(
        doc.ErrorAt("kind",
                    "a training-row scenario: `headroom simulate --config` and `plan --config` run "
                    "it, nothing else does; an inference row has no `kind`"));
  }
  HEADROOM_RETURN_IF_ERROR(
      doc.CheckKnownKeys({"name", "description", "row", "serving", "workload", "power", "policy",
                          "slo", "plan", "seed", "energy_saver"}));
  Scenario s;
  s.source = std::move(source);
  HEADROOM_ASSIGN_OR_RETURN(s.name, doc.String("name"));
  HEADROOM_ASSIGN_OR_RETURN(auto description, doc.OptionalString("description"));
  s.description = description.value_or("");
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader row, doc.Map("row"));
  HEADROOM_RETURN_IF_ERROR(ParseRow(row, s));
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader serving, doc.Map("serving"));
  HEADROOM_RETURN_IF_ERROR(ParseServing(serving, s));
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader workload, doc.Map("workload"));
  HEADROOM_RETURN_IF_ERROR(ParseWorkload(workload, s.workload));
  if (doc.Has("power")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader power, doc.Map("power"));
    HEADROOM_RETURN_IF_ERROR(ParsePower(power, s.power));
  }
  if (doc.Has("energy_saver")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader saver, doc.Map("energy_saver"));
    HEADROOM_RETURN_IF_ERROR(ParseEnergySaver(saver, s));
  }
  if (doc.Has("policy")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader policy, doc.Map("policy"));
    const std::vector<std::string> known = policy::ParamNames();
    for (const std::string& key : policy.Keys()) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        return core::Fail(policy.ErrorAt(
            key, fmt::format("unknown policy constant (known: {})", fmt::join(known, ", "))));
      }
      HEADROOM_ASSIGN_OR_RETURN(double v, policy.Number(key));
      s.policy_overrides.emplace_back(key, v);
    }
  }
  if (doc.Has("slo")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader slo, doc.Map("slo"));
    HEADROOM_RETURN_IF_ERROR(ParseSlo(slo, s.slo));
  }
  if (doc.Has("plan")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader plan, doc.Map("plan"));
    HEADROOM_RETURN_IF_ERROR(plan.CheckKnownKeys(
        {"policies", "max_extra_pct", "weeks", "validate_weeks", "max_weekly_risk", "confidence",
         "stress", "risk_beyond", "executor", "demand_response"}));
    if (plan.Has("stress")) HEADROOM_RETURN_IF_ERROR(ParseStressList(plan, s));
    if (plan.Has("executor")) HEADROOM_RETURN_IF_ERROR(ParseExecutor(plan, s.plan_executor));
    if (plan.Has("demand_response")) HEADROOM_RETURN_IF_ERROR(ParseDemandResponse(plan, s));
    if (plan.Has("policies")) {
      HEADROOM_ASSIGN_OR_RETURN(s.plan_policies, plan.StringList("policies"));
    }
    HEADROOM_RETURN_IF_ERROR(
        OptionalNumberInto(plan, "max_extra_pct", 0, 1000, &s.plan_max_extra_pct));
    HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(plan, "weeks", 1, kMaxPlanWeeks, &s.plan_weeks));
    if (plan.Has("validate_weeks")) {
      int weeks = 0;
      HEADROOM_RETURN_IF_ERROR(
          OptionalNumberInto(plan, "validate_weeks", 0, kMaxUnseenWeeks, &weeks));
      s.plan_validate_weeks = weeks;
    }
    // (0, 1) and (0.5, 1): the ends themselves are refused when the plan starts, naming the key.
    HEADROOM_RETURN_IF_ERROR(
        OptionalNumberInto(plan, "max_weekly_risk", 0, 1, &s.plan_max_weekly_risk));
    HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(plan, "confidence", 0.5, 1, &s.plan_confidence));
    HEADROOM_RETURN_IF_ERROR(
        OptionalNumberInto(plan, "risk_beyond", 0, kMaxRiskBeyond, &s.plan_risk_beyond));
  }
  HEADROOM_RETURN_IF_ERROR(OptionalNumberInto(doc, "seed", 0, 9e15, &s.seed));
  return s;
}

core::Status CheckDemandResponse(const DemandResponse& d) {
  const auto bad = [](std::string why) { return core::Fail(core::Error::InvalidArgument(why)); };
  if (!(d.shed > 0 && d.shed < 1)) {
    return bad(fmt::format("a shed of {:g}% is not in (0%, 100%)", d.shed * 100));
  }
  // The plan searches the largest shed held in whole percents, and asks in them too.
  if (std::abs(d.shed * 100 - std::round(d.shed * 100)) > 1e-9) {
    return bad(fmt::format("a shed of {:g}%: give a whole percent", d.shed * 100));
  }
  // A day of the busiest row is the most a plan simulates per event and policy.
  if (d.length <= core::Duration::zero() || d.length > std::chrono::hours(24)) {
    return bad(fmt::format("an event of {} is not in (0, 24h]", core::FormatDuration(d.length)));
  }
  if (d.comply_within <= core::Duration::zero() || d.comply_within >= d.length) {
    return bad(fmt::format("a time to comply of {} must be above 0 and shorter than the event ({})",
                           core::FormatDuration(d.comply_within), core::FormatDuration(d.length)));
  }
  return core::Ok();
}

core::Status SetStressKey(StressCase& c, std::string_view key, std::string_view value) {
  if (key == "burst_length") {
    HEADROOM_ASSIGN_OR_RETURN(core::Duration d, core::ParseDuration(value));
    if (d <= core::Duration::zero()) {
      return core::Fail(core::Error::InvalidArgument("burst_length must be above 0"));
    }
    c.burst_length = d;
    return core::Ok();
  }
  struct Range {
    std::string_view key;
    double min, max;
  };
  // Load factors from a tenth to ten times; the synth keys within the scenario's own ranges.
  static constexpr Range kRanges[] = {{"load", 0.1, 10},      {"hp_load", 0.1, 10},
                                      {"lp_load", 0.1, 10},   {"bursts_per_day", 0, 10000},
                                      {"burst_size", 1, 100}, {"peak_to_trough", 1, 100}};
  const Range* range = nullptr;
  for (const Range& r : kRanges) {
    if (r.key == key) range = &r;
  }
  if (range == nullptr) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("unknown stress key '{}' (known: {})", key, fmt::join(kStressKeys, ", "))));
  }
  HEADROOM_ASSIGN_OR_RETURN(double v, core::ParseDouble(value));
  if (!(v >= range->min && v <= range->max)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} {} must be in [{}, {}]", key, v, range->min, range->max)));
  }
  if (key == "load") {
    c.hp_load = c.lp_load = v;
  } else if (key == "hp_load") {
    c.hp_load = v;
  } else if (key == "lp_load") {
    c.lp_load = v;
  } else if (key == "bursts_per_day") {
    c.bursts_per_day = v;
  } else if (key == "burst_size") {
    c.burst_size = v;
  } else {
    c.peak_to_trough = v;
  }
  return core::Ok();
}

core::Result<StressCase> ParseStressCase(std::string_view spec) {
  const auto fail = [&](std::string_view why) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--stress '{}': {} (expected NAME:KEY=VALUE[,KEY=VALUE...], keys: {})", spec,
                    why, fmt::join(kStressKeys, ", "))));
  };
  const std::size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return fail("no ':' after the name");
  StressCase c;
  c.name = std::string(spec.substr(0, colon));
  if (c.name.empty()) return fail("the name is empty");
  const std::string_view fields = spec.substr(colon + 1);
  if (fields.empty()) return fail("no KEY=VALUE");
  for (std::string_view field : core::Split(fields, ',')) {
    const std::size_t eq = field.find('=');
    if (eq == std::string_view::npos) return fail(fmt::format("'{}' is not KEY=VALUE", field));
    const core::Status set = SetStressKey(c, field.substr(0, eq), field.substr(eq + 1));
    if (!set) return fail(set.error().message());
  }
  return c;
}

std::string DescribeStress(const StressCase& c) {
  std::vector<std::string> parts;
  if (c.hp_load == c.lp_load && c.hp_load != 1) {
    parts.push_back(fmt::format("load x{:g}", c.hp_load));
  } else {
    if (c.hp_load != 1) parts.push_back(fmt::format("HP load x{:g}", c.hp_load));
    if (c.lp_load != 1) parts.push_back(fmt::format("LP load x{:g}", c.lp_load));
  }
  if (c.bursts_per_day) parts.push_back(fmt::format("{:g} bursts a day", *c.bursts_per_day));
  if (c.burst_size) parts.push_back(fmt::format("bursts x{:g}", *c.burst_size));
  if (c.burst_length) {
    parts.push_back(fmt::format("bursts {} long", core::FormatDuration(*c.burst_length)));
  }
  if (c.peak_to_trough) parts.push_back(fmt::format("peak/trough {:g}", *c.peak_to_trough));
  if (parts.empty()) parts.push_back("unchanged");
  return fmt::format("{} ({})", c.name, fmt::join(parts, ", "));
}

core::Result<Scenario> Stressed(const Scenario& scenario, const StressCase& c,
                                std::string_view trace) {
  Scenario s = scenario;
  s.workload.hp_rate_per_server *= c.hp_load;
  s.workload.lp_rate_per_server *= c.lp_load;
  const bool shape = c.bursts_per_day || c.burst_size || c.burst_length || c.peak_to_trough;
  if (!shape) return s;
  if (!SynthesizedWorkload(scenario, trace)) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "stress case '{}' changes bursts or the daily curve, which only a synthesized workload "
        "has (the workload '{}' replays real traces)",
        c.name, trace.empty() ? "scenario" : trace)));
  }
  if (!s.workload.synth) s.workload.synth = SynthParams{};  // synth-week's default shape
  SynthParams& p = *s.workload.synth;
  p.bursts_per_day = c.bursts_per_day.value_or(p.bursts_per_day);
  p.burst_size = c.burst_size.value_or(p.burst_size);
  p.burst_length = c.burst_length.value_or(p.burst_length);
  p.peak_to_trough = c.peak_to_trough.value_or(p.peak_to_trough);
  return s;
}

std::vector<std::string> ScenarioNames() {
  std::vector<std::string> names;
  for (const core::EmbeddedFile& f : catalog::EmbeddedScenarioFiles()) {
    std::string_view path = f.path;
    path = path.substr(path.find_last_of('/') + 1);
    names.emplace_back(path.substr(0, path.rfind(".yaml")));
  }
  return names;
}

core::Result<ScenarioFile> ReadScenarioFile(std::string_view name_or_path) {
  for (const core::EmbeddedFile& f : catalog::EmbeddedScenarioFiles()) {
    std::string_view path = f.path;
    std::string_view base = path.substr(path.find_last_of('/') + 1);
    if (base == std::string(name_or_path) + ".yaml") {
      return ScenarioFile{std::string(f.parse_text()), std::string(path)};
    }
  }
  auto text = core::ReadFile(std::string(name_or_path));
  if (!text) {
    return core::Fail(core::Error::NotFound(
        fmt::format("no scenario '{}': not a built-in one ({}) and not a readable file ({})",
                    name_or_path, fmt::join(ScenarioNames(), ", "), text.error().message())));
  }
  return ScenarioFile{std::move(*text), std::string(name_or_path)};
}

core::Result<Scenario> LoadScenario(std::string_view name_or_path) {
  HEADROOM_ASSIGN_OR_RETURN(ScenarioFile file, ReadScenarioFile(name_or_path));
  return ParseScenario(file.text, std::move(file.source));
}

namespace {

// What the engine's server does unless the scenario says otherwise: its own time per request,
// and its scheduler's defaults on this GPU type (vLLM: chunked prefill within
// max_num_batched_tokens, max_num_seqs running).
void ApplyEngineDefaults(const Scenario& scenario, const catalog::InferenceFits& engine,
                         const model::InferenceEfficiency& fit, const std::string& gpu,
                         InstanceConfig& instance) {
  if (instance.overhead.from_engine) {
    instance.overhead = {.per_request_s = fit.server_request_s};
  }
  const std::optional<catalog::SchedulerDefaults> defaults = engine.SchedulerFor(gpu);
  if (!defaults) return;
  if (!scenario.serving_given.contains("max_num_batched_tokens")) {
    instance.max_num_batched_tokens = defaults->max_num_batched_tokens;
  }
  if (!scenario.serving_given.contains("max_batch_sequences")) {
    instance.max_batch_sequences = defaults->max_num_seqs;
  }
}

}  // namespace

namespace {

// serving.sm_clock_lock within the GPU's range, and the energy saver's clocks on its grid.
core::Status ApplyClockSettings(const Scenario& scenario, const model::GpuSpec& gpu,
                                const std::string& where, RowConfig& row) {
  if (const double lock = row.instance.sm_clock_lock_mhz;
      lock > 0 && (lock < gpu.sm_clock_min.value() || lock > gpu.sm_clock_max.value())) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{}: serving.sm_clock_lock {:.0f} MHz is outside {}'s {:.0f}-{:.0f} MHz", where,
                    lock, gpu.name, gpu.sm_clock_min.value(), gpu.sm_clock_max.value())));
  }
  if (scenario.energy_saver) {
    if (auto st = CheckEnergySaverSlos(*scenario.energy_saver); !st) {
      return core::Fail(st.error().WithContext(where + ": energy_saver"));
    }
    row.energy_saver = scenario.energy_saver->settings;
    row.energy_saver_phase_aware = scenario.energy_saver->phase_aware;
    row.energy_saver_prefill_boost = scenario.energy_saver->prefill_boost;
    row.energy_saver->clocks =
        policy::EnergySaverClocks(gpu, scenario.energy_saver->floor, scenario.energy_saver->step);
    row.energy_saver_ttft_window = scenario.energy_saver->ttft_window;
    const EnergySaverScenario& e = *scenario.energy_saver;
    if (e.lp_itl_p50_slo_s || e.lp_ttft_p99_slo_s) {
      row.energy_saver_lp = row.energy_saver;
      row.energy_saver_lp->itl_p50_slo_s = e.lp_itl_p50_slo_s.value_or(e.settings.itl_p50_slo_s);
      row.energy_saver_lp->ttft_p99_slo_s = e.lp_ttft_p99_slo_s.value_or(e.settings.ttft_p99_slo_s);
    }
  }
  return core::Ok();
}

// The model's weights leave room for a KV cache on the instance's GPUs; else which of the two
// to change, the GPUs an instance spans or the share of their memory, with the figures.
core::Status CheckKvCacheRoom(const std::string& where, const std::string& model,
                              const model::GpuSpec& gpu, const RowConfig& row) {
  if (KvCapacityTokens(row) >= 1) return core::Ok();
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  const double memory = static_cast<double>(gpu.memory_bytes) / kGiB;
  return core::Fail(core::Error::InvalidArgument(fmt::format(
      "{}: {} does not fit on {} {} GPUs: {:.2f} GiB of weights per GPU, {:.2f} GiB usable "
      "(serving.memory_fraction {} of {:.0f} GiB), none left for its KV cache; raise serving.tp "
      "or serving.memory_fraction",
      where, model, row.instance.tp, gpu.name, row.model->WeightBytesPerGpu(row.instance.tp) / kGiB,
      memory * row.instance.memory_fraction, row.instance.memory_fraction, memory)));
}

}  // namespace

core::Result<ResolvedScenario> Resolve(const Scenario& scenario, const Catalogs& catalogs) {
  const std::string where = scenario.source;
  HEADROOM_ASSIGN_OR_RETURN(const model::ServerSpec* server,
                            catalogs.hardware->Server(scenario.server));
  HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec* gpu, catalogs.hardware->Gpu(server->gpu));
  HEADROOM_ASSIGN_OR_RETURN(const model::ModelSpec* spec, catalogs.models->Model(scenario.model));
  auto engine = catalogs.engines->Engine(scenario.engine);
  if (!engine) return core::Fail(engine.error().WithContext(where + ": serving.engine"));
  auto fit = (*engine)->For(gpu->name);
  if (!fit) return core::Fail(fit.error().WithContext(where));
  ResolvedScenario out;
  out.scenario = scenario;
  RowConfig& row = out.row;
  row.server = *server;
  row.engine = {.name = (*engine)->engine(),
                .version = (*engine)->version(),
                .description = (*engine)->description()};
  row.server.non_gpu_idle_power =
      core::Watts(scenario.non_gpu_idle_w.value_or(server->non_gpu_idle_power.value()));
  row.server.non_gpu_power =
      core::Watts(scenario.non_gpu_at_load_w.value_or(server->non_gpu_power.value()));
  if (row.server.non_gpu_idle_power > row.server.non_gpu_power ||
      gpu->tdp * server->gpus_per_server + row.server.non_gpu_power > server->max_system_power) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "{}: non-GPU power {:.0f} W idle and {:.0f} W at load does not fit server '{}': idle "
        "must be at most the load's, and {} GPUs at TDP plus it at most {:.0f} W",
        scenario.source, row.server.non_gpu_idle_power.value(), row.server.non_gpu_power.value(),
        server->name, server->gpus_per_server, server->max_system_power.value())));
  }
  row.model = std::make_shared<const model::InferenceModel>(*spec, model::GpuPowerModel(*gpu),
                                                            fit->efficiency);
  row.servers = scenario.servers;
  row.hp_server_fraction = scenario.hp_server_fraction;
  row.instance = scenario.instance;
  ApplyEngineDefaults(scenario, **engine, fit->efficiency, gpu->name, row.instance);
  row.router = scenario.router;
  row.power = scenario.power;
  const double budget = scenario.budget_w ? *scenario.budget_w
                                          : scenario.budget_servers.value_or(scenario.servers) *
                                                server->max_system_power.value();
  row.power.budget = core::Watts(budget);
  row.control.ramp_up_w_per_s = row.power.ramp_up_w_per_s;
  row.control.ramp_window = row.power.ramp_window;
  HEADROOM_RETURN_IF_ERROR(ApplyClockSettings(scenario, *gpu, where, row));
  if (auto shape = InstancesPerServer(row.instance, server->gpus_per_server, server->name);
      !shape) {
    return core::Fail(shape.error().WithContext(where + ": serving"));
  }
  if (auto st = ValidateServing(row.instance); !st) {
    return core::Fail(st.error().WithContext(where + ": serving"));
  }
  HEADROOM_RETURN_IF_ERROR(CheckKvCacheRoom(where, spec->name, *gpu, row));
  out.params = policy::DefaultParamsFor(*gpu);
  for (const auto& [key, value] : scenario.policy_overrides) {
    if (auto st = policy::SetParam(out.params, key, value); !st) {
      return core::Fail(st.error().WithContext(where + ": policy"));
    }
  }
  if (auto st = policy::ValidateParams(out.params, *gpu); !st) {
    return core::Fail(st.error().WithContext(where + ": policy"));
  }
  // The controller sees every sample this late; policies treat older data as stale and never
  // lift a cap on it, so a delay at or past that bound would leave every cap on for good.
  if (row.power.telemetry_delay >= out.params.stale_after) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "{}: power.telemetry_delay {} is not below the policy's stale_after_s {}: no cap would "
        "ever lift",
        where, core::FormatDuration(row.power.telemetry_delay),
        core::FormatDuration(out.params.stale_after))));
  }
  return out;
}

core::Result<ResolvedScenario> LoadAndResolveBuiltIn(std::string_view name_or_path) {
  HEADROOM_ASSIGN_OR_RETURN(Scenario scenario, LoadScenario(name_or_path));
  HEADROOM_ASSIGN_OR_RETURN(catalog::HardwareCatalog hardware,
                            catalog::HardwareCatalog::Embedded());
  HEADROOM_ASSIGN_OR_RETURN(catalog::ModelCatalog models, catalog::ModelCatalog::Embedded());
  HEADROOM_ASSIGN_OR_RETURN(catalog::EngineCatalog engines, catalog::EngineCatalog::Embedded());
  return Resolve(scenario, {&hardware, &models, &engines});
}

}  // namespace headroom::sim
