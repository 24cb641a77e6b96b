#include "service/http_server.h"

#include <gtest/gtest.h>

namespace headroom::service {
namespace {

TEST(HttpServerTest, StatusForEachErrorCode) {
  EXPECT_EQ(HttpStatusFor(core::Code::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(core::Code::kOutOfRange), 422);
  EXPECT_EQ(HttpStatusFor(core::Code::kNotFound), 422);
  EXPECT_EQ(HttpStatusFor(core::Code::kFailedPrecondition), 409);
  EXPECT_EQ(HttpStatusFor(core::Code::kPermissionDenied), 500);
}

// What the agent answers, the controller reads back as the same code (409 used to come back as
// kInternal).
TEST(HttpServerTest, StatusesReadBackAsTheirCodes) {
  for (core::Code code : {core::Code::kInvalidArgument, core::Code::kOutOfRange,
                          core::Code::kFailedPrecondition, core::Code::kUnavailable}) {
    EXPECT_EQ(CodeForHttpStatus(HttpStatusFor(code)), code) << core::CodeName(code);
  }
  EXPECT_EQ(CodeForHttpStatus(401), core::Code::kPermissionDenied);
  EXPECT_EQ(CodeForHttpStatus(500), core::Code::kInternal);
  EXPECT_EQ(CodeForHttpStatus(418), core::Code::kInternal);
}

TEST(HttpServerTest, ListenAddress) {
  auto a = ParseListenAddress("127.0.0.1:9400");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9400);
  EXPECT_EQ(ParseListenAddress("0.0.0.0:0")->port, 0);
  for (const char* bad : {"9400", ":9400", "127.0.0.1:", "127.0.0.1:70000", "h:x"}) {
    EXPECT_FALSE(ParseListenAddress(bad)) << bad;
  }
}

}  // namespace
}  // namespace headroom::service
