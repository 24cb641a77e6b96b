#include "sim/recorded_requests.h"

#include <gtest/gtest.h>

#include "sim/testing/drain.h"

namespace headroom::sim {
namespace {

// More than one chunk of requests, with every priority and varied sizes.
std::vector<TraceRequest> ManyRequests(std::size_t n) {
  std::vector<TraceRequest> out;
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back({.arrival_s = 0.25 * static_cast<double>(i) + 1e-9 * static_cast<double>(i % 7),
                   .prompt_tokens = static_cast<int>(1 + i % 9000),
                   .output_tokens = static_cast<int>(i % 5000),
                   .priority = static_cast<Priority>(i % 3)});
  }
  return out;
}

void ExpectSame(const std::vector<TraceRequest>& a, const std::vector<TraceRequest>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].arrival_s, b[i].arrival_s) << i;
    EXPECT_EQ(a[i].prompt_tokens, b[i].prompt_tokens) << i;
    EXPECT_EQ(a[i].output_tokens, b[i].output_tokens) << i;
    EXPECT_EQ(a[i].priority, b[i].priority) << i;
    EXPECT_EQ(a[i].cached_tokens, b[i].cached_tokens) << i;
  }
}

TEST(RecordedRequestsTest, ARecordingReplaysTheStreamItRecorded) {
  const std::vector<TraceRequest> requests = ManyRequests(150'000);
  VectorSource source(requests);
  RecordingSource recording(source);
  ExpectSame(testing::Drain(recording), requests);  // passed through unchanged
  ASSERT_TRUE(recording.complete());
  const std::shared_ptr<const RecordedRequests> recorded = recording.Take();
  ASSERT_NE(recorded, nullptr);
  EXPECT_EQ(recorded->size(), requests.size());
  EXPECT_LE(recorded->bytes(), 16 * (requests.size() + 65'536));
  // Twice, as two runs of a plan would, each from the start.
  for (int run = 0; run < 2; ++run) {
    ReplaySource replay(recorded);
    ExpectSame(testing::Drain(replay), requests);
  }
}

// Recorded cached tokens replay as recorded, and requests without them (before the first that
// has some, in the same chunk and in later ones) replay as not recorded, not as 0.
TEST(RecordedRequestsTest, RecordedCachedTokensReplayAndOthersStayNotRecorded) {
  std::vector<TraceRequest> requests = ManyRequests(150'000);
  for (std::size_t i = 70'000; i < requests.size(); i += 3) {
    requests[i].cached_tokens = static_cast<int>(i % 2 == 0 ? 0 : requests[i].prompt_tokens / 2);
  }
  VectorSource source(requests);
  RecordingSource recording(source);
  ExpectSame(testing::Drain(recording), requests);
  ASSERT_TRUE(recording.complete());
  const std::shared_ptr<const RecordedRequests> recorded = recording.Take();
  EXPECT_LE(recorded->bytes(), 20 * (requests.size() + 65'536));
  ReplaySource replay(recorded);
  ExpectSame(testing::Drain(replay), requests);
  EXPECT_FALSE(recorded->at(0).cached_tokens.has_value());
  EXPECT_EQ(recorded->at(70'000).cached_tokens, 0);
}

TEST(RecordedRequestsTest, AStreamNotReadToItsEndIsNoRecording) {
  VectorSource source(ManyRequests(10));
  RecordingSource recording(source);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(recording.Next());
  EXPECT_FALSE(recording.complete());  // the end not yet seen: a run stopped early
  ASSERT_TRUE(recording.Next());
  EXPECT_TRUE(recording.complete());
}

TEST(RecordedRequestsTest, ARequestTooLargeToPackEndsTheRecordingNotTheStream) {
  std::vector<TraceRequest> requests = ManyRequests(3);
  requests[1].output_tokens = 1 << 30;
  VectorSource source(requests);
  RecordingSource recording(source);
  ExpectSame(testing::Drain(recording), requests);
  EXPECT_FALSE(recording.complete());
}

}  // namespace
}  // namespace headroom::sim
