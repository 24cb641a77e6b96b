#include "sim/characterize.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpu/sim/sim_device.h"

namespace headroom::sim {
namespace {

using core::Megahertz;
using core::Watts;

struct Run {
  std::vector<std::pair<double, double>> power;  // (s, W) of the instant readings
  telemetry::EnergyReport report;
};

// Applies the setting through the Device interface, as a real characterization would, then
// samples one pass of `script` on virtual time.
core::Result<Run> RunScript(const model::GpuSpec& spec, gpu::sim::LoadScript script,
                            const Setting& setting, core::Duration interval) {
  core::FakeClock clock;
  gpu::sim::SimOptions options;
  const core::Duration duration = script.period();
  options.script = std::move(script);
  gpu::sim::SimDevice device(0, spec, &clock, options);
  if (setting.kind == Setting::Kind::kClockLock) {
    HEADROOM_RETURN_IF_ERROR(device.LockSmClocks(spec.sm_clock_min, Megahertz(setting.value)));
  } else if (setting.kind == Setting::Kind::kPowerLimit) {
    HEADROOM_RETURN_IF_ERROR(device.SetPowerLimit(Watts(setting.value)));
  }
  const size_t samples = static_cast<size_t>(duration / interval) + 2;
  HEADROOM_ASSIGN_OR_RETURN(
      auto sampler, telemetry::Sampler::Create({&device}, &clock,
                                               {.interval = interval, .ring_capacity = samples}));
  const core::TimePoint start = clock.Now();
  sampler->SampleOnce();
  for (core::Duration t = interval; t <= duration; t += interval) {
    clock.Advance(interval);
    if (!sampler->SampleOnce()) return core::Fail(*sampler->error());
  }
  Run run;
  for (const telemetry::Sample& s : sampler->Recent()) {
    if (s.snapshot.power_instant) {
      run.power.emplace_back(core::ToSeconds(s.snapshot.time - start),
                             s.snapshot.power_instant->value());
    }
  }
  run.report = sampler->Reports()[0];
  return run;
}

void FillPower(const Run& run, Row& row) {
  std::vector<double> watts;
  for (const auto& [t, w] : run.power) watts.push_back(w);
  row.peak_power_w = run.report.peak_power.value();
  row.mean_power_w = run.report.average_power.value();
  row.p99_power_w = Percentile(watts, 0.99);
  row.time_capped_s = core::ToSeconds(run.report.time_power_capped);
  row.duration_s = core::ToSeconds(run.report.duration);
  row.energy_source = telemetry::EnergySourceName(run.report.source);
}

// The clock each phase settles at under the setting.
Megahertz ClockFor(const model::GpuPowerModel& gpu, const Setting& s, const model::Phase& phase) {
  const model::GpuSpec& spec = gpu.spec();
  switch (s.kind) {
    case Setting::Kind::kClockLock:
      return spec.SnapClock(Megahertz(s.value));
    case Setting::Kind::kPowerLimit:
      return gpu.MaxClockUnder(Watts(s.value), phase, 1.0, spec.sm_clock_max);
    case Setting::Kind::kDefault:
      return gpu.MaxClockUnder(spec.power_limit_default, phase, 1.0, spec.sm_clock_max);
  }
  return spec.sm_clock_max;
}

gpu::sim::LoadSegment Segment(const char* kind, const model::Phase& phase, double seconds) {
  return {.kind = kind,
          .phase = phase,
          .busy = 1.0,
          .duration =
              std::max(core::FromSeconds(seconds), core::Duration(std::chrono::milliseconds(1)))};
}

struct InferencePlan {
  model::Phase prefill, decode;
  double prefill_s = 0, decode_step_s = 0;
};

InferencePlan Plan(const model::InferenceModel& m, const Setting& setting, const InferenceCase& c) {
  const model::InferenceShape shape{
      .tp = c.tp, .batch = c.batch, .prompt = c.prompt, .context = c.prompt + c.output / 2};
  InferencePlan plan;
  plan.prefill = m.PrefillPhase(shape);
  plan.decode = *m.DecodePhase(shape);
  plan.prefill_s = m.AtClock(plan.prefill, c.tp, ClockFor(m.gpu(), setting, plan.prefill)).time_s;
  plan.decode_step_s = m.AtClock(plan.decode, c.tp, ClockFor(m.gpu(), setting, plan.decode)).time_s;
  return plan;
}

gpu::sim::LoadScript RequestScript(const InferencePlan& plan, const InferenceCase& c) {
  return gpu::sim::LoadScript::FromSegments(
      {Segment("prefill", plan.prefill, plan.prefill_s),
       Segment("decode", plan.decode, plan.decode_step_s * c.output)});
}

// `iterations` of compute then synchronization, timed for the setting's clock.
gpu::sim::LoadScript TrainingScript(const model::TrainingModel& m,
                                    const model::IterationEstimate& it, int iterations) {
  std::vector<gpu::sim::LoadSegment> segments;
  for (int i = 0; i < iterations; ++i) {
    segments.push_back(Segment("compute", m.ComputePhase(), it.compute_s));
    segments.push_back(Segment("sync", m.SyncPhase(), it.sync_s));
  }
  return gpu::sim::LoadScript::FromSegments(std::move(segments));
}

}  // namespace

std::vector<Setting> SweepSettings(std::span<const core::Megahertz> clocks,
                                   std::span<const core::Watts> limits) {
  std::vector<Setting> settings{Setting{}};
  for (core::Megahertz f : clocks) settings.push_back({Setting::Kind::kClockLock, f.value()});
  for (core::Watts w : limits) settings.push_back({Setting::Kind::kPowerLimit, w.value()});
  return settings;
}

std::vector<InferenceCase> InferenceGrid(int tp, std::span<const int> batches,
                                         std::span<const int> prompts, int output) {
  std::vector<InferenceCase> cases;
  for (int b : batches) {
    for (int p : prompts) cases.push_back({.tp = tp, .batch = b, .prompt = p, .output = output});
  }
  return cases;
}

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t i = std::min(values.size() - 1, static_cast<size_t>(q * (values.size() - 1) + 0.5));
  return values[i];
}

