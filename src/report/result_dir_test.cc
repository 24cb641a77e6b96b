#include "report/result_dir.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

namespace headroom::report {
namespace {

std::string FreshDir(const std::string& name) {
  const std::string dir =
      ::testing::TempDir() + "result-dir-" + std::to_string(getpid()) + "-" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(ResultKindsTest, EveryKindOnceWithItsOwnMarkerAndAReport) {
  std::set<std::string> markers;
  std::set<int> kinds;
  for (const ResultKindInfo& info : ResultKinds()) {
    EXPECT_TRUE(markers.insert(info.marker_file).second) << info.marker_file;
    EXPECT_TRUE(kinds.insert(static_cast<int>(info.kind)).second) << info.command;
    EXPECT_NE(info.write_report, nullptr) << info.command;
    EXPECT_EQ(InfoOf(info.kind).marker_file, info.marker_file);
  }
  EXPECT_EQ(kinds.size(), 7u) << "study, plan, mig plan, mig characterize, simulate, "
                                 "characterize, measure";
}

TEST(ResultKindsTest, EachMarkerIsRecognisedAndMigCharacterizeBeforeCharacterize) {
  for (const ResultKindInfo& info : ResultKinds()) {
    const std::string dir = FreshDir(info.marker_file);
    std::ofstream(dir + "/" + info.marker_file) << "";
    EXPECT_EQ(DetectResultKind(dir), info.kind) << info.marker_file;
  }
  // mig characterize writes a results.csv too: its own marker decides.
  const std::string both = FreshDir("both");
  std::ofstream(both + "/" + InfoOf(ResultKind::kCharacterize).marker_file) << "";
  std::ofstream(both + "/" + InfoOf(ResultKind::kMigCharacterize).marker_file) << "";
  EXPECT_EQ(DetectResultKind(both), ResultKind::kMigCharacterize);
  EXPECT_EQ(DetectResultKind(FreshDir("none")), std::nullopt);
}

TEST(ResultKindsTest, ADirectoryWithoutAMarkerNamesThemAll) {
  const std::string dir = FreshDir("empty");
  auto written = WriteResultReport(dir);
  ASSERT_FALSE(written);
  for (const ResultKindInfo& info : ResultKinds()) {
    EXPECT_NE(written.error().message().find(info.marker_file), std::string::npos)
        << written.error().message();
  }
  auto missing = WriteResultReport(dir + "/nothing");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("no such directory"), std::string::npos);
}

}  // namespace
}  // namespace headroom::report
