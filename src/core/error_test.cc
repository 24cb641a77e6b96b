#include "core/error.h"

#include <gtest/gtest.h>

#include "core/check.h"
#include "core/result.h"

namespace headroom::core {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Fail(Error::InvalidArgument("odd"));
  return x / 2;
}

Result<int> Quarter(int x) {
  HEADROOM_ASSIGN_OR_RETURN(int half, Half(x));
  HEADROOM_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

Status CheckEven(int x) {
  HEADROOM_RETURN_IF_ERROR(Half(x));
  return Ok();
}

TEST(ErrorTest, FactoriesSetCodes) {
  EXPECT_EQ(Error::PermissionDenied("x").code(), Code::kPermissionDenied);
  EXPECT_EQ(Error::Unimplemented("x").code(), Code::kUnimplemented);
  EXPECT_EQ(CodeName(Code::kUnimplemented), "not supported");
}

TEST(ErrorTest, WithContextPrefixesAndKeepsCode) {
  const Error e = Error::NotFound("no such GPU").WithContext("gpu 3");
  EXPECT_EQ(e.message(), "gpu 3: no such GPU");
  EXPECT_EQ(e.code(), Code::kNotFound);
}

TEST(ResultMacrosTest, PropagateFirstError) {
  EXPECT_EQ(*Quarter(8), 2);
  ASSERT_FALSE(Quarter(6));  // 6 -> 3 -> odd
  EXPECT_EQ(Quarter(6).error().message(), "odd");
  EXPECT_TRUE(CheckEven(4));
  EXPECT_FALSE(CheckEven(5));
}

TEST(CheckDeathTest, AbortsWithConditionAndContext) {
  EXPECT_DEATH({ HEADROOM_CHECK(1 + 1 == 3) << "arithmetic " << 42; },
               "check failed: 1 \\+ 1 == 3 arithmetic 42");
}

}  // namespace
}  // namespace headroom::core
