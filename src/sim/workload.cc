#include "sim/workload.h"

#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/named_traces.h"
#include "sim/trace_synth.h"

namespace headroom::sim {

namespace {

// Tags each request HP with a fixed probability (seeded), for one-trace workloads.
class FractionPriority final : public RequestSource {
 public:
  FractionPriority(std::unique_ptr<RequestSource> source, double hp_fraction, std::uint64_t seed)
      : source_(std::move(source)), hp_fraction_(hp_fraction), rng_(seed) {}
  core::Result<std::optional<TraceRequest>> Next() override {
    HEADROOM_ASSIGN_OR_RETURN(std::optional<TraceRequest> r, source_->Next());
    if (r) {
      // 53 random bits as a uniform double in [0, 1): the same on every platform.
      const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
      r->priority = u < hp_fraction_ ? Priority::kHigh : Priority::kLow;
    }
    return r;
  }

 private:
  std::unique_ptr<RequestSource> source_;
  double hp_fraction_;
  std::mt19937_64 rng_;
};

// Low priority for each request its trace gives none (an as-recorded log's requests by default),
// each recorded priority kept.
class LowUnlessRecorded final : public RequestSource {
 public:
  explicit LowUnlessRecorded(std::unique_ptr<RequestSource> source) : source_(std::move(source)) {}
  core::Result<std::optional<TraceRequest>> Next() override {
    HEADROOM_ASSIGN_OR_RETURN(std::optional<TraceRequest> r, source_->Next());
    if (r && r->priority == Priority::kUnspecified) r->priority = Priority::kLow;
    return r;
  }
  std::optional<core::Duration> start_time() const override { return source_->start_time(); }

 private:
  std::unique_ptr<RequestSource> source_;
};

// One class's stream at `rate` requests/s synthesized from the trace.
core::Result<std::unique_ptr<TraceSynth>> SynthStream(std::string_view trace, double rate,
                                                      const SynthParams& synth,
                                                      std::optional<Priority> priority,
                                                      std::uint64_t seed) {
  HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<RequestSource> source, OpenTrace(trace));
  HEADROOM_ASSIGN_OR_RETURN(TraceSample sample, SampleTrace(*source));
  SynthParams p = synth;
  p.mean_rate_per_s = rate;
  p.rate_scale = 1;
  p.seed = seed;
  p.priority = priority.value_or(Priority::kUnspecified);
  return TraceSynth::Create(std::move(sample), p);
}

// One class's stream at `rate` requests/s: synthesized from the trace, or the trace scaled.
core::Result<std::unique_ptr<RequestSource>> ClassStream(std::string_view trace, double rate,
                                                         const std::optional<SynthParams>& synth,
                                                         std::optional<Priority> priority,
                                                         std::uint64_t seed) {
  if (synth) {
    HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<TraceSynth> s,
                              SynthStream(trace, rate, *synth, priority, seed));
    return std::unique_ptr<RequestSource>(std::move(s));
  }
  HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<RequestSource> source, OpenTrace(trace));
  // Scale the real trace to the rate: its own mean rate comes from a first pass.
  HEADROOM_ASSIGN_OR_RETURN(const double trace_rate, MeanRate(*source));
  HEADROOM_ASSIGN_OR_RETURN(source, OpenTrace(trace));
  HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<ScaledSource> scaled,
                            ScaledSource::Create(std::move(source), rate / trace_rate, seed));
  std::vector<MergedSource::Input> inputs;
  inputs.push_back({std::move(scaled), priority});
  return std::unique_ptr<RequestSource>(std::make_unique<MergedSource>(std::move(inputs)));
}

}  // namespace

namespace {

// What a --trace choice means for a scenario: whether requests come by service (one trace per
// class) and whether they are synthesized, and with what parameters.
struct TraceChoice {
  bool own = false;  // the scenario's own workload ("" or "scenario")
  bool by_service = false;
  std::optional<SynthParams> synth;
};

TraceChoice Choose(const Scenario& scenario, std::string_view trace) {
  const WorkloadConfig& w = scenario.workload;
  TraceChoice c;
  c.own = trace.empty() || trace == "scenario";
  c.by_service = trace == "azure" || trace == "synth-week" ||
                 (c.own && w.priority == PriorityAssignment::kByService);
  if (trace == "synth-week") {
    c.synth = w.synth.value_or(SynthParams{});
    c.synth->duration = std::chrono::days(7);
  } else if (c.own) {
    c.synth = w.synth;
  }  // otherwise a named real trace replays as it is, scaled to the load
  if (c.synth && w.synth_window) {
    c.synth->window_begin = w.synth_window->begin;
    c.synth->duration = w.synth_window->end;
  }
  return c;
}

// workload.replay as-recorded: the one trace as it is, each request its own priority or low.
core::Result<std::unique_ptr<RequestSource>> AsRecorded(const Scenario& scenario,
                                                        std::string_view trace) {
  const WorkloadConfig& w = scenario.workload;
  const TraceChoice choice = Choose(scenario, trace);
  const auto refuse = [&](std::string_view why) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{}: workload.replay as-recorded replays one trace as it is, but {}",
                    scenario.source, why)));
  };
  if (trace == "azure" || trace == "synth-week") {
    return refuse(
        fmt::format("--trace {} {}", trace,
                    trace == "azure" ? "is two traces scaled by service" : "synthesizes a week"));
  }
  if (choice.own && w.synth) return refuse("workload.synth synthesizes its trace");
  if (choice.own && (w.priority == PriorityAssignment::kByService || w.trace.empty())) {
    return refuse("the scenario names no one trace (give it with --trace FILE or workload.trace)");
  }
  HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<RequestSource> source,
                            OpenTrace(choice.own ? w.trace : std::string(trace)));
  return std::unique_ptr<RequestSource>(std::make_unique<LowUnlessRecorded>(std::move(source)));
}

}  // namespace