core::Result<std::vector<Row>> CharacterizeInference(const model::InferenceModel& m,
                                                     const std::vector<Setting>& settings,
                                                     const std::vector<InferenceCase>& shapes,
                                                     core::Duration interval) {
  if (m.model().architecture == model::ModelArchitecture::kEncoder) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} is encoder-only: it has no decode phase to characterize as LLM inference",
                    m.model().name)));
  }
  std::vector<Row> rows;
  for (const Setting& setting : settings) {
    for (const InferenceCase& c : shapes) {
      const InferencePlan plan = Plan(m, setting, c);
      HEADROOM_ASSIGN_OR_RETURN(
          Run run, RunScript(m.gpu().spec(), RequestScript(plan, c), setting, interval));
      Row row;
      row.setting = setting;
      row.shape = c;
      FillPower(run, row);
      row.prefill_s = plan.prefill_s;
      row.decode_step_s = plan.decode_step_s;
      row.latency_s = plan.prefill_s + plan.decode_step_s * c.output;
      row.energy_per_unit_j =
          run.report.energy.value() * c.tp / (static_cast<double>(c.batch) * c.output);
      rows.push_back(row);
    }
  }
  return rows;
}

core::Result<std::vector<Row>> CharacterizeTraining(const model::TrainingModel& m,
                                                    const std::vector<Setting>& settings,
                                                    int iterations, core::Duration interval) {
  std::vector<Row> rows;
  const model::Phase compute = m.ComputePhase();
  const model::Phase sync = m.SyncPhase();
  for (const Setting& setting : settings) {
    const model::IterationEstimate it = m.AtClock(ClockFor(m.gpu(), setting, compute));
    std::vector<gpu::sim::LoadSegment> segments;
    for (int i = 0; i < iterations; ++i) {
      segments.push_back(Segment("compute", compute, it.compute_s));
      segments.push_back(Segment("sync", sync, it.sync_s));
    }
    HEADROOM_ASSIGN_OR_RETURN(
        Run run,
        RunScript(m.gpu().spec(), gpu::sim::LoadScript::FromSegments(segments), setting, interval));
    Row row;
    row.setting = setting;
    FillPower(run, row);
    row.latency_s = it.time_s();
    row.energy_per_unit_j = run.report.energy.value() / (m.workload().tokens_per_gpu * iterations);
    rows.push_back(row);
  }
  return rows;
}

core::Result<Trace> TraceInference(const model::InferenceModel& m, const Setting& setting,
                                   const InferenceCase& shape, core::Duration interval) {
  const InferencePlan plan = Plan(m, setting, shape);
  HEADROOM_ASSIGN_OR_RETURN(
      Run run, RunScript(m.gpu().spec(), RequestScript(plan, shape), setting, interval));
  return Trace{setting.Label(), std::move(run.power)};
}

