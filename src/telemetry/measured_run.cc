#include "telemetry/measured_run.h"

#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "core/parse.h"
#include "telemetry/child_process.h"
#include "telemetry/marker_channel.h"

namespace headroom::telemetry {
namespace {

constexpr core::Duration kPollInterval = std::chrono::milliseconds(20);

core::Result<double> WorkFromLine(const std::regex& pattern, const std::string& line) {
  std::smatch m;
  if (!std::regex_search(line, m, pattern)) return 0.0;
  const std::string number = m.size() > 1 ? m[1].str() : m[0].str();
  auto value = core::ParseDouble(number);
  if (!value) return core::Fail(value.error().WithContext("--work-regex match"));
  return *value;
}

}  // namespace

core::Result<MeasuredRunResult> RunMeasured(const std::vector<gpu::Device*>& devices,
                                            core::Clock* clock, const MeasuredRunOptions& options) {
  SamplerOptions sampler_options{.interval = options.interval, .sink = options.sink};
  auto created = Sampler::Create(devices, clock, sampler_options);
  if (!created) return core::Fail(created.error().WithContext("--interval"));
  MeasuredRunResult result;
  result.sampler = std::move(*created);
  Sampler& sampler = *result.sampler;

  HEADROOM_ASSIGN_OR_RETURN(
      auto markers,
      MarkerChannel::Create({.phase =
                                 [&sampler, &options](const std::string& p) {
                                   sampler.MarkPhase(p);
                                   if (options.on_phase) options.on_phase(p);
                                 },
                             .work = [&sampler](double units) { sampler.AddWork(units); },
                             .warning = options.on_warning}));
  std::function<void(const std::string&)> on_line;
  if (options.work_pattern) {
    on_line = [&sampler, &options](const std::string& line) {
      auto units = WorkFromLine(*options.work_pattern, line);
      if (units && *units > 0) sampler.AddWork(*units);
    };
  }
  const core::TimePoint start = clock->Now();
  sampler.Start();
  auto child =
      ChildProcess::Start(options.command, {{"HEADROOM_MARKERS", markers->path()}}, on_line);
  if (!child) {
    sampler.Stop();
    return core::Fail(child.error());
  }
  std::optional<int> exit_code;
  bool warned = false;
  while (!(exit_code = (*child)->Poll())) {
    if (!warned && sampler.error()) {
      if (options.on_warning) {
        options.on_warning(sampler.error()->message() +
                           "; the measurement stopped (data so far kept), waiting for the "
                           "command to finish");
      }
      warned = true;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  markers->Close();
  sampler.Stop();
  result.exit_code = *exit_code;
  result.duration_s = core::ToSeconds(clock->Now() - start);
  return result;
}

}  // namespace headroom::telemetry
