// Runs `headroom mig` and checks what a user sees: output, JSON shape and exit codes
// (0 ok, 1 invalid layout, 2 bad input).
#include <array>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "headroom_command.h"

namespace {

using headroom::testing::CommandRun;
using headroom::testing::Contains;
using headroom::testing::Headroom;

TEST(MigCliTest, ProfilesListsEveryProfile) {
  const CommandRun run = Headroom("mig profiles --gpu h200");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(Contains(run.out, "MIG profiles of h200-141gb-sxm")) << run.out;
  for (const char* name :
       {"1g.18gb ", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"}) {
    EXPECT_TRUE(Contains(run.out, name)) << name << "\n" << run.out;
  }
  EXPECT_TRUE(Contains(run.out, "NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1 (0x7)")) << run.out;
}

TEST(MigCliTest, ValidateAcceptsAValidLayout) {
  const CommandRun run = Headroom("mig validate 1g.10gb@6,3g.40gb@0,2g.20gb@4 --gpu a100-80gb-sxm");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(run.out,
            "valid on a100-80gb-sxm: 3g.40gb@0,2g.20gb@4,1g.10gb@6 (7 of 8 memory slices, 6 of 7 "
            "compute slices)\n");
}

TEST(MigCliTest, ValidateRejectsAnInvalidLayoutWithItsReason) {
  const CommandRun run = Headroom("mig validate 4g.40gb@0,2g.20gb@2 --gpu a100-80gb-sxm");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_EQ(run.out,
            "headroom: invalid layout on a100-80gb-sxm: '2g.20gb@2' overlaps '4g.40gb@0' on "
            "memory slices 2-3\n");
}

TEST(MigCliTest, BadInputExitsTwoWithOneError) {
  for (const char* args :
       {"mig validate 3g.40gb --gpu a100-80gb-sxm", "mig validate 3g.40gb@0 --gpu v100",
        "mig profiles --gpu nope", "mig layouts --gpu a100-80gb --profiles 1g,5g",
        "mig layouts --gpu a100-80gb --profiles 1g,1g", "mig validate 3g.40gb@0"}) {
    const CommandRun run = Headroom(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.out;
    EXPECT_EQ(run.out.rfind("headroom: ", 0), 0u) << args << "\n" << run.out;
  }
  EXPECT_TRUE(Contains(Headroom("mig validate 3g.40gb@0,2g@x --gpu a100-80gb").out, "'2g@x'"));
}

TEST(MigCliTest, LayoutsCountsTheBriefsNumbers) {
  const CommandRun classic = Headroom("mig layouts --gpu a100-80gb-sxm");
  ASSERT_EQ(classic.exit_code, 0) << classic.out;
  EXPECT_TRUE(Contains(classic.out, "19 maximal layouts (14 distinct multisets)")) << classic.out;
  const CommandRun wide = Headroom("mig layouts --gpu a100-40gb --profiles 1g,1g.2x,2g,3g,4g,7g");
  ASSERT_EQ(wide.exit_code, 0) << wide.out;
  EXPECT_TRUE(Contains(wide.out, "78 maximal layouts (38 distinct multisets)")) << wide.out;
}

TEST(MigCliTest, LayoutsJsonShape) {
  const CommandRun run = Headroom("mig layouts --gpu h200 --profiles 3g,4g,7g --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["gpu"], "h200-141gb-sxm");
  EXPECT_EQ(j["profiles"], nlohmann::json({"3g.71gb", "4g.71gb", "7g.141gb"}));
  EXPECT_EQ(j["layouts"],
            nlohmann::json({"3g.71gb@0,3g.71gb@4", "4g.71gb@0,3g.71gb@4", "7g.141gb@0"}));
  const auto all = nlohmann::json::parse(Headroom("mig layouts --gpu a100-80gb --json").out);
  EXPECT_EQ(all["layouts"].size(), 19u);
}

}  // namespace
