// The small synthesized row of tests/testdata: ten servers, one synthesized hour as each "week",
// so that a plan or a power verdict takes seconds. Test-only.
#ifndef HEADROOM_SIM_TESTING_SMALL_SYNTH_ROW_H_
#define HEADROOM_SIM_TESTING_SMALL_SYNTH_ROW_H_

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "sim/scenario.h"

namespace headroom::sim::testing {

inline ResolvedScenario SmallSynthRow() {
  auto s = LoadAndResolveBuiltIn(std::string(std::getenv("HEADROOM_SOURCE_DIR")) +
                                 "/tests/testdata/small-synth-row.yaml");
  EXPECT_TRUE(s) << s.error().message();
  return *s;
}

}  // namespace headroom::sim::testing

#endif  // HEADROOM_SIM_TESTING_SMALL_SYNTH_ROW_H_
