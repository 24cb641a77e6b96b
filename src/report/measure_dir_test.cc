#include "report/measure_dir.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/testing/fresh_dir.h"

namespace headroom::report {
namespace {

// A measure directory with no samples and no phases, `exit_code` as given (JSON text).
std::string MeasureDirWithExitCode(const std::string& name, const std::string& exit_code) {
  const std::string dir = core::testing::FreshDir(name);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/summary.json")
      << R"({"command": ["true"], "backend": "sim", "exit_code": )" << exit_code
      << R"(, "complete": true, "duration_s": 1.0, "inputs": {"interval": "100ms",
          "version": "0"}, "gpus": [], "total": {"energy_j": 0, "avg_power_w": 0},
          "work": null, "phases": []})";
  std::ofstream(dir + "/series.csv") << "time_s,gpu,power_w\n";
  std::ofstream(dir + "/phases.csv") << "name,start_s,end_s\n";
  return dir;
}

// Issue 44, finding 9: 1e300 went through an undefined cast ("exited with -2147483648").
TEST(MeasureDirTest, AnExitCodeOutsideIntIsAnErrorNamingTheField) {
  auto ok = ReadMeasureDir(MeasureDirWithExitCode("ok", "-9"));
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(ok->exit_code, -9);
  for (const std::string bad : {"1e300", "2147483648", "1.5"}) {
    const std::string dir = MeasureDirWithExitCode("bad", bad);
    auto read = ReadMeasureDir(dir);
    ASSERT_FALSE(read) << bad << " read as " << read->exit_code;
    EXPECT_EQ(read.error().code(), core::Code::kInvalidArgument);
    EXPECT_NE(read.error().message().find(dir + "/summary.json: field 'exit_code' is "),
              std::string::npos)
        << read.error().message();
  }
}

}  // namespace
}  // namespace headroom::report
