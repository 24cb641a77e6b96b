#include "core/subprocess.h"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

namespace headroom::core {
namespace {

using std::chrono::milliseconds;

std::string ReadAll(Subprocess& child) {
  std::string out;
  while (child.ReadOutput(std::chrono::seconds(5), &out)) {
  }
  return out;
}

TEST(SubprocessTest, CapturesOutputWithTheExtraEnvironmentAndTheExitCode) {
  auto child = Subprocess::Start(
      {"sh", "-c", "echo \"$HEADROOM_X\"; exit 3"},
      {.extra_env = {{"HEADROOM_X", "hello"}}, .output = SpawnOptions::Output::kCapture});
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_EQ(ReadAll(*child), "hello\n");
  EXPECT_EQ(child->Wait(), 3);
  EXPECT_EQ(child->Poll(), 3) << "the code is kept once reaped";
}

TEST(SubprocessTest, MissingProgramIsNotFound) {
  auto child = Subprocess::Start({"headroom-no-such-program"});
  ASSERT_FALSE(child);
  EXPECT_EQ(child.error().code(), Code::kNotFound);
  EXPECT_NE(child.error().message().find("headroom-no-such-program"), std::string::npos);
  EXPECT_EQ(Subprocess::Start({}).error().code(), Code::kInvalidArgument);
}

TEST(SubprocessTest, PollDoesNotBlockAndASignalGivesOneHundredTwentyEightPlusIt) {
  auto child = Subprocess::Start({"sleep", "30"});
  ASSERT_TRUE(child);
  EXPECT_FALSE(child->Poll());
  child->Signal(SIGTERM);
  EXPECT_EQ(child->Wait(), 128 + SIGTERM);
}

TEST(SubprocessTest, OutputToAFileTakesStdoutAndStderr) {
  const std::string path = ::testing::TempDir() + "subprocess-" + std::to_string(getpid());
  auto child = Subprocess::Start({"sh", "-c", "echo out; echo err >&2"},
                                 {.output = SpawnOptions::Output::kFile, .output_file = path});
  ASSERT_TRUE(child);
  EXPECT_EQ(child->Wait(), 0);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "out\nerr\n");
  std::filesystem::remove(path);
}

TEST(RunCapturedTest, ReturnsWhatTheCommandPrinted) {
  SystemClock clock;
  auto run = RunCaptured({"sh", "-c", "printf 1234"}, std::chrono::seconds(5), 4096, clock);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->output, "1234");
  EXPECT_EQ(run->exit_code, 0);
  EXPECT_FALSE(run->timed_out);
  EXPECT_FALSE(run->truncated);
}

TEST(RunCapturedTest, KillsACommandPastItsTimeout) {
  SystemClock clock;
  const auto start = std::chrono::steady_clock::now();
  auto run =
      RunCaptured({"sh", "-c", "echo partial; exec sleep 30"}, milliseconds(200), 4096, clock);
  ASSERT_TRUE(run);
  EXPECT_TRUE(run->timed_out);
  EXPECT_EQ(run->exit_code, 128 + SIGKILL);
  EXPECT_EQ(run->output, "partial\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(RunCapturedTest, StopsReadingARunawayAndKillsIt) {
  SystemClock clock;
  auto run = RunCaptured({"yes"}, std::chrono::seconds(10), 1000, clock);
  ASSERT_TRUE(run);
  EXPECT_TRUE(run->truncated);
  EXPECT_FALSE(run->timed_out);
  EXPECT_EQ(run->output.size(), 1000u);
}

TEST(SignalForwarderTest, PassesSigtermOnToEveryChildAndRestoresTheHandler) {
  struct sigaction before {};
  sigaction(SIGTERM, nullptr, &before);
  {
    SignalForwarder forwarder;
    auto a = Subprocess::Start({"sleep", "30"});
    auto b = Subprocess::Start({"sleep", "30"});
    ASSERT_TRUE(a && b);
    forwarder.Add(a->pid());
    forwarder.Add(b->pid());
    ::kill(getpid(), SIGTERM);  // to ourselves: forwarded, and we keep running
    EXPECT_EQ(a->Wait(), 128 + SIGTERM);
    EXPECT_EQ(b->Wait(), 128 + SIGTERM);
    EXPECT_EQ(SignalForwarder::LastSignal(), SIGTERM);
    forwarder.Remove(a->pid());
    forwarder.Remove(b->pid());
  }
  struct sigaction after {};
  sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

}  // namespace
}  // namespace headroom::core
