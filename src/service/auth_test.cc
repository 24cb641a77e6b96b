#include "service/auth.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace headroom::service {
namespace {

TEST(AuthTest, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("secret", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secreT", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("Secret", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secret1", "secret"));  // longer, same prefix
  EXPECT_FALSE(ConstantTimeEquals("secre", "secret"));    // shorter, same prefix
  EXPECT_FALSE(ConstantTimeEquals("", "secret"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_FALSE(ConstantTimeEquals(std::string_view("secret\0x", 8), "secret"));
}

TEST(AuthTest, BearerHeader) {
  EXPECT_TRUE(BearerAuthorized("Bearer tok", "tok"));
  EXPECT_FALSE(BearerAuthorized("Bearer tok2", "tok"));
  EXPECT_FALSE(BearerAuthorized("bearer tok", "tok"));
  EXPECT_FALSE(BearerAuthorized("tok", "tok"));
  EXPECT_FALSE(BearerAuthorized("", "tok"));
  EXPECT_FALSE(BearerAuthorized("Bearer ", ""));  // an empty token never authorizes
}

TEST(AuthTest, TokenFileIsTrimmedAndMustNotBeEmpty) {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("headroom-auth-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  const std::string good = dir / "good", empty = dir / "empty";
  std::ofstream(good) << "  abc123\n";
  std::ofstream(empty) << " \n\t";
  EXPECT_EQ(*ReadTokenFile(good), "abc123");
  auto e = ReadTokenFile(empty);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message().find("empty"), std::string::npos);
  EXPECT_FALSE(ReadTokenFile((dir / "missing").string()));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace headroom::service
