#include "report/mig_device_report.h"

#include <string>

#include <gtest/gtest.h>

#include "mig/layout.h"

namespace headroom::report {
namespace {

gpu::DeviceInfo DeviceReportInfo(int index, const std::string& name) {
  gpu::DeviceInfo info;
  info.index = index;
  info.name = name;
  info.uuid = "GPU-x";
  return info;
}

gpu::GpuMigView DeviceReportView() {
  gpu::GpuMigView view{.info = DeviceReportInfo(1, "NVIDIA A100-SXM4-80GB"),
                       .type = "a100-80gb-sxm",
                       .mode = gpu::MigModeState{.current = true, .pending = true}};
  gpu::MigGpuInstance three{.id = 2, .profile_id = 9, .start = 4, .size = 4, .sm_count = 42};
  three.memory_bytes = 40ULL << 30;
  three.compute_instances = {{.id = 0, .compute_slices = 2, .sm_count = 28, .uuid = "MIG-a"},
                             {.id = 1, .compute_slices = 1, .sm_count = 14}};
  gpu::MigGpuInstance one{.id = 7, .profile_id = 19, .start = 0, .size = 1, .sm_count = 14};
  view.instances = {three, one};
  view.profile_names = {"3g.40gb", "1g.10gb"};
  view.layout = "3g.40gb@4/2c+1c,1g.10gb@0";
  return view;
}

TEST(MigDeviceReportTest, ShowListsAComputeInstancePerRowAndAGpuInstanceWithoutOne) {
  const std::string text = MigShowText(DeviceReportView(), format::TextStyle());
  EXPECT_TRUE(
      text.starts_with("GPU 1 (NVIDIA A100-SXM4-80GB, a100-80gb-sxm): MIG enabled\n"
                       "layout: 3g.40gb@4/2c+1c,1g.10gb@0\n"))
      << text;
  EXPECT_NE(text.find("4-7"), std::string::npos) << text;
  EXPECT_NE(text.find("40.00"), std::string::npos) << text;
  EXPECT_NE(text.find("MIG-a"), std::string::npos) << text;
  EXPECT_NE(text.find("(no compute instance)"), std::string::npos) << text;
  const auto j = MigShowJson(DeviceReportView());
  EXPECT_EQ(j["instances"][0]["compute_instances"].size(), 2u);
  EXPECT_EQ(j["instances"][1]["profile"], "1g.10gb");
  EXPECT_EQ(j["mig"]["pending"], true);
}

TEST(MigDeviceReportTest, ShowSaysWhyThereIsNoMigAndWhatAResetWouldChange) {
  gpu::GpuMigView none{.info = DeviceReportInfo(0, "sim"), .type = "unknown"};
  none.no_mig_reason = "no MIG here";
  EXPECT_EQ(MigShowText(none, format::TextStyle()), "GPU 0 (sim, unknown): no MIG (no MIG here)\n");
  EXPECT_TRUE(MigShowJson(none)["mig"].is_null());
  EXPECT_EQ(MigShowJson(none)["reason"], "no MIG here");
  gpu::GpuMigView pending = none;
  pending.mode = gpu::MigModeState{.current = false, .pending = true};
  EXPECT_EQ(MigShowText(pending, format::TextStyle()),
            "GPU 0 (sim, unknown): MIG disabled (enabled after the next GPU reset)\n");
  pending.mode = gpu::MigModeState{.current = true, .pending = true};
  EXPECT_EQ(MigShowText(pending, format::TextStyle()),
            "GPU 0 (sim, unknown): MIG enabled\nlayout: (no instances)\n");
}

gpu::MigApplyReport DeviceReportApply() {
  gpu::MigApplyReport r{.before = "7g.80gb@0", .after = "3g.40gb@0"};
  r.plan.steps = {{.kind = mig::ApplyStep::Kind::kDestroyGpuInstance, .gpu_instance_id = 0}};
  return r;
}

TEST(MigDeviceReportTest, ApplyPrintsThePlanAndWhatBecameOfIt) {
  gpu::MigApplyReport r = DeviceReportApply();
  const std::string applied = MigApplyText(r, 0, "3g.40gb@0", /*dry_run=*/false);
  EXPECT_TRUE(applied.starts_with("GPU 0: 7g.80gb@0 -> 3g.40gb@0\nplan (1 steps):\n   1. "))
      << applied;
  EXPECT_TRUE(applied.ends_with("applied: 3g.40gb@0\n")) << applied;
  EXPECT_TRUE(MigApplyText(r, 0, "3g.40gb@0", true).ends_with("dry run: nothing changed\n"));
  gpu::MigApplyReport nothing{.before = "3g.40gb@0", .after = "3g.40gb@0"};
  EXPECT_EQ(MigApplyText(nothing, 2, "3g.40gb@0", false),
            "GPU 2: 3g.40gb@0 -> 3g.40gb@0\nalready in place; nothing to do\n");
  const auto j = MigApplyJson(r, DeviceReportInfo(3, "sim"), "3g.40gb@0", false);
  EXPECT_EQ(j["index"], 3);
  EXPECT_EQ(j["type"], "unknown");
  EXPECT_EQ(j["plan"].size(), 1u);
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_EQ(j["rolled_back"], false);
}

TEST(MigDeviceReportTest, AFailureSaysWhetherTheRollbackRestoredTheLayout) {
  gpu::MigApplyReport r = DeviceReportApply();
  r.error = core::Error::Unavailable("GPU 0: step failed");
  r.after = "7g.80gb@0";
  r.rollback = r.plan.steps;
  EXPECT_EQ(MigApplyFailure(r), "GPU 0: step failed; rolled back to 7g.80gb@0 (1 undo steps)");
  EXPECT_EQ(MigApplyJson(r, {}, "3g.40gb@0", false)["rolled_back"], true);
  EXPECT_EQ(MigApplyText(r, 0, "3g.40gb@0", false).find("applied"), std::string::npos);
  r.rollback_error = core::Error::Unavailable("undo failed");
  r.after = "";
  EXPECT_EQ(MigApplyFailure(r),
            "GPU 0: step failed; ROLLBACK FAILED: undo failed; the GPU is left at: (none)");
  EXPECT_EQ(MigApplyJson(r, {}, "3g.40gb@0", false)["rollback_error"], "undo failed");
}

}  // namespace
}  // namespace headroom::report