core::Status RequireScaledWorkload(const Scenario& scenario, std::string_view what) {
  if (scenario.workload.replay == WorkloadReplay::kScaled) return core::Ok();
  return core::Fail(core::Error::InvalidArgument(
      fmt::format("{}: workload.replay as-recorded replays one log at its own load, but {} scales "
                  "the load with the servers; run it with headroom simulate",
                  scenario.source, what)));
}

namespace {

// One class's stream as a workload makes it: its trace, rate, priority and seed.
struct ClassSpec {
  std::string trace;
  double rate = 0;
  std::optional<Priority> priority;
  std::uint64_t seed = 0;
};

// The streams a scaled workload merges: by service one per class with load (HP, then LP), else
// one of both classes' load (priorities by the scenario's rule). The one place their traces,
// rates and seeds are chosen, so that a power verdict's streams are the workload's.
std::vector<ClassSpec> Classes(const Scenario& scenario, const TraceChoice& choice,
                               std::string_view trace, int servers, int hp_servers,
                               std::uint64_t seed) {
  const WorkloadConfig& w = scenario.workload;
  const double hp_rate = w.hp_rate_per_server * hp_servers;
  const double lp_rate = w.lp_rate_per_server * (servers - hp_servers);
  if (!choice.by_service) {
    return {
        {choice.own ? w.trace : std::string(trace), hp_rate + lp_rate, std::nullopt, seed * 2 + 1}};
  }
  std::vector<ClassSpec> out;
  if (hp_rate > 0) out.push_back({w.hp_trace, hp_rate, Priority::kHigh, seed * 2 + 1});
  if (lp_rate > 0) out.push_back({w.lp_trace, lp_rate, Priority::kLow, seed * 2 + 2});
  return out;
}

}  // namespace

core::Result<std::unique_ptr<RequestSource>> MakeWorkload(const Scenario& scenario,
                                                          std::string_view trace, int servers,
                                                          int hp_servers, std::uint64_t seed) {
  const WorkloadConfig& w = scenario.workload;
  if (w.replay == WorkloadReplay::kAsRecorded) return AsRecorded(scenario, trace);
  const TraceChoice choice = Choose(scenario, trace);
  const std::vector<ClassSpec> classes =
      Classes(scenario, choice, trace, servers, hp_servers, seed);
  if (choice.by_service) {
    std::vector<MergedSource::Input> inputs;
    for (const ClassSpec& c : classes) {
      HEADROOM_ASSIGN_OR_RETURN(auto stream,
                                ClassStream(c.trace, c.rate, choice.synth, c.priority, c.seed));
      inputs.push_back({std::move(stream), c.priority});
    }
    if (inputs.empty()) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("{}: the workload has no load (rates per server are 0)", scenario.source)));
    }
    return std::unique_ptr<RequestSource>(std::make_unique<MergedSource>(std::move(inputs)));
  }
  const ClassSpec& one = classes.front();
  HEADROOM_ASSIGN_OR_RETURN(auto stream,
                            ClassStream(one.trace, one.rate, choice.synth, one.priority, one.seed));
  if (w.priority == PriorityAssignment::kByTrace) return stream;
  return std::unique_ptr<RequestSource>(
      std::make_unique<FractionPriority>(std::move(stream), w.hp_request_fraction, seed * 2 + 3));
}

core::Result<std::vector<std::unique_ptr<TraceSynth>>> SynthStreams(const Scenario& scenario,
                                                                    std::string_view trace,
                                                                    int servers, int hp_servers,
                                                                    std::uint64_t seed) {
  const TraceChoice choice = Choose(scenario, trace);
  std::vector<std::unique_ptr<TraceSynth>> out;
  if (scenario.workload.replay != WorkloadReplay::kScaled || !choice.synth) return out;
  for (const ClassSpec& c : Classes(scenario, choice, trace, servers, hp_servers, seed)) {
    HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<TraceSynth> s,
                              SynthStream(c.trace, c.rate, *choice.synth, c.priority, c.seed));
    out.push_back(std::move(s));
  }
  return out;
}

double ExpectedDuration(const Scenario& scenario, std::string_view trace) {
  // A log replayed as recorded spans what it spans: unknown until it has been read.
  if (scenario.workload.replay == WorkloadReplay::kAsRecorded) return 0;
  const TraceChoice choice = Choose(scenario, trace);
  // The real traces span about an hour.
  return choice.synth ? core::ToSeconds(choice.synth->duration - choice.synth->window_begin)
                      : 3600.0;
}

bool SynthesizedWorkload(const Scenario& scenario, std::string_view trace) {
  return scenario.workload.replay == WorkloadReplay::kScaled &&
         Choose(scenario, trace).synth.has_value();
}

}  // namespace headroom::sim
