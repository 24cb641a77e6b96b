// The terminal experience of the real binary: --quiet, colour (--color, NO_COLOR, CI, a
// terminal or a pipe) and the generated bash completion, sourced in a real bash.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "headroom_command.h"

namespace {

using headroom::testing::CommandRun;
using headroom::testing::Contains;
using headroom::testing::Headroom;
using headroom::testing::Lines;
using headroom::testing::RunShell;

// Runs `command` through sh: its exit code and output (stdout and stderr together).
CommandRun Shell(const std::string& command) { return RunShell(command + " 2>&1"); }

// Runs headroom with stdout and stderr on a pseudo-terminal (util-linux `script`), CI and
// NO_COLOR unset unless `env` sets them: what a user at a terminal sees.
CommandRun HeadroomOnATerminal(const std::string& args, const std::string& env = "") {
  const std::string inner = fmt::format("{} {}", HEADROOM_BINARY, args);
  return Shell(
      fmt::format("env -u CI -u NO_COLOR {} timeout 60 script -qec '{}' /dev/null", env, inner));
}

bool HasEscape(const std::string& text) { return Contains(text, "\x1b["); }

// `text` without ANSI escape sequences (ESC '[' ... final byte), as a terminal would show it.
std::string Strip(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && (text[i] < '@' || text[i] > '~')) ++i;
      continue;
    }
    out += text[i];
  }
  return out;
}

// A path of its own under the test temporary directory: ctest runs each case as a process of its
// own, in parallel, so the name carries the process id.
std::string TempDir(const std::string& name) {
  const std::string dir = fmt::format("{}{}-{}", ::testing::TempDir(), getpid(), name);
  std::filesystem::remove_all(dir);
  return dir;
}

// --- --quiet ------------------------------------------------------------------------------

// The fastest row simulation: 4 servers on the real 1-hour traces.
const std::string kSimulate =
    fmt::format("simulate --config {} --servers 4 --policy polca", SMALL_ROW_SCENARIO);

TEST(TerminalTest, QuietKeepsTheResultAndDropsTheNotes) {
  const std::string dir = TempDir("headroom_terminal_quiet");
  const CommandRun normal = Headroom(kSimulate + " --out " + dir);
  const CommandRun quiet = Headroom(kSimulate + " --out " + dir + " --quiet");
  ASSERT_EQ(normal.exit_code, 0) << normal.out;
  ASSERT_EQ(quiet.exit_code, 0) << quiet.out;
  EXPECT_TRUE(Contains(normal.out, "wrote " + dir)) << normal.out;
  EXPECT_FALSE(Contains(quiet.out, "wrote")) << quiet.out;
  // The result itself, the same with and without --quiet.
  EXPECT_TRUE(Contains(quiet.out, "TTFT P50")) << quiet.out;
  EXPECT_EQ(quiet.out, normal.out.substr(0, normal.out.find("\nwrote ")));
  EXPECT_TRUE(std::filesystem::exists(dir + "/summary.json"));
  std::filesystem::remove_all(dir);
}

