#include "sim/request_source.h"

#include <gtest/gtest.h>

#include "sim/named_traces.h"
#include "sim/testing/drain.h"
#include "sim/trace_reader.h"

namespace headroom::sim {
namespace {

TraceRequest At(double t, int prompt = 1, int output = 1, Priority p = Priority::kUnspecified) {
  return {.arrival_s = t, .prompt_tokens = prompt, .output_tokens = output, .priority = p};
}

std::unique_ptr<RequestSource> Conv() {
  auto source = OpenTrace("azure-conv");
  EXPECT_TRUE(source) << source.error().message();
  return std::move(*source);
}

TEST(VectorSourceTest, GivesItsRequestsThenEnds) {
  VectorSource source({At(0), At(1.5)});
  EXPECT_DOUBLE_EQ((*source.Next())->arrival_s, 0);
  EXPECT_DOUBLE_EQ((*source.Next())->arrival_s, 1.5);
  EXPECT_FALSE(source.Next()->has_value());
  EXPECT_FALSE(source.Next()->has_value());
  EXPECT_FALSE(source.start_time());
}

TEST(TraceReaderTest, ReadsTextAndKnowsItsStartTime) {
  auto reader = TraceReader::FromText(
      "inline.csv",
      "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:03.9799600,4808,10\r\n"
      "2023-11-16 18:17:04.0319600,3180,8");
  ASSERT_TRUE(reader) << reader.error().message();
  RequestSource& source = **reader;
  EXPECT_FALSE(source.start_time());  // not before the first request
  const auto all = testing::Drain(source);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_NEAR(all[1].arrival_s, 0.052, 1e-12);
  EXPECT_EQ(all[1].prompt_tokens, 3180);
  EXPECT_EQ(source.start_time(), *ParseAzureTimestamp("2023-11-16 18:17:03.9799600"));

  auto bad = TraceReader::FromText("inline.csv", "time,tokens\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("inline.csv:1: unknown trace header"), std::string::npos);
}

TEST(OpenTraceTest, NamedTracesAreEmbeddedAndFilesStillWork) {
  EXPECT_EQ(testing::Drain(*Conv()).size(), 19366u);  // traces/README.md
  auto code = OpenTrace("Azure-Code");
  ASSERT_TRUE(code);
  EXPECT_EQ(testing::Drain(**code).size(), 8819u);
  const std::string path = std::string(std::getenv("HEADROOM_SOURCE_DIR")) +
                           "/data/traces/AzureLLMInferenceTrace_code.csv";
  auto file = OpenTrace(path);
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(testing::Drain(**file).size(), 8819u);

  auto unknown = OpenTrace("azure-chat");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), core::Code::kNotFound);
  EXPECT_NE(unknown.error().message().find("azure-conv, azure-code"), std::string::npos)
      << unknown.error().message();
}

TEST(OpenTraceTest, ANamedTraceParsedOnceReplaysExactlyWhatItsFileReadsEveryTime) {
  const std::string path = std::string(std::getenv("HEADROOM_SOURCE_DIR")) +
                           "/data/traces/AzureLLMInferenceTrace_conv.csv";
  auto file = TraceReader::Open(path);
  ASSERT_TRUE(file) << file.error().message();
  const std::vector<TraceRequest> parsed = testing::Drain(**file);
  for (int open = 0; open < 2; ++open) {
    const std::unique_ptr<RequestSource> named = Conv();
    const std::vector<TraceRequest> replayed = testing::Drain(*named);
    ASSERT_EQ(replayed.size(), parsed.size()) << "open " << open;
    for (size_t i = 0; i < parsed.size(); ++i) {
      ASSERT_EQ(replayed[i].arrival_s, parsed[i].arrival_s) << "request " << i;
      ASSERT_EQ(replayed[i].prompt_tokens, parsed[i].prompt_tokens) << "request " << i;
      ASSERT_EQ(replayed[i].output_tokens, parsed[i].output_tokens) << "request " << i;
      ASSERT_EQ(replayed[i].priority, parsed[i].priority) << "request " << i;
    }
    EXPECT_EQ(named->start_time(), (*file)->start_time()) << "open " << open;
  }
}

TEST(ScaledSourceTest, TwoAndAHalfTimesTheLoadInOrder) {
  const auto original = testing::Drain(*Conv());
  auto scaled = ScaledSource::Create(Conv(), 2.5, /*seed=*/7);
  ASSERT_TRUE(scaled);
  const auto out = testing::Drain(**scaled);
  // 2 copies each plus a third for half of them: sd of the count is 0.5 sqrt(19366) = 70.
  EXPECT_NEAR(static_cast<double>(out.size()), 2.5 * original.size(), 350);
  for (size_t i = 1; i < out.size(); ++i) {
    ASSERT_LE(out[i - 1].arrival_s, out[i].arrival_s) << i;
  }
  EXPECT_NEAR(out.back().arrival_s, original.back().arrival_s, 1.0);
}

TEST(ScaledSourceTest, FactorOneIsTheTraceAndSeedsRepeat) {
  const std::vector<TraceRequest> in = {At(0, 1), At(0.1, 2), At(0.1, 3), At(5, 4)};
  auto same = ScaledSource::Create(std::make_unique<VectorSource>(in), 1.0, 1);
  ASSERT_TRUE(same);
  const auto out = testing::Drain(**same);
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].arrival_s, in[i].arrival_s);
    EXPECT_EQ(out[i].prompt_tokens, in[i].prompt_tokens);
  }
  auto run = [&](std::uint64_t seed) {
    auto s = ScaledSource::Create(std::make_unique<VectorSource>(in), 3.7, seed);
    std::vector<double> times;
    for (const auto& r : testing::Drain(**s)) times.push_back(r.arrival_s);
    return times;
  };
  EXPECT_EQ(run(3), run(3));
  EXPECT_NE(run(3), run(4));
  // Copies land within the jitter (1 s) after their original.
  for (double t : run(5)) EXPECT_TRUE(t <= 1.1 || (t >= 5 && t <= 6)) << t;
}

