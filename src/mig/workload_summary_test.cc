#include "mig/workload_summary.h"

#include <vector>

#include <gtest/gtest.h>

#include "mig/mig_test_support.h"

namespace headroom::mig {
namespace {

TEST(SummarizeWorkloadsTest, RatesOnTheWholeGpuAndTheSmallestInstanceWhereItFits) {
  const testing::Catalogs& c = testing::Embedded();
  const SliceModel model = testing::Model("a100-40gb");
  const std::vector<MeasuredWorkload>& workloads = c.workloads.workloads();
  std::vector<WorkloadFit> fits;
  for (const MeasuredWorkload& w : workloads) {
    fits.push_back(*FitWorkload(w, testing::Reference(), c.workloads.reference_idle_w()));
  }
  const WorkloadsOnGpu summary = SummarizeWorkloads(model, workloads, fits);
  EXPECT_EQ(summary.gpu, model.mig().name);
  EXPECT_EQ(summary.smallest_instance, model.mig().profiles.front().name);
  ASSERT_EQ(summary.workloads.size(), workloads.size());
  const GiProfile& smallest = model.mig().profiles.front();
  const Slice small = InstanceSlice(smallest, smallest.starts.front());
  int too_big = 0;
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const WorkloadSummary& row = summary.workloads[i];
    EXPECT_EQ(row.workload, workloads[i].name);
    EXPECT_EQ(row.batch, workloads[i].default_batch);
    EXPECT_DOUBLE_EQ(row.footprint_gib, model.FootprintGib(fits[i], row.batch));
    EXPECT_GT(row.whole_gpu_samples_per_s, 0) << row.workload;
    EXPECT_EQ(row.smallest_instance_samples_per_s.has_value(),
              model.Fits(fits[i], row.batch, small))
        << row.workload;
    if (row.smallest_instance_samples_per_s) {
      EXPECT_LT(*row.smallest_instance_samples_per_s, row.whole_gpu_samples_per_s) << row.workload;
    } else {
      ++too_big;
    }
  }
  // The catalog holds billion-parameter pre-training that no 5 GB instance holds.
  EXPECT_GT(too_big, 0);
}

}  // namespace
}  // namespace headroom::mig