TEST(TerminalTest, QuietStillPrintsErrors) {
  // -q before the subcommand and after it (the global flags fall through).
  for (const std::string args : {"-q gpus --sim-gpu v100", "gpus --sim-gpu v100 --quiet"}) {
    const CommandRun run = Headroom(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.out;
    EXPECT_EQ(run.out.rfind("headroom: ", 0), 0u) << run.out;
    EXPECT_TRUE(Contains(run.out, "unknown GPU type 'v100'")) << run.out;
  }
}

TEST(TerminalTest, QuietWithVerboseIsAUsageError) {
  for (const std::string args : {"-q -v gpus", "--verbose --quiet gpus", "gpus -q -v"}) {
    const CommandRun run = Headroom(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.out;
    EXPECT_EQ(run.out.rfind("headroom: ", 0), 0u) << run.out;
    EXPECT_TRUE(Contains(run.out, "--quiet excludes --verbose") ||
                Contains(run.out, "--verbose excludes --quiet"))
        << run.out;
    EXPECT_FALSE(Contains(run.out, "GPU")) << run.out;  // nothing ran
  }
}

TEST(TerminalTest, ProgressBarOnATerminalUnlessQuiet) {
  const CommandRun normal = HeadroomOnATerminal(kSimulate);
  const CommandRun quiet = HeadroomOnATerminal(kSimulate + " -q");
  ASSERT_EQ(normal.exit_code, 0) << normal.out;
  ASSERT_EQ(quiet.exit_code, 0) << quiet.out;
  EXPECT_TRUE(Contains(normal.out, "simulating [")) << normal.out;
  EXPECT_FALSE(Contains(quiet.out, "simulating [")) << quiet.out;
  EXPECT_TRUE(Contains(Strip(quiet.out), "TTFT P50")) << quiet.out;
  // Piped (as every other test runs it): no bar either.
  EXPECT_FALSE(Contains(Headroom(kSimulate).out, "simulating ["));
}

// --- colour -------------------------------------------------------------------------------

TEST(TerminalTest, ColorAlwaysPaintsAndStillAligns) {
  const std::string gpus = "gpus --sim-count 3";
  const CommandRun always = Headroom(gpus + " --color always");
  const CommandRun never = Headroom(gpus + " --color never");
  ASSERT_EQ(always.exit_code, 0) << always.out;
  ASSERT_EQ(never.exit_code, 0) << never.out;
  EXPECT_TRUE(Contains(always.out, "\x1b[1mGPU\x1b[0m")) << always.out;  // bold header
  EXPECT_FALSE(HasEscape(never.out)) << never.out;
  // The same columns, coloured or not.
  EXPECT_EQ(Strip(always.out), never.out);
}

TEST(TerminalTest, ColouredPlanTableAlignsAndMarksTheChosenPolicy) {
  const std::string plan =
      // A looser LP bound than the file's, so that polca fits the 4 servers and is chosen.
      fmt::format("plan --config {} --policies none,polca --threads 2 --slo lp_p50_e2e_pct=20",
                  SMALL_ROW_SCENARIO);
  const CommandRun always = Headroom(plan + " --color always");
  const CommandRun never = Headroom(plan + " --color never");
  ASSERT_EQ(always.exit_code, 0) << always.out;
  ASSERT_EQ(never.exit_code, 0) << never.out;
  EXPECT_TRUE(Contains(always.out, "\x1b[32m")) << always.out;  // the chosen row, green
  EXPECT_FALSE(HasEscape(never.out)) << never.out;
  EXPECT_EQ(Strip(always.out), never.out);
  // Every row of the table ends at the same column as its header.
  const auto lines = Lines(never.out);
  auto header = std::find_if(lines.begin(), lines.end(),
                             [](const std::string& l) { return l.rfind("POLICY", 0) == 0; });
  ASSERT_NE(header, lines.end()) << never.out;
  const size_t servers_end = header->find("SERVERS") + std::string("SERVERS").size();
  for (auto row = header + 1; row != lines.end() && !row->empty(); ++row) {
    ASSERT_GE(row->size(), servers_end) << *row;
    EXPECT_NE((*row)[servers_end - 1], ' ') << "SERVERS not right-aligned: " << *row;
  }
}

TEST(TerminalTest, NoColorWhenPipedOrWithNoColor) {
  EXPECT_FALSE(HasEscape(Headroom("gpus --sim-count 2").out));  // auto, piped
  EXPECT_FALSE(HasEscape(Headroom("gpus --sim-count 2 --color auto", "NO_COLOR=1").out));
  // A flag on the command line overrides NO_COLOR (https://no-color.org).
  EXPECT_TRUE(HasEscape(Headroom("gpus --sim-count 2 --color always", "NO_COLOR=1").out));
}

TEST(TerminalTest, AutoColourOnATerminalUnlessNoColorOrCi) {
  const CommandRun tty = HeadroomOnATerminal("gpus --sim-count 2");
  ASSERT_EQ(tty.exit_code, 0) << tty.out;
  EXPECT_TRUE(Contains(tty.out, "\x1b[1mGPU")) << tty.out;
  EXPECT_FALSE(HasEscape(HeadroomOnATerminal("gpus --sim-count 2", "NO_COLOR=1").out));
  EXPECT_FALSE(HasEscape(HeadroomOnATerminal("gpus --sim-count 2", "CI=true").out));
  EXPECT_FALSE(HasEscape(HeadroomOnATerminal("gpus --sim-count 2 --color never").out));
  // NO_COLOR set but empty does not count.
  EXPECT_TRUE(HasEscape(HeadroomOnATerminal("gpus --sim-count 2", "NO_COLOR=").out));
}

TEST(TerminalTest, ErrorPrefixIsRedOnlyWithColour) {
  const CommandRun red = Headroom("--color always gpus --sim-gpu v100");
  EXPECT_EQ(red.exit_code, 2);
  EXPECT_EQ(red.out.rfind("\x1b[31mheadroom:\x1b[0m unknown GPU type 'v100'", 0), 0u) << red.out;
  const CommandRun plain = Headroom("gpus --sim-gpu v100");
  EXPECT_EQ(plain.out.rfind("headroom: unknown GPU type 'v100'", 0), 0u) << plain.out;
}

TEST(TerminalTest, BadColorIsAUsageError) {
  const CommandRun run = Headroom("--color sometimes gpus");
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_TRUE(Contains(run.out, "sometimes")) << run.out;
}

// --- bash completion ----------------------------------------------------------------------

class CompletionTest : public ::testing::Test {
 protected:
  // Generated once for the suite. A failure here must fail every test (gtest would only skip
  // them if the suite's set-up asserted), hence the check in SetUp.
  static void SetUpTestSuite() {
    script_ = new std::string(TempDir("headroom_completion.bash"));
    generated_ =
        new CommandRun(Shell(fmt::format("{} completion bash > {}", HEADROOM_BINARY, *script_)));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove(*script_);
    delete script_;
    script_ = nullptr;
    delete generated_;
    generated_ = nullptr;
  }
  void SetUp() override {
    ASSERT_EQ(generated_->exit_code, 0) << "headroom completion bash: " << generated_->out;
  }

  // COMPREPLY after the completion function ran on `line`, the cursor at its end (a line ending
  // in a space completes a new, empty word), in a real bash.
  static std::vector<std::string> Complete(const std::string& line) {
    std::vector<std::string> words;
    std::istringstream in(line);
    for (std::string w; in >> w;) words.push_back(w);
    if (line.back() == ' ') words.emplace_back();
    std::string array;
    for (const std::string& w : words) array += fmt::format(" '{}'", w);
    const std::string program = fmt::format(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={}\nCOMP_LINE='{}'\nCOMP_POINT=${{#COMP_LINE}}\n"
        "_headroom\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        *script_, array, words.size() - 1, line);
    const std::string file = TempDir("headroom_complete.sh");
    std::ofstream(file) << program;
    const CommandRun run = Shell("bash --norc --noprofile " + file);
    std::filesystem::remove(file);
    EXPECT_EQ(run.exit_code, 0) << line << "\n" << run.out;
    std::vector<std::string> reply;
    for (const std::string& l : Lines(run.out)) {
      if (!l.empty()) reply.push_back(l);
    }
    return reply;
  }

  static std::string* script_;
  static CommandRun* generated_;
};

std::string* CompletionTest::script_ = nullptr;
CommandRun* CompletionTest::generated_ = nullptr;

using Words = std::vector<std::string>;

TEST_F(CompletionTest, ScriptIsValidBash) {
  const CommandRun run = Shell("bash -n " + *script_);
  EXPECT_EQ(run.exit_code, 0) << run.out;
  const CommandRun bad = Headroom("completion zsh");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
}

TEST_F(CompletionTest, Subcommands) {
  EXPECT_EQ(Complete("headroom mi"), Words{"mig"});
  const Words top = Complete("headroom ");
  for (const char* command : {"gpus", "simulate", "plan", "mig", "completion"}) {
    EXPECT_NE(std::find(top.begin(), top.end(), command), top.end()) << command;
  }
  const Words mig = Complete("headroom mig ");
  EXPECT_NE(std::find(mig.begin(), mig.end(), "plan"), mig.end());
  EXPECT_EQ(Complete("headroom completion "), Words{"bash"});
}

TEST_F(CompletionTest, OptionsOfTheCommandAtTheCursor) {
  EXPECT_EQ(Complete("headroom simulate --pol"), Words{"--policy"});
  EXPECT_EQ(Complete("headroom plan --pol"), Words{"--policies"});
  // A nested subcommand's own options, and the global ones after the subcommand.
  const Words plan = Complete("headroom mig plan --");
  EXPECT_NE(std::find(plan.begin(), plan.end(), "--objective"), plan.end());
  EXPECT_NE(std::find(plan.begin(), plan.end(), "--quiet"), plan.end());
  EXPECT_EQ(std::find(plan.begin(), plan.end(), "--policy"), plan.end());
}

TEST_F(CompletionTest, OptionValuesFromTheChecks) {
  EXPECT_EQ(Complete("headroom gpus --backend "), (Words{"sim", "nvml"}));
  EXPECT_EQ(Complete("headroom gpus --backend n"), Words{"nvml"});
  EXPECT_EQ(Complete("headroom --color "), (Words{"auto", "always", "never"}));
  EXPECT_EQ(Complete("headroom mig plan --objective "), (Words{"energy", "makespan"}));
  // bash splits --backend=... at '=' into "--backend" "=" "...".
  EXPECT_EQ(Complete("headroom gpus --backend = "), (Words{"sim", "nvml"}));
  // A free value (a file name, say) gets no words: bash falls back to file names.
  EXPECT_TRUE(Complete("headroom plan --out ").empty());
}

TEST_F(CompletionTest, OptionValuesAreNotMistakenForCommands) {
  // "mig" here is --catalog's value, so the command is still `gpus`.
  EXPECT_EQ(Complete("headroom --catalog mig gpus --js"), Words{"--json"});
  EXPECT_EQ(Complete("headroom gpus --sim-gpu plan --ba"), Words{"--backend"});
}

// --- man pages ----------------------------------------------------------------------------

// `headroom man-pages` writes a page for every command the completion offers, each of them
// clean roff (man reports no warning), with the command's own options, their choices and
// defaults, and pointers to the pages around it.
TEST(ManPagesTest, OnePageForEveryCommandWithItsOptions) {
  const std::string dir = TempDir("man");
  const CommandRun run = Shell(fmt::format("{} man-pages --out {}", HEADROOM_BINARY, dir));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  for (const char* page :
       {"headroom", "headroom-plan", "headroom-agent", "headroom-controller", "headroom-mig",
        "headroom-mig-plan", "headroom-model-predict", "headroom-trace-stats"}) {
    EXPECT_TRUE(std::filesystem::exists(fmt::format("{}/{}.1", dir, page))) << page;
  }
  std::ifstream in(dir + "/headroom-plan.1");
  const std::string plan((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(Contains(plan, ".TH HEADROOM-PLAN 1")) << plan;
  EXPECT_TRUE(Contains(plan, "\\fB\\-\\-scenario\\fR") || Contains(plan, "\\-\\-scenario")) << plan;
  EXPECT_TRUE(Contains(plan, "Default: polca\\-a100\\-row.")) << plan;
  EXPECT_TRUE(Contains(plan, "\\fBheadroom\\fR(1)")) << "SEE ALSO";
  EXPECT_TRUE(Contains(plan, "(\\-\\-catalog, \\-\\-verbose, \\-\\-quiet, \\-\\-color)"))
      << "the global options, read from the CLI";
  std::ifstream top_in(dir + "/headroom.1");
  const std::string top((std::istreambuf_iterator<char>(top_in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(Contains(top, "See \\fBheadroom\\-plan\\fR(1).")) << top;
  EXPECT_TRUE(Contains(top, "One of: auto, always, never.")) << "--color's choices";
  // Every page renders without a warning from groff.
  const CommandRun warnings = Shell(fmt::format(
      "for f in {}/*.1; do man --warnings -E UTF-8 -l -Tutf8 -Z \"$f\" > /dev/null; done", dir));
  EXPECT_EQ(warnings.exit_code, 0) << warnings.out;
  EXPECT_TRUE(warnings.out.empty()) << warnings.out;
  std::filesystem::remove_all(dir);
}

// A directory that cannot be made is one clear error naming it.
TEST(ManPagesTest, UnwritableDirectoryIsAnError) {
  const CommandRun run =
      Shell(fmt::format("{} man-pages --out /proc/headroom-man", HEADROOM_BINARY));
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_TRUE(Contains(run.out, "--out: /proc/headroom-man")) << run.out;
}

}  // namespace
