// The MIG plan input file (`headroom mig plan --jobs FILE`).
#include "catalog/mig_catalog.h"
#include "catalog/mig_plan_file.h"
#include "catalog/mig_training_catalog.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace headroom;
  static const catalog::MigCatalog mig = *catalog::MigCatalog::Embedded();
  static const catalog::MigTrainingCatalog workloads = *catalog::MigTrainingCatalog::Embedded();
  (void)catalog::ParseMigPlanFile(fuzz::Text(data, size), "plan.yaml", fuzz::Hardware(), mig,
                                  workloads);
  return 0;
}
