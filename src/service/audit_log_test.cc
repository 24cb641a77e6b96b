#include "service/audit_log.h"

#include <gtest/gtest.h>

#include "core/files.h"

namespace headroom::service {
namespace {

TEST(AuditLogTest, AppendsOneLinePerRecordStartingWithTheCalendarTime) {
  const std::string path = ::testing::TempDir() + "headroom_audit_log_test.jsonl";
  std::remove(path.c_str());
  core::FakeClock clock(core::TimePoint(std::chrono::milliseconds(1'700'000'000'250)));
  {
    auto log = AuditLog::Open(path, &clock);
    ASSERT_TRUE(log) << log.error().message();
    EXPECT_TRUE((*log)->Write({{"step", 1}, {"state", "normal"}}));
    clock.Advance(std::chrono::seconds(2));
    EXPECT_TRUE((*log)->Write({{"step", 2}}));
  }
  auto reopened = AuditLog::Open(path, &clock);  // appends, never truncates
  ASSERT_TRUE(reopened);
  EXPECT_TRUE((*reopened)->Write({{"step", 3}}));
  auto text = core::ReadFile(path);
  ASSERT_TRUE(text) << text.error().message();
  EXPECT_EQ(*text,
            "{\"time\":\"2023-11-14T22:13:20Z\",\"step\":1,\"state\":\"normal\"}\n"
            "{\"time\":\"2023-11-14T22:13:22Z\",\"step\":2}\n"
            "{\"time\":\"2023-11-14T22:13:22Z\",\"step\":3}\n");
}

TEST(AuditLogTest, AFullDiskFailsTheWriteWithoutStoppingTheNext) {
  core::FakeClock clock;
  auto log = AuditLog::Open("/dev/full", &clock);
  ASSERT_TRUE(log) << log.error().message();
  EXPECT_FALSE((*log)->Write({{"step", 1}}));
  EXPECT_FALSE((*log)->Write({{"step", 2}}));
}

TEST(AuditLogTest, AnUnwritablePathIsAnErrorNamingIt) {
  core::FakeClock clock;
  auto log = AuditLog::Open("/nonexistent-dir/audit.jsonl", &clock);
  ASSERT_FALSE(log);
  EXPECT_NE(log.error().message().find("/nonexistent-dir/audit.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace headroom::service
