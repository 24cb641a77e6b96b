#include "catalog/mig_plan_file.h"

#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "catalog/mig_catalogs.h"

namespace headroom::catalog {
namespace {

struct Loaded {
  HardwareCatalog hardware = *HardwareCatalog::Embedded();
  MigCatalog mig = *MigCatalog::Embedded();
  MigTrainingCatalog workloads = *MigTrainingCatalog::Embedded();
};

core::Result<MigPlanInput> Parse(const std::string& text) {
  static const Loaded* loaded = new Loaded();
  return ParseMigPlanFile(text, "jobs.yaml", loaded->hardware, loaded->mig, loaded->workloads);
}

std::string ErrorOf(const std::string& text) {
  auto input = Parse(text);
  return input ? "" : input.error().message();
}

TEST(MigTrainingCatalogTest, EmbeddedWorkloadsCoverTheStudy) {
  auto catalog = MigTrainingCatalog::Embedded();
  ASSERT_TRUE(catalog) << catalog.error().message();
  EXPECT_EQ(catalog->reference_gpu(), "h200-141gb-sxm");
  for (const char* name :
       {"resnet50-pretrain", "densenet121-finetune", "inception-v3-pretrain",
        "efficientnet-b0-finetune", "gpt2-124m-pretrain", "gpt2-1.5b-finetune"}) {
    EXPECT_TRUE(catalog->Workload(name)) << name;
  }
  auto missing = catalog->Workload("bert");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("known: resnet50-pretrain"), std::string::npos);
}

TEST(MigTrainingCatalogTest, RejectsBadFiles) {
  auto bad = MigTrainingCatalog::Parse(
      "kind: mig-training\nreference_gpu: h200\nreference_idle_w: 75\nworkloads:\n"
      "  a:\n    model: a\n    kind: image\n    mode: pretrain\n    parameters: 1\n"
      "    trained_parameters: all\n    optimizer: lion\n    flops_per_sample: 1\n"
      "    samples_per_epoch: 1\n    default_batch: 1\n    measured: []\n",
      "w.yaml");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("w.yaml:11"), std::string::npos) << bad.error().message();
  EXPECT_NE(bad.error().message().find("lion"), std::string::npos);
}

TEST(MigPlanFileTest, ParsesJobsSamplesEpochsAndCounts) {
  auto input = Parse(
      "gpu: a100-80gb\npower_limit_w: 300\nobjective: makespan\nmakespan_bound_s: 3600\n"
      "profiles: [1g, 3g, 7g]\njobs:\n"
      "  - {name: a, workload: resnet50-finetune, epochs: 2, batch: 64, deadline_s: 900}\n"
      "  - {workload: gpt2-124m-finetune, samples: 1000, count: 2, priority: 1}\n");
  ASSERT_TRUE(input) << input.error().message();
  EXPECT_EQ(input->model.mig().name, "a100-80gb-sxm");
  EXPECT_DOUBLE_EQ(input->model.power_limit().value(), 300);
  EXPECT_EQ(input->request.objective, mig::Objective::kMakespan);
  EXPECT_EQ(input->request.makespan_bound_s, 3600);
  ASSERT_EQ(input->request.jobs.size(), 3u);
  EXPECT_EQ(input->request.jobs[0].samples, 100000);  // 2 epochs of CIFAR-10
  EXPECT_EQ(input->request.jobs[0].batch, 64);
  EXPECT_EQ(input->request.jobs[0].deadline_s, 900);
  EXPECT_EQ(input->request.jobs[1].name, "gpt2-124m-finetune#1");
  EXPECT_EQ(input->request.jobs[2].name, "gpt2-124m-finetune#2");
  EXPECT_EQ(input->request.jobs[2].priority, 1);
}

TEST(MigPlanFileTest, ErrorsNameTheLineAndField) {
  const std::string head = "gpu: h200\njobs:\n";
  EXPECT_NE(ErrorOf(head + "  - {workload: bert, samples: 1}\n").find("jobs.yaml:3"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + "  - {workload: resnet50-finetune}\n").find("exactly one of samples"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + "  - {workload: resnet50-finetune, samples: 1, batch: 1.5}\n")
                .find("whole number"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + "  - {workload: resnet50-finetune, samples: 1, gpus: 2}\n").find("gpus"),
            std::string::npos);
  EXPECT_NE(ErrorOf("gpu: t4\njobs:\n  - {workload: resnet50-finetune, samples: 1}\n")
                .find("field 'gpu'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("gpu: h200\npower_limit_w: 900\njobs:\n"
                    "  - {workload: resnet50-finetune, samples: 1}\n")
                .find("power_limit_w"),
            std::string::npos);
  EXPECT_NE(ErrorOf("gpu: h200\njobs: []\n").find("no jobs"), std::string::npos);
  EXPECT_NE(ErrorOf(head + "  - {name: x, workload: resnet50-finetune, samples: 1}\n"
                           "  - {name: x, workload: resnet50-finetune, samples: 1}\n")
                .find("appears twice"),
            std::string::npos);
  EXPECT_NE(ErrorOf("gpu: h200\nprofiles: [5g]\njobs:\n"
                    "  - {workload: resnet50-finetune, samples: 1}\n")
                .find("5g"),
            std::string::npos);
}

TEST(MigTrainingCatalogTest, SelectsAllOrTheNamedInOrder) {
  auto catalog = MigTrainingCatalog::Embedded();
  ASSERT_TRUE(catalog) << catalog.error().message();
  auto all = catalog->Select("all");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), catalog->workloads().size());
  auto two = catalog->Select("gpt2-124m-finetune, resnet50-pretrain");
  ASSERT_TRUE(two) << two.error().message();
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ(two->at(0).name, "gpt2-124m-finetune");
  EXPECT_EQ(two->at(1).name, "resnet50-pretrain");
  auto unknown = catalog->Select("resnet50-pretrain,bert");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), core::Code::kNotFound);
}

TEST(MigCatalogsTest, LoadsBesideTheHardwareAndNamesTheLimitError) {
  auto hardware = HardwareCatalog::Embedded();
  ASSERT_TRUE(hardware);
  auto catalogs = MigCatalogs::Load(*hardware);
  ASSERT_TRUE(catalogs) << catalogs.error().message();
  EXPECT_EQ(catalogs->reference.name, catalogs->workloads.reference_gpu());
  EXPECT_TRUE(catalogs->Model("h200", std::nullopt));
  auto low = catalogs->Model("h200", 5.0);
  ASSERT_FALSE(low);
  EXPECT_EQ(low.error().code(), core::Code::kOutOfRange);
  auto fits = catalogs->Fits(catalogs->workloads.workloads());
  ASSERT_TRUE(fits) << fits.error().message();
  EXPECT_EQ(fits->size(), catalogs->workloads.workloads().size());
}

}  // namespace
}  // namespace headroom::catalog