core::Result<Trace> TraceTraining(const model::TrainingModel& m, const Setting& setting,
                                  int iterations, core::Duration interval) {
  const model::IterationEstimate it = m.AtClock(ClockFor(m.gpu(), setting, m.ComputePhase()));
  HEADROOM_ASSIGN_OR_RETURN(
      Run run, RunScript(m.gpu().spec(), TrainingScript(m, it, iterations), setting, interval));
  return Trace{setting.Label(), std::move(run.power)};
}

std::vector<SettingSummary> Summarize(const std::vector<Row>& rows, size_t shapes) {
  std::vector<SettingSummary> out;
  for (size_t i = 0; i + shapes <= rows.size(); i += shapes) {
    SettingSummary s{rows[i].setting.Label()};
    double peak = 0, base_peak = 0, energy = 0, base_energy = 0;
    for (size_t k = 0; k < shapes; ++k) {
      const Row& r = rows[i + k];
      const Row& base = rows[k];
      s.worst_slowdown = std::max(s.worst_slowdown, r.latency_s / base.latency_s - 1.0);
      peak = std::max(peak, r.peak_power_w);
      base_peak = std::max(base_peak, base.peak_power_w);
      energy += r.energy_per_unit_j;
      base_energy += base.energy_per_unit_j;
    }
    s.peak_change = peak / base_peak - 1.0;
    s.energy_change = energy / base_energy - 1.0;
    out.push_back(s);
  }
  return out;
}

std::optional<size_t> BestUnderSlo(const std::vector<SettingSummary>& summary,
                                   double slo_fraction) {
  std::optional<size_t> best;
  for (size_t i = 0; i < summary.size(); ++i) {
    // The tolerance keeps a setting exactly at the SLO (e.g. 5.000000001% from rounding) in.
    if (summary[i].worst_slowdown > slo_fraction + 1e-9) continue;
    if (!best || summary[i].peak_change < summary[*best].peak_change) best = i;
  }
  return best;
}

std::vector<Setting> TracedSettings(const std::vector<Setting>& settings) {
  std::vector<Setting> shown{settings.front()};
  for (auto kind : {Setting::Kind::kClockLock, Setting::Kind::kPowerLimit}) {
    const Setting* lowest = nullptr;
    for (const Setting& st : settings) {
      if (st.kind == kind && (lowest == nullptr || st.value < lowest->value)) lowest = &st;
    }
    if (lowest != nullptr) shown.push_back(*lowest);
  }
  return shown;
}

namespace {

// Fills the verdicts and, when asked, the traces (`trace` runs one setting).
template <typename TraceOne>
core::Result<SimulatedSweep> CompleteSweep(std::vector<Row> rows, size_t shapes,
                                           const std::vector<Setting>& settings,
                                           const SweepOptions& options, TraceOne&& trace) {
  SimulatedSweep sweep{.rows = std::move(rows), .shapes = shapes};
  sweep.summary = Summarize(sweep.rows, shapes);
  sweep.best = BestUnderSlo(sweep.summary, options.slo_fraction);
  if (options.traces) {
    for (const Setting& st : TracedSettings(settings)) {
      HEADROOM_ASSIGN_OR_RETURN(Trace t, trace(st));
      sweep.traces.push_back(std::move(t));
    }
  }
  return sweep;
}

}  // namespace

core::Result<SimulatedSweep> SweepInference(const model::InferenceModel& model,
                                            const std::vector<Setting>& settings,
                                            const std::vector<InferenceCase>& shapes,
                                            const SweepOptions& options) {
  if (settings.empty() || shapes.empty()) {
    return core::Fail(core::Error::InvalidArgument("a sweep needs a setting and a shape"));
  }
  HEADROOM_ASSIGN_OR_RETURN(auto rows,
                            CharacterizeInference(model, settings, shapes, options.interval));
  return CompleteSweep(std::move(rows), shapes.size(), settings, options, [&](const Setting& st) {
    return TraceInference(model, st, shapes.back(), options.interval);
  });
}

core::Result<SimulatedSweep> SweepTraining(const model::TrainingModel& model,
                                           const std::vector<Setting>& settings, int iterations,
                                           const SweepOptions& options) {
  if (settings.empty()) return core::Fail(core::Error::InvalidArgument("a sweep needs a setting"));
  HEADROOM_ASSIGN_OR_RETURN(auto rows,
                            CharacterizeTraining(model, settings, iterations, options.interval));
  return CompleteSweep(std::move(rows), 1, settings, options, [&](const Setting& st) {
    return TraceTraining(model, st, iterations, options.interval);
  });
}

}  // namespace headroom::sim
