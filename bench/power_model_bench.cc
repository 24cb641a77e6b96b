// Costs of the GPU power model and the simulated GPU, which later sit in hot loops (the row
// simulator evaluates the model per iteration; samplers read simulated devices).
#include <benchmark/benchmark.h>

#include "catalog/hardware_catalog.h"
#include "core/time.h"
#include "gpu/sim/sim_device.h"
#include "gpu/sim/sim_gpu.h"
#include "gpu/snapshot.h"
#include "model/gpu_power_model.h"

namespace headroom {
namespace {

const model::GpuSpec& A100() {
  static const auto catalog = catalog::HardwareCatalog::Embedded();
  return **catalog->Gpu("a100-80gb-sxm");
}

void BM_PhasePower(benchmark::State& state) {
  const model::GpuPowerModel model(A100());
  const model::Phase phase = model::DecodeLikePhase();
  double f = 1410;
  for (auto _ : state) {
    benchmark::DoNotOptimize(model.PhasePower(phase, core::Megahertz(f)));
    f = f > 300 ? f - 15 : 1410;
  }
}
BENCHMARK(BM_PhasePower);

void BM_MaxClockUnder(benchmark::State& state) {
  const model::GpuPowerModel model(A100());
  const model::Phase phase = model::PrefillLikePhase();
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        model.MaxClockUnder(core::Watts(300), phase, 1.0, core::Megahertz(1410)));
  }
}
BENCHMARK(BM_MaxClockUnder);

// One simulated second of one GPU (1000 steps of 1 ms) under the inference load.
void BM_SimGpuOneSecond(benchmark::State& state) {
  gpu::sim::SimGpu gpu(A100(), *gpu::sim::LoadScript::Parse("inference"));
  gpu.set_power_limit(core::Watts(300));
  for (auto _ : state) {
    gpu.Advance(std::chrono::seconds(1));
    benchmark::DoNotOptimize(gpu.true_energy());
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_SimGpuOneSecond);

// A full telemetry snapshot of one simulated GPU, 100 ms after the previous one.
void BM_SnapshotSimDevice(benchmark::State& state) {
  core::FakeClock clock;
  gpu::sim::SimOptions options;
  options.script = *gpu::sim::LoadScript::Parse("inference");
  gpu::sim::SimDevice device(0, A100(), &clock, options);
  for (auto _ : state) {
    clock.Advance(std::chrono::milliseconds(100));
    benchmark::DoNotOptimize(gpu::TakeSnapshot(device, clock.Now()));
  }
}
BENCHMARK(BM_SnapshotSimDevice);

}  // namespace
}  // namespace headroom
