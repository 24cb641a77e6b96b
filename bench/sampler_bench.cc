// Cost of the telemetry sampler through the real NVML backend, against the fake NVML library:
// one sampling round of 8 GPUs (a snapshot of every reading plus a drain of the driver's power
// sample ring). The fake's clock is manual, so the figure is our code plus the fake's bookkeeping,
// without its GPU simulation. Target (issue 3): under 1% of a core for 8 GPUs at 10 Hz, i.e. a
// round under 1 ms.
#include <cstdlib>

#include <benchmark/benchmark.h>

#include "core/time.h"
#include "gpu/nvml/nvml_device.h"
#include "telemetry/sampler.h"

namespace headroom {
namespace {

void BM_SamplerRound8GpusFakeNvml(benchmark::State& state) {
  ::setenv("HEADROOM_NVML_LIBRARY", HEADROOM_FAKE_NVML, 1);
  ::setenv("HEADROOM_FAKE_NVML_COUNT", "8", 1);
  ::setenv("HEADROOM_FAKE_NVML_CLOCK", "manual", 1);
  ::setenv("HEADROOM_FAKE_NVML_LOAD", "inference", 1);
  auto devices = gpu::nvml::OpenNvmlDevices({});
  if (!devices) {
    state.SkipWithError(devices.error().message().c_str());
    return;
  }
  std::vector<gpu::Device*> raw;
  for (auto& d : *devices) raw.push_back(d.get());
  core::SystemClock clock;
  auto sampler = telemetry::Sampler::Create(raw, &clock, {});
  for (auto _ : state) {
    benchmark::DoNotOptimize((*sampler)->SampleOnce());
  }
  state.counters["per_gpu_us"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 8,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SamplerRound8GpusFakeNvml)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace headroom
