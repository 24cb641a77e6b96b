// Shared fixtures of the MIG model tests: the embedded catalogs and slice models built from
// them. Test-only.
#ifndef HEADROOM_MIG_MIG_TEST_SUPPORT_H_
#define HEADROOM_MIG_MIG_TEST_SUPPORT_H_

#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/mig_catalog.h"
#include "catalog/mig_plan_file.h"
#include "catalog/mig_training_catalog.h"
#include "mig/planner.h"
#include "mig/slice_model.h"

namespace headroom::mig::testing {

struct Catalogs {
  catalog::HardwareCatalog hardware;
  catalog::MigCatalog mig;
  catalog::MigTrainingCatalog workloads;
};

inline const Catalogs& Embedded() {
  static const Catalogs* catalogs = [] {
    auto hardware = catalog::HardwareCatalog::Embedded();
    auto mig = catalog::MigCatalog::Embedded();
    auto workloads = catalog::MigTrainingCatalog::Embedded();
    EXPECT_TRUE(hardware && mig && workloads);
    return new Catalogs{*hardware, *mig, *workloads};
  }();
  return *catalogs;
}

inline SliceModel Model(const std::string& gpu, std::optional<double> limit_w = std::nullopt) {
  const Catalogs& c = Embedded();
  auto model = catalog::MakeSliceModel(gpu, limit_w, c.hardware, c.mig, c.workloads);
  EXPECT_TRUE(model) << model.error().message();
  return *model;
}

inline const model::GpuSpec& Reference() {
  const Catalogs& c = Embedded();
  return **c.hardware.Gpu(c.workloads.reference_gpu());
}

inline PlanJob Job(const std::string& workload, double samples, const std::string& name = "") {
  const Catalogs& c = Embedded();
  PlanJob job;
  job.workload = *c.workloads.Workload(workload);
  job.name = name.empty() ? workload : name;
  job.fit = *FitWorkload(job.workload, Reference(), c.workloads.reference_idle_w());
  job.batch = job.workload.default_batch;
  job.samples = samples;
  return job;
}

}  // namespace headroom::mig::testing

#endif  // HEADROOM_MIG_MIG_TEST_SUPPORT_H_
