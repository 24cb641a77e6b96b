// The man pages and the bash completion of a small command line, read as their users would:
// the completion by running it in bash, the pages by their roff.
#include "console/man_pages.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

#include "console/bash_completion.h"

namespace headroom::console {
namespace {

// toy [--verbose] run [--mode fast|slow] [--dry] [--out DIR] [NAME] deep
class ToyApp {
 public:
  ToyApp() : app_("toy: does toy things. It is small.", "toy") {
    app_.add_flag("--verbose", verbose_, "Say more");
    app_.fallthrough();
    CLI::App* run = app_.add_subcommand("run", "Run a toy.\nIn detail.");
    run->add_option("--mode", mode_, "How to run")
        ->check(CLI::IsMember({"fast", "slow"}))
        ->capture_default_str();
    run->add_flag("--dry", dry_, ".dry run, with a \\ backslash");
    run->add_option("--out", out_, "Where to write")->option_text("DIR");
    run->add_option("--secret", out_, "Hidden")->group("");
    run->add_option("NAME", name_, "The toy's name");
    run->add_subcommand("deep", "Deeper");
    app_.add_subcommand("hidden", "Not shown")->group("");
  }
  CLI::App& app() { return app_; }
  CLI::Option& Option(const std::string& command, const std::string& name) {
    return *app_.get_subcommand(command)->get_option(name);
  }

 private:
  CLI::App app_;
  bool verbose_ = false;
  std::string mode_ = "fast";
  bool dry_ = false;
  std::string out_;
  std::string name_;
};

// What bash offers for `words` (the last one being completed) with the script loaded.
std::vector<std::string> Complete(const std::string& script, const std::string& words) {
  char path[] = "/tmp/clidoc-test-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << script;
  const std::string command = "bash -c 'source " + std::string(path) + "; COMP_WORDS=(" + words +
                              "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _toy; "
                              "printf \"%s\\n\" \"${COMPREPLY[@]}\"' 2>&1";
  std::vector<std::string> out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char line[256];
    while (fgets(line, sizeof line, pipe) != nullptr) {
      std::string word(line);
      if (!word.empty() && word.back() == '\n') word.pop_back();
      if (!word.empty()) out.push_back(word);
    }
    pclose(pipe);
  }
  std::filesystem::remove(path);
  return out;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(OptionChoicesTest, ReadsTheIsMemberSetAndNothingElse) {
  ToyApp toy;
  EXPECT_EQ(OptionChoices(toy.Option("run", "--mode")), (std::vector<std::string>{"fast", "slow"}));
  EXPECT_TRUE(OptionChoices(toy.Option("run", "--out")).empty());
}

TEST(BashCompletionTest, OffersSubcommandsOptionsAndChoicesButNothingHidden) {
  ToyApp toy;
  const std::string script = BashCompletion(toy.app());
  EXPECT_TRUE(Contains(script, "complete -o bashdefault -o default -F _toy toy")) << script;
  EXPECT_EQ(Complete(script, "toy \"\""), (std::vector<std::string>{"run"}));
  EXPECT_EQ(Complete(script, "toy run --mode \"\""), (std::vector<std::string>{"fast", "slow"}));
  // Own options first, then the ones the top command lets fall through; not --secret.
  EXPECT_EQ(Complete(script, "toy run --"),
            (std::vector<std::string>{"--help", "--mode", "--dry", "--out", "--verbose"}));
  // An option's value is not taken for a command: `deep` is still offered after it.
  EXPECT_EQ(Complete(script, "toy run --out run d"), (std::vector<std::string>{"deep"}));
}

TEST(ManPagesTest, OnePagePerVisibleCommandWithItsOptionsInCleanRoff) {
  ToyApp toy;
  const std::vector<ManPage> pages =
      ManPages(toy.app(), {.version = "toy 1.0", .exit_status = "0 ok.", .docs = "See the web."});
  ASSERT_EQ(pages.size(), 3U);
  EXPECT_EQ(pages[0].file, "toy.1");
  EXPECT_EQ(pages[1].file, "toy-run.1");
  EXPECT_EQ(pages[2].file, "toy-run-deep.1");
  const std::string& top = pages[0].text;
  EXPECT_TRUE(Contains(top, ".TH TOY 1 \"\" \"toy 1.0\" \"toy manual\"")) << top;
  EXPECT_TRUE(Contains(top, ".SH NAME\ntoy \\- does toy things\n")) << top;
  EXPECT_TRUE(Contains(top, "See \\fBtoy\\-run\\fR(1).")) << top;
  EXPECT_FALSE(Contains(top, "hidden")) << top;
  EXPECT_TRUE(Contains(top, ".SH EXIT STATUS\n0 ok.\n")) << top;
  const std::string& run = pages[1].text;
  EXPECT_TRUE(Contains(run, "\\fB\\-\\-mode\\fR")) << run;
  EXPECT_TRUE(Contains(run, "How to run. One of: fast, slow. Default: fast.")) << run;
  EXPECT_TRUE(Contains(run, "\\fB\\-\\-out\\fR \\fIDIR\\fR")) << run;
  EXPECT_TRUE(Contains(run, "\\&.dry run, with a \\e backslash.")) << "escaped: " << run;
  EXPECT_FALSE(Contains(run, "secret")) << run;
  EXPECT_TRUE(Contains(run, "The global options of \\fBtoy\\fR(1) (\\-\\-verbose)")) << run;
  EXPECT_TRUE(Contains(run, "[\\fINAME\\fR]")) << "the positional in the synopsis: " << run;
  EXPECT_TRUE(Contains(pages[2].text, "\\fBtoy\\fR(1),\n\\fBtoy\\-run\\fR(1)")) << pages[2].text;
  EXPECT_TRUE(Contains(pages[2].text, "See the web.")) << pages[2].text;
}

TEST(ManPagesTest, NoExitStatusSectionWhenTheManualHasNone) {
  ToyApp toy;
  EXPECT_FALSE(Contains(ManPages(toy.app(), {.version = "toy 1.0"})[0].text, "EXIT STATUS"));
}

TEST(WriteManPagesTest, WritesEveryPageAndNamesADirectoryItCannotMake) {
  ToyApp toy;
  const std::string dir = ::testing::TempDir() + "/clidoc-man";
  auto paths = WriteManPages(toy.app(), {.version = "toy 1.0"}, dir);
  ASSERT_TRUE(paths.has_value()) << paths.error().message();
  ASSERT_EQ(paths->size(), 3U);
  for (const std::string& path : *paths) EXPECT_TRUE(std::filesystem::exists(path)) << path;
  std::filesystem::remove_all(dir);

  auto bad = WriteManPages(toy.app(), {.version = "toy 1.0"}, "/proc/clidoc-man");
  ASSERT_FALSE(bad.has_value());
  EXPECT_TRUE(Contains(bad.error().message(), "/proc/clidoc-man")) << bad.error().message();
}

}  // namespace
}  // namespace headroom::console
