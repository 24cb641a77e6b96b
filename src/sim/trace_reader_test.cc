#include "sim/trace_reader.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

namespace headroom::sim {
namespace {

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(ParseAzureTimestampTest, Both2023And2024Forms) {
  using std::chrono::nanoseconds;
  const auto a = *ParseAzureTimestamp("2023-11-16 18:17:03.9799600");
  const auto b = *ParseAzureTimestamp("2023-11-16 18:17:04.0319600");
  EXPECT_EQ(b - a, nanoseconds(52'000'000));
  EXPECT_EQ(*ParseAzureTimestamp("1970-01-02 00:00:00"), std::chrono::hours(24));
  EXPECT_EQ(*ParseAzureTimestamp("2024-05-12 00:00:00.001163+00:00") -
                *ParseAzureTimestamp("2024-05-12 00:00:00"),
            nanoseconds(1'163'000));
  for (const char* bad : {"2023-13-01 00:00:00", "2023-11-16", "yesterday", "2023-11-16 25:00:00",
                          "2023-11-16 18:17:03.", "2023-11-16 18:17:03+05:00",
                          // int64 ns since 1970 end in 2262: 2263 wrapped and read back as 1678.
                          "2263-01-01 00:00:00", "9999-12-31 23:59:59", "1677-09-21 00:00:00"}) {
    EXPECT_FALSE(ParseAzureTimestamp(bad)) << bad;
  }
  EXPECT_TRUE(ParseAzureTimestamp("2200-12-31 23:59:59.9999999"));
  // Every number of fractional digits: the first nine are the nanoseconds, later ones dropped.
  const auto whole = *ParseAzureTimestamp("2023-11-16 18:17:03");
  const std::string digits = "987654321987";
  for (std::size_t n = 1; n <= digits.size(); ++n) {
    const std::string fraction = digits.substr(0, n);
    long long ns = std::stoll(fraction.substr(0, std::min<std::size_t>(n, 9)));
    for (std::size_t k = n; k < 9; ++k) ns *= 10;
    EXPECT_EQ(*ParseAzureTimestamp("2023-11-16 18:17:03." + fraction) - whole, nanoseconds(ns))
        << fraction;
  }
  EXPECT_EQ(*ParseAzureTimestamp("2023-11-16 18:17:03.000000001+00:00") - whole, nanoseconds(1));
}

TEST(TraceReaderTest, ReadsTheShippedAzureTracesWithCrlfAndNoFinalNewline) {
  const std::string dir = std::string(std::getenv("HEADROOM_SOURCE_DIR")) + "/data/traces/";
  for (const auto& [file, rows] : {std::pair{"AzureLLMInferenceTrace_code.csv", 8819},
                                   std::pair{"AzureLLMInferenceTrace_conv.csv", 19366}}) {
    auto reader = TraceReader::Open(dir + file);
    ASSERT_TRUE(reader) << reader.error().message();
    int n = 0;
    double last = 0;
    while (true) {
      auto next = (*reader)->Next();
      ASSERT_TRUE(next) << next.error().message();
      if (!*next) break;
      ++n;
      last = (*next)->arrival_s;
      EXPECT_GT((*next)->prompt_tokens, 0);
    }
    EXPECT_EQ(n, rows) << file;
    EXPECT_GT(last, 3400);  // about an hour (traces/README.md: 3,435.9 s and 3,501.7 s)
    EXPECT_LT(last, 3600);
  }
}

TEST(TraceReaderTest, TextNotCopiedReadsAsItsFile) {
  // CRLF endings and no final newline, as the shipped Azure traces; the last line's error names
  // the line, as from a file.
  const std::string text =
      "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:03.9799600,4808,10\r\n\r\n"
      "2023-11-16 18:17:04.0319600,3180,8\r\n2023-11-16 18:17:04,12,many";
  const std::string path = Write("view.csv", text);
  auto file = TraceReader::Open(path);
  auto view = TraceReader::FromView(path, text);
  ASSERT_TRUE(file);
  ASSERT_TRUE(view) << view.error().message();
  for (int k = 0; k < 2; ++k) {
    auto a = (*file)->Next();
    auto b = (*view)->Next();
    ASSERT_TRUE(a);
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ((*a)->arrival_s, (*b)->arrival_s);
    EXPECT_EQ((*a)->prompt_tokens, (*b)->prompt_tokens);
    EXPECT_EQ((*a)->output_tokens, (*b)->output_tokens);
  }
  EXPECT_EQ((*view)->start_time(), (*file)->start_time());
  auto last = (*view)->Next();
  ASSERT_FALSE(last);
  EXPECT_EQ(last.error().message(), (*file)->Next().error().message());
  EXPECT_NE(last.error().message().find("view.csv:5: GeneratedTokens 'many'"), std::string::npos)
      << last.error().message();
}

TEST(TraceReaderTest, GenericCsvWithPriority) {
  auto reader =
      TraceReader::Open(Write("generic.csv",
                              "arrival_s,prompt_tokens,output_tokens,priority\n0.5,100,10,hp\n"
                              "1.0,200,20,LP\n2.0,300,30,\n"));
  ASSERT_TRUE(reader);
  auto a = *(*reader)->Next();
  EXPECT_EQ(a->priority, Priority::kHigh);
  EXPECT_DOUBLE_EQ(a->arrival_s, 0.5);
  EXPECT_EQ((*(*reader)->Next())->priority, Priority::kLow);
  EXPECT_EQ((*(*reader)->Next())->priority, Priority::kUnspecified);
  EXPECT_FALSE((*reader)->Next()->has_value());
}

// A log's cached-prefix column, with and without priorities; a file without it records none.
TEST(TraceReaderTest, GenericCsvWithCachedTokens) {
  auto both = TraceReader::Open(
      Write("cached_priority.csv",
            "arrival_s,prompt_tokens,output_tokens,cached_tokens,priority\n0.5,100,10,60,hp\n"
            "1.0,200,20,,lp\n2.0,300,30,300,\n3.0,400,40,0\n"));
  ASSERT_TRUE(both) << both.error().message();
  auto a = *(*both)->Next();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->cached_tokens, 60);
  EXPECT_EQ(a->priority, Priority::kHigh);
  auto b = *(*both)->Next();
  EXPECT_FALSE(b->cached_tokens.has_value());  // an empty field: not recorded
  EXPECT_EQ(b->priority, Priority::kLow);
  auto c = *(*both)->Next();
  EXPECT_EQ(c->cached_tokens, 300);  // the whole prompt (the simulator still computes its last)
  EXPECT_EQ(c->priority, Priority::kUnspecified);
  auto d = *(*both)->Next();
  EXPECT_EQ(d->cached_tokens, 0);
  EXPECT_EQ(d->prompt_tokens, 400);
  EXPECT_FALSE((*both)->Next()->has_value());

