#include "gpu/nvml/nvml_library.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace headroom::gpu::nvml {
namespace {

TEST(NvmlLibraryTest, MissingLibraryIsOneClearUnavailableError) {
  ::setenv("HEADROOM_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  auto lib = NvmlLibrary::Open();
  ::unsetenv("HEADROOM_NVML_LIBRARY");
  ASSERT_FALSE(lib);
  EXPECT_EQ(lib.error().code(), core::Code::kUnavailable);
  EXPECT_NE(lib.error().message().find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
  EXPECT_NE(lib.error().message().find("--backend sim"), std::string::npos);
  EXPECT_EQ(lib.error().message().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace headroom::gpu::nvml
