// FreshDir(name): an empty (removed) path under gtest's temporary directory, named after the
// running test suite and `name`, for the tests that write result directories. Test-only.
#ifndef HEADROOM_CORE_TESTING_FRESH_DIR_H_
#define HEADROOM_CORE_TESTING_FRESH_DIR_H_

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace headroom::core::testing {

inline std::string FreshDir(const std::string& name) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir =
      ::testing::TempDir() + (test ? test->test_suite_name() : "headroom") + "_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace headroom::core::testing

#endif  // HEADROOM_CORE_TESTING_FRESH_DIR_H_
