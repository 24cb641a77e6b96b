#include "gpu/sim/load_script.h"

#include <gtest/gtest.h>

namespace headroom::gpu::sim {
namespace {

using std::chrono::milliseconds;

TEST(LoadScriptTest, PresetsAndCustomScripts) {
  auto inference = LoadScript::Parse("inference");
  ASSERT_TRUE(inference);
  ASSERT_EQ(inference->segments().size(), 2u);
  EXPECT_EQ(inference->segments()[0].kind, "prefill");
  EXPECT_EQ(inference->period(), milliseconds(2000));

  auto custom = LoadScript::Parse("prefill:300ms, decode*0.5:700ms, idle:1s");
  ASSERT_TRUE(custom) << custom.error().message();
  EXPECT_DOUBLE_EQ(custom->segments()[1].busy, 0.5);
  EXPECT_DOUBLE_EQ(custom->segments()[2].busy, 0.0);
  EXPECT_EQ(custom->SegmentIndexAt(milliseconds(0)), 0u);
  EXPECT_EQ(custom->SegmentIndexAt(milliseconds(299)), 0u);
  EXPECT_EQ(custom->SegmentIndexAt(milliseconds(300)), 1u);
  EXPECT_EQ(custom->SegmentIndexAt(milliseconds(1500)), 2u);
  EXPECT_EQ(custom->SegmentIndexAt(milliseconds(2100)), 0u);  // loops

  auto constant = LoadScript::Parse("decode*0.3");
  ASSERT_TRUE(constant);
  EXPECT_DOUBLE_EQ(constant->segments()[0].busy, 0.3);
}

TEST(LoadScriptTest, ErrorsNameTheScriptAndSegment) {
  // The last two: periods that overflow int64 ns (2^64 ns wrapped to 0: SIGFPE in the agent).
  for (const char* bad : {"train", "prefill,decode", "prefill*2:1s", "prefill:0s", "decode:10",
                          "decode*x:1s", "idle:9.2e18ns,idle:9.2e18ns",
                          "idle:4611686018427387904ns,decode:4611686018427387904ns,prefill:1s"}) {
    auto script = LoadScript::Parse(bad);
    ASSERT_FALSE(script) << bad;
    EXPECT_NE(script.error().message().find(std::string("load script '") + bad + "'"),
              std::string::npos)
        << script.error().message();
  }
}

}  // namespace
}  // namespace headroom::gpu::sim
