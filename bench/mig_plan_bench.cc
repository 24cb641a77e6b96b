// Cost of `headroom mig plan`: a whole plan (every layout multiset, assignment search, baselines)
// for job sets of growing size on the H200 (15 candidate partitions) and the A100 with the
// 2-memory-slice 1g too (a wider search).
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "catalog/hardware_catalog.h"
#include "catalog/mig_catalog.h"
#include "catalog/mig_plan_file.h"
#include "catalog/mig_training_catalog.h"
#include "mig/planner.h"

namespace headroom {
namespace {

struct Setup {
  mig::SliceModel model;
  mig::PlanRequest request;
};

Setup MakeSetup(const std::string& gpu, int jobs, std::vector<std::string> profiles) {
  const auto hardware = catalog::HardwareCatalog::Embedded();
  const auto mig_catalog = catalog::MigCatalog::Embedded();
  const auto workloads = catalog::MigTrainingCatalog::Embedded();
  auto model = catalog::MakeSliceModel(gpu, std::nullopt, *hardware, *mig_catalog, *workloads);
  const model::GpuSpec& reference = **hardware->Gpu(workloads->reference_gpu());
  Setup setup{.model = *model, .request = {}};
  setup.request.profile_classes = std::move(profiles);
  // Small and medium jobs that fit every slice of both GPUs, cycled.
  const std::vector<std::string> names = {"resnet50-finetune",     "efficientnet-b0-pretrain",
                                          "gpt2-124m-finetune",    "densenet121-finetune",
                                          "mobilenet-v2-pretrain", "inception-v3-finetune"};
  for (int i = 0; i < jobs; ++i) {
    mig::PlanJob job;
    job.workload = *workloads->Workload(names[i % names.size()]);
    job.name = job.workload.name + std::to_string(i);
    job.fit = *mig::FitWorkload(job.workload, reference, workloads->reference_idle_w());
    job.batch = job.workload.default_batch;
    job.samples = job.workload.measured.back().samples_per_s * 600 * (1 + i % 3);
    setup.request.jobs.push_back(std::move(job));
  }
  return setup;
}

void BM_MigPlanH200(benchmark::State& state) {
  const Setup setup =
      MakeSetup("h200", static_cast<int>(state.range(0)), {"1g", "2g", "3g", "4g", "7g"});
  for (auto _ : state) benchmark::DoNotOptimize(mig::Plan(setup.model, setup.request));
}
BENCHMARK(BM_MigPlanH200)->Arg(2)->Arg(4)->Arg(8)->Arg(12)->Unit(benchmark::kMillisecond);

void BM_MigPlanA100WithHalfSlices(benchmark::State& state) {
  const Setup setup = MakeSetup("a100-80gb", static_cast<int>(state.range(0)),
                                {"1g", "1g.2x", "2g", "3g", "4g", "7g"});
  for (auto _ : state) benchmark::DoNotOptimize(mig::Plan(setup.model, setup.request));
}
BENCHMARK(BM_MigPlanA100WithHalfSlices)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace headroom
