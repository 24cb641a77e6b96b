// Every request a source gives, for the tests of the request sources and the scenarios that
// build them. Test-only.
#ifndef HEADROOM_SIM_TESTING_DRAIN_H_
#define HEADROOM_SIM_TESTING_DRAIN_H_

#include <vector>

#include <gtest/gtest.h>

#include "sim/request_source.h"

namespace headroom::sim::testing {

// Reads `source` to its end; an error fails the test and ends the list there.
inline std::vector<TraceRequest> Drain(RequestSource& source) {
  std::vector<TraceRequest> out;
  while (true) {
    auto next = source.Next();
    EXPECT_TRUE(next) << next.error().message();
    if (!next || !*next) return out;
    out.push_back(**next);
  }
}

}  // namespace headroom::sim::testing

#endif  // HEADROOM_SIM_TESTING_DRAIN_H_
