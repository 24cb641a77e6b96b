// The request stream a scenario's workload gives a row: its traces by service or one trace with
// priorities by the scenario's rule, replayed scaled to the per-server rates, synthesized into
// longer ones, or replayed as recorded (scenario.h's WorkloadConfig). Thread-compatible.
#ifndef HEADROOM_SIM_WORKLOAD_H_
#define HEADROOM_SIM_WORKLOAD_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sim/request_source.h"
#include "sim/scenario.h"
#include "sim/trace_synth.h"

namespace headroom::sim {

// The request stream for `servers` servers of which `hp_servers` are HP. `trace`: empty or
// "scenario" for the scenario's own workload; "synth-week" for a synthesized week of its traces;
// "azure" for the two real one-hour traces by service; another name or a path for that one trace
// with priorities by the scenario's rule (by-trace keeps the file's own, otherwise by fraction).
// The sum of the class rates x servers sets the load in every case but workload.replay
// as-recorded, where one trace is replayed as it is (kInvalidArgument naming the key or the
// --trace choice when the workload is not one trace: by service, synthesized, synth-week).
[[nodiscard]] core::Result<std::unique_ptr<RequestSource>> MakeWorkload(const Scenario& scenario,
                                                                        std::string_view trace,
                                                                        int servers, int hp_servers,
                                                                        std::uint64_t seed);
// kInvalidArgument when the scenario's workload is replayed as recorded: `what` (a capacity plan,
// a calibration) scales the load with the servers, which a log replayed as recorded never is.
[[nodiscard]] core::Status RequireScaledWorkload(const Scenario& scenario, std::string_view what);
// The synthesized streams MakeWorkload's request stream merges, one per class (or one, with
// priorities by fraction), each as MakeWorkload makes it: what a power verdict reads of a week's
// rate and bursts (sim/power_verdict.h). Empty when the workload is not synthesized.
[[nodiscard]] core::Result<std::vector<std::unique_ptr<TraceSynth>>> SynthStreams(
    const Scenario& scenario, std::string_view trace, int servers, int hp_servers,
    std::uint64_t seed);
// Seconds of arrivals the workload spans, for progress; 0 when unknown.
double ExpectedDuration(const Scenario& scenario, std::string_view trace);
// Whether the workload is synthesized, so that another seed gives another week (the real traces
// are the same whatever the seed).
bool SynthesizedWorkload(const Scenario& scenario, std::string_view trace);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_WORKLOAD_H_