  auto cached_only = TraceReader::Open(Write(
      "cached_only.csv", "arrival_s,prompt_tokens,output_tokens,cached_tokens\n0,4000,20,3000\n"));
  ASSERT_TRUE(cached_only) << cached_only.error().message();
  auto e = *(*cached_only)->Next();
  EXPECT_EQ(e->cached_tokens, 3000);
  EXPECT_EQ(e->output_tokens, 20);

  auto old =
      TraceReader::Open(Write("no_cached.csv", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n"));
  ASSERT_TRUE(old);
  EXPECT_FALSE((*(*old)->Next())->cached_tokens.has_value());
}

// Each bad cached_tokens value, and a row short of the column, is one error naming file:line.
TEST(TraceReaderTest, BadCachedTokensNameFileAndLine) {
  const std::string header = "arrival_s,prompt_tokens,output_tokens,cached_tokens,priority\n";
  struct Case {
    std::string row;
    std::string says;
  };
  for (const Case& c : {Case{"0,100,10,-5,hp", "bad_cached.csv:3: cached_tokens '-5' is not"},
                        Case{"0,100,10,12.5,hp", "bad_cached.csv:3: cached_tokens '12.5' is not"},
                        Case{"0,100,10,many", "bad_cached.csv:3: cached_tokens 'many' is not"},
                        Case{"0,100,10,101,lp",
                             "bad_cached.csv:3: cached_tokens 101 is more than the prompt's 100"},
                        Case{"0,100,10", "bad_cached.csv:3: expected 4 or 5 fields, found 3"}}) {
    auto reader = TraceReader::Open(Write("bad_cached.csv", header + "0,100,10,50,hp\n" + c.row));
    ASSERT_TRUE(reader) << reader.error().message();
    ASSERT_TRUE((*reader)->Next());
    auto bad = (*reader)->Next();
    ASSERT_FALSE(bad) << c.row;
    EXPECT_NE(bad.error().message().find(c.says), std::string::npos) << bad.error().message();
  }
  // The columns' order is fixed: a priority before the cached tokens is no known header.
  auto swapped = TraceReader::Open(
      Write("swapped.csv", "arrival_s,prompt_tokens,output_tokens,priority,cached_tokens\n"));
  ASSERT_FALSE(swapped);
  EXPECT_NE(swapped.error().message().find("swapped.csv:1: unknown trace header"),
            std::string::npos)
      << swapped.error().message();
}

// Issue 44, finding 8: a FIFO given as a trace is refused at once, not waited on for ever.
TEST(TraceReaderTest, AFifoIsRefusedAtOnce) {
  const std::string fifo = (std::filesystem::temp_directory_path() /
                            ("headroom-trace-fifo-" + std::to_string(::getpid())))
                               .string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto reader = TraceReader::Open(fifo);
  std::filesystem::remove(fifo);
  ASSERT_FALSE(reader);
  EXPECT_NE(reader.error().message().find("not a regular file (a FIFO)"), std::string::npos)
      << reader.error().message();
}

TEST(TraceReaderTest, ErrorsNameFileAndLine) {
  auto unsorted = TraceReader::Open(
      Write("unsorted.csv", "arrival_s,prompt_tokens,output_tokens\n2,1,1\n1,1,1\n"));
  ASSERT_TRUE(unsorted);
  ASSERT_TRUE((*unsorted)->Next());
  auto back = (*unsorted)->Next();
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().message().find("unsorted.csv:3: arrival goes back in time"),
            std::string::npos);

  auto azure = TraceReader::Open(
      Write("bad_azure.csv",
            "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:03.9799600,4808,10\r\n"
            "2023-11-16 18:17:04.0319600,many,8"));
  ASSERT_TRUE(azure);
  ASSERT_TRUE((*azure)->Next());
  auto bad = (*azure)->Next();
  ASSERT_FALSE(bad);
  EXPECT_NE(
      bad.error().message().find("bad_azure.csv:3: ContextTokens 'many' is not a token count"),
      std::string::npos)
      << bad.error().message();

  // Token counts with spaces round them, or signs, as the generic parse reads them.
  auto spaced = TraceReader::Open(
      Write("spaced.csv",
            "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03, 0012 ,7\n"
            "2023-11-16 18:17:04,5,+8\n2023-11-16 18:17:05,123456789,1\n"));
  ASSERT_TRUE(spaced);
  auto first = (*spaced)->Next();
  ASSERT_TRUE(first && *first) << first.error().message();
  EXPECT_EQ((*first)->prompt_tokens, 12);
  EXPECT_EQ((*first)->output_tokens, 7);
  auto signed_count = (*spaced)->Next();
  ASSERT_FALSE(signed_count);
  EXPECT_NE(signed_count.error().message().find("spaced.csv:3: GeneratedTokens '+8'"),
            std::string::npos)
      << signed_count.error().message();
  auto too_many = (*spaced)->Next();
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.error().message().find("ContextTokens '123456789' is not a token count"),
            std::string::npos)
      << too_many.error().message();

  auto header = TraceReader::Open(Write("header.csv", "time,in,out\n"));
  ASSERT_FALSE(header);
  EXPECT_NE(header.error().message().find("header.csv:1: unknown trace header"), std::string::npos);
  EXPECT_EQ(TraceReader::Open("/nonexistent/trace.csv").error().code(), core::Code::kNotFound);
}

}  // namespace
}  // namespace headroom::sim