TEST(ScaledSourceTest, FractionThinsAndBadFactorsFail) {
  std::vector<TraceRequest> in;
  for (int i = 0; i < 10'000; ++i) in.push_back(At(i * 0.01));
  auto half = ScaledSource::Create(std::make_unique<VectorSource>(in), 0.5, 1);
  ASSERT_TRUE(half);
  EXPECT_NEAR(static_cast<double>(testing::Drain(**half).size()), 5'000, 250);
  for (double bad : {0.0, -1.0, std::nan("")}) {
    auto s = ScaledSource::Create(std::make_unique<VectorSource>(in), bad, 1);
    ASSERT_FALSE(s) << bad;
    EXPECT_EQ(s.error().code(), core::Code::kInvalidArgument);
  }
}

TEST(MergedSourceTest, InterleavesByTimeAndTagsPriorities) {
  std::vector<MergedSource::Input> inputs;
  inputs.push_back(
      {std::make_unique<VectorSource>(std::vector{At(0, 1), At(2, 1), At(3, 1)}), Priority::kHigh});
  inputs.push_back({std::make_unique<VectorSource>(
                        std::vector{At(1, 2), At(2, 2), At(9, 2, 2, Priority::kHigh)}),
                    Priority::kLow});
  inputs.push_back(
      {std::make_unique<VectorSource>(std::vector{At(2.5, 3, 3, Priority::kLow)}), std::nullopt});
  MergedSource merged(std::move(inputs));
  const auto out = testing::Drain(merged);
  ASSERT_EQ(out.size(), 7u);
  const std::vector<std::pair<double, int>> expected = {{0, 1},   {1, 2}, {2, 1}, {2, 2},
                                                        {2.5, 3}, {3, 1}, {9, 2}};
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].arrival_s, expected[i].first) << i;
    EXPECT_EQ(out[i].prompt_tokens, expected[i].second) << i;  // which input, ties: first input
    const Priority want = expected[i].second == 1 ? Priority::kHigh : Priority::kLow;
    EXPECT_EQ(out[i].priority, want) << i;
  }
}

TEST(MergedSourceTest, RealTracesStayOrdered) {
  std::vector<MergedSource::Input> inputs;
  inputs.push_back({Conv(), Priority::kHigh});
  inputs.push_back({std::move(*OpenTrace("azure-code")), Priority::kLow});
  MergedSource merged(std::move(inputs));
  const auto out = testing::Drain(merged);
  ASSERT_EQ(out.size(), 19366u + 8819u);
  size_t high = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (i > 0) {
      ASSERT_LE(out[i - 1].arrival_s, out[i].arrival_s) << i;
    }
    high += out[i].priority == Priority::kHigh;
  }
  EXPECT_EQ(high, 19366u);
}

}  // namespace
}  // namespace headroom::sim
