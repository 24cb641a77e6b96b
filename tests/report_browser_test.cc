// The reports as a reader sees them: `headroom plan --report` on a small scenario, `headroom mig
// plan --report` on a jobs file, `headroom mig characterize --report` on a small sweep, and the
// reports of `simulate`, `characterize` and `measure` on small inputs. Headless Chromium renders
// each page (a screenshot, which must not be blank) and dumps the DOM after load (every gnuplot
// plot must be an <svg> whose data groups draw paths or points, every layout drawing an <svg>
// with its instances' blocks). Skips only when chromium is not installed. Every process runs
// under `timeout`.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <png.h>
#include <unistd.h>

#include "headroom_command.h"

namespace {

using headroom::testing::CommandRun;
using headroom::testing::Headroom;
using headroom::testing::RunShell;

// What the report of a plan with capping policies, complete runs and a power trace draws.
const std::vector<std::string> kPlots = {
    "capacity",       "row-power",      "peak-power", "risk",       "latency-hp-p50",
    "latency-hp-p99", "latency-lp-p50", "slo-margin", "weeks-peak", "weeks-slo"};

constexpr const char* kChromiumFlags =
    "--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking "
    "--disable-component-update --disable-sync";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The <figure> of plot `name` in the DOM, or "".
std::string FigureOf(const std::string& dom, const std::string& name) {
  const std::size_t start = dom.find(fmt::format("data-plot=\"{}\"", name));
  if (start == std::string::npos) return "";
  const std::size_t end = dom.find("</figure>", start);
  return dom.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The values of attribute `name` (quoted with " or ') of every element in `html`. A plain scan:
// libstdc++'s recursive std::regex overflows the stack on a page this size.
std::vector<std::string> AttributeValues(const std::string& html, const std::string& name) {
  std::vector<std::string> values;
  const std::string key = " " + name + "=";
  for (std::size_t at = html.find(key); at != std::string::npos; at = html.find(key, at + 1)) {
    const std::size_t open = at + key.size();
    if (open >= html.size() || (html[open] != '"' && html[open] != '\'')) continue;
    const std::size_t close = html.find(html[open], open + 1);
    if (close == std::string::npos) break;
    values.push_back(html.substr(open + 1, close - open - 1));
  }
  return values;
}

// Paths drawn inside gnuplot's data groups (ids "<plot>-gnuplot_plot_<k>", after the axes)
// whose d attribute moves through at least two points.
int DrawnDataPaths(const std::string& figure) {
  const std::size_t data = figure.find("gnuplot_plot_");
  if (data == std::string::npos) return 0;
  int drawn = 0;
  for (const std::string& d : AttributeValues(figure.substr(data), "d")) {
    int numbers = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
      const bool digit = d[i] >= '0' && d[i] <= '9';
      if (digit && (i == 0 || !((d[i - 1] >= '0' && d[i - 1] <= '9') || d[i - 1] == '.'))) {
        ++numbers;
      }
    }
    if (numbers >= 4) ++drawn;
  }
  return drawn;
}

// Points gnuplot drew inside its data groups: <use> of a point symbol beyond each group's one key
// sample.
int DrawnDataPoints(const std::string& figure) {
  int drawn = 0;
  const std::string marker = "gnuplot_plot_";
  for (std::size_t at = figure.find(marker); at != std::string::npos;) {
    const std::size_t next = figure.find(marker, at + marker.size());
    const std::string group = figure.substr(at, next == std::string::npos ? next : next - at);
    int uses = 0;
    for (std::size_t u = group.find("<use"); u != std::string::npos;
         u = group.find("<use", u + 1)) {
      ++uses;
    }
    drawn += std::max(uses - 1, 0);
    at = next;
  }
  return drawn;
}

// GPU-instance blocks of a layout drawing with a positive width.
int DrawnBlocks(const std::string& figure) {
  int drawn = 0;
  const std::string key = "<rect class=\"gi\"";
  for (std::size_t at = figure.find(key); at != std::string::npos; at = figure.find(key, at + 1)) {
    const std::size_t width = figure.find("width=\"", at);
    if (width != std::string::npos && std::atof(figure.c_str() + width + 7) > 0) ++drawn;
  }
  return drawn;
}

struct Pixels {
  unsigned width = 0, height = 0;
  std::vector<unsigned char> rgba = {};
  std::string error;
};

// Decodes a PNG with libpng's simplified API.
Pixels ReadPng(const std::string& path) {
  Pixels out;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&image, path.c_str()) == 0) {
    out.error = image.message;
    return out;
  }
  image.format = PNG_FORMAT_RGBA;
  out.width = image.width;
  out.height = image.height;
  out.rgba.resize(PNG_IMAGE_SIZE(image));
  if (png_image_finish_read(&image, nullptr, out.rgba.data(), 0, nullptr) == 0) {
    out.error = image.message;
  }
  png_image_free(&image);
  return out;
}

class ReportBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunShell("command -v chromium >/dev/null 2>&1").exit_code != 0) {
      GTEST_SKIP() << "chromium is not installed (Debian package chromium; "
                      "scripts/install-deps.sh installs it): the report is not tested in a "
                      "browser";
    }
    // One directory per test and process: ctest runs the tests side by side.
    dir_ = fmt::format("{}headroom_report_browser_{}_{}", ::testing::TempDir(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name(), getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  // Kept after a failure, to look at.
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) std::filesystem::remove_all(dir_);
  }

  // Chromium with the test's flags, a fresh profile, and `args`, killed after 90 s. Its stderr
  // (D-Bus complaints and the like) goes to a log beside the profile, read back on failure.
  CommandRun Chromium(const std::string& args) {
    const std::string profile = fmt::format("{}/profile-{}", dir_, ++profiles_);
    std::filesystem::create_directories(profile);
    CommandRun run =
        RunShell(fmt::format("timeout -k 5 90 chromium {} --user-data-dir={} {} 2>{}.log",
                             kChromiumFlags, profile, args, profile));
    if (run.exit_code != 0) run.out += "\nchromium's stderr:\n" + ReadAll(profile + ".log");
    return run;
  }

  // The page at `url` as a 1280x2000 screenshot: many colours, and a fair share of pixels off the
  // background.
  void ExpectScreenshotNotBlank(const std::string& url) {
    const std::string png = fmt::format("{}/report-{}.png", dir_, profiles_);
    const CommandRun shot =
        Chromium(fmt::format("--screenshot={} --window-size=1280,2000 {}", png, url));
    ASSERT_EQ(shot.exit_code, 0) << shot.out.substr(0, 2000);
    const Pixels pixels = ReadPng(png);
    ASSERT_TRUE(pixels.error.empty()) << png << ": " << pixels.error << "\n" << shot.out;
    EXPECT_EQ(pixels.width, 1280u);
    EXPECT_EQ(pixels.height, 2000u);
    // Not blank: many colours (text, plot lines, table shading), and a fair share of pixels
    // that differ from the page's first pixel (the background).
    std::set<std::uint32_t> colours;
    std::size_t differing = 0;
    const std::size_t n = pixels.rgba.size() / 4;
    for (std::size_t i = 0; i < n; ++i) {
      const unsigned char* p = &pixels.rgba[4 * i];
      colours.insert(static_cast<std::uint32_t>(p[0] << 16 | p[1] << 8 | p[2]));
      if (p[0] != pixels.rgba[0] || p[1] != pixels.rgba[1] || p[2] != pixels.rgba[2]) ++differing;
    }
    EXPECT_GE(colours.size(), 32u);
    EXPECT_GT(static_cast<double>(differing) / static_cast<double>(n), 0.2);
  }

  // The DOM of the page at `url` after load: it must hold exactly the figures `expected`, each
  // drawn (`drawn` says how much of a figure is data).
  void ExpectFiguresDrawn(const std::string& url, const std::vector<std::string>& expected,
                          const std::function<int(const std::string& figure)>& drawn) {
    const CommandRun dom = Chromium("--dump-dom " + url);
    ASSERT_EQ(dom.exit_code, 0) << dom.out.substr(0, 2000);
    ASSERT_NE(dom.out.find("</html>"), std::string::npos) << dom.out.substr(0, 2000);
    EXPECT_NE(dom.out.find("class=\"answer\""), std::string::npos);
    EXPECT_EQ(dom.out.find("Plot not drawn"), std::string::npos);
    for (const std::string& name : expected) {
      const std::string figure = FigureOf(dom.out, name);
      ASSERT_FALSE(figure.empty()) << "no figure for plot " << name;
      EXPECT_NE(figure.find("<svg"), std::string::npos) << name << " has no <svg>";
      EXPECT_GE(drawn(figure), 1) << name << " draws no data";
    }
    // No figure beyond the expected ones goes unchecked.
    const std::vector<std::string> figures = AttributeValues(dom.out, "data-plot");
    EXPECT_EQ(std::set<std::string>(figures.begin(), figures.end()),
              std::set<std::string>(expected.begin(), expected.end()));
    EXPECT_EQ(figures.size(), expected.size());
  }

  // Runs `headroom ARGS` (which writes DIR/report.html), then checks that `headroom report DIR`
  // rebuilds the same page from the directory alone; returns the page's file:// URL.
  std::string MakeReport(const std::string& args, const std::string& out) {
    const CommandRun made = Headroom(args);
    EXPECT_EQ(made.exit_code, 0) << made.out;
    const std::string report = out + "/report.html";
    EXPECT_NE(made.out.find("report: " + report), std::string::npos) << made.out;
    const std::string first = ReadAll(report);
    EXPECT_FALSE(first.empty()) << made.out;
    std::filesystem::remove_all(out + "/plots");
    std::filesystem::remove(report);
    const CommandRun rebuilt = Headroom("report " + out);
    EXPECT_EQ(rebuilt.exit_code, 0) << rebuilt.out;
    EXPECT_EQ(rebuilt.out, "report: " + report + "\n");
    EXPECT_TRUE(ReadAll(report) == first) << "report DIR wrote a different page";
    return "file://" + std::filesystem::absolute(report).string();
  }

  std::string dir_;
  int profiles_ = 0;
};

TEST_F(ReportBrowserTest, EveryPlotIsDrawnInChromium) {
  const std::string out = dir_ + "/plan";
  // A looser LP bound than the scenario's, so that polca keeps the SLO at the provisioned row and
  // the report has a chosen policy (and its row power over time).
  const std::string url = MakeReport(
      fmt::format("plan --config {} --threads 2 --slo lp_p50_e2e_pct=15 --report --out {}",
                  SMALL_ROW_SCENARIO, out),
      out);
  ASSERT_FALSE(HasFailure());
  ExpectFiguresDrawn(url, kPlots, DrawnDataPaths);
  ExpectScreenshotNotBlank(url);
  // The week-by-week table lists each policy's planning week at its answer.
  std::ifstream in(out + "/report.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t weeks = html.find("<section id=\"weeks\">");
  ASSERT_NE(weeks, std::string::npos);
  EXPECT_NE(html.find("<td>polca</td>", weeks), std::string::npos);
  EXPECT_NE(html.find("planning week 1 (seed", weeks), std::string::npos);
  // The risk table: a row per count run, a cell per policy ("0/1 · 93.2% · ...").
  const size_t risk = html.find("<section id=\"risk\">");
  ASSERT_NE(risk, std::string::npos);
  EXPECT_NE(html.find("<th>polca</th>", risk), std::string::npos);
  EXPECT_NE(html.find("0/1 · ", risk), std::string::npos);
}

// A plan with unseen weeks states its weekly risk: the risk curve with its bounds as error bars
// (four columns in its data: servers, share, lower and upper bound), the target's line, and the
// distribution of each answer's smallest margin over the unseen weeks, all drawn.
TEST_F(ReportBrowserTest, APlansWeeklyRiskIsDrawnWithItsBounds) {
  const std::string out = dir_ + "/plan-risk";
  const std::string url = MakeReport(
      fmt::format("plan --config {} --threads 2 --policies none,brake-only --risk-beyond 1 "
                  "--report --out {}",
                  SMALL_SYNTH_ROW_SCENARIO, out),
      out);
  ASSERT_FALSE(HasFailure());
  std::vector<std::string> plots = kPlots;  // and the margins over the unseen weeks
  plots.insert(std::find(plots.begin(), plots.end(), "weeks-slo"), "weeks-margin");
  ExpectFiguresDrawn(url, plots, DrawnDataPaths);
  const std::string data = ReadAll(out + "/plots/risk.dat");
  std::istringstream lines(data);
  int with_bounds = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    double servers = 0, share = 0, lower = 0, upper = 0;
    if (!(fields >> servers >> share >> lower >> upper)) continue;  // the target's line
    EXPECT_LE(lower, share) << line;
    EXPECT_GE(upper, share) << line;
    ++with_bounds;
  }
  EXPECT_GE(with_bounds, 4) << data;  // two policies at two counts or more
  EXPECT_NE(data.find("# target (80%)"), std::string::npos) << data;
}

// Layout drawings: blocks; gnuplot plots: lines (paths) or points.
int Drawn(const std::string& figure) {
  return figure.find("gnuplot_plot_") == std::string::npos
             ? DrawnBlocks(figure)
             : DrawnDataPaths(figure) + DrawnDataPoints(figure);
}

TEST_F(ReportBrowserTest, MigPlanLayoutsAndPlotsAreDrawnInChromium) {
  const std::string out = dir_ + "/mig-plan";
  const std::string url =
      MakeReport("mig plan data/mig-jobs/mixed-small-medium-large.yaml --report --out " + out, out);
  ASSERT_FALSE(HasFailure());
  // The plan and three baselines (whole GPU, two halves, seven 1g), each drawn as slots.
  ExpectFiguresDrawn(
      url, {"slots-0", "slots-1", "slots-2", "slots-3", "energy-makespan", "timeline"}, Drawn);
  ExpectScreenshotNotBlank(url);
}

TEST_F(ReportBrowserTest, MigCharacterizeLayoutsAndPlotsAreDrawnInChromium) {
  const std::string out = dir_ + "/mig-characterize";
  // MIG off, the two halves and 7g: three layouts.
  const std::string url = MakeReport(
      "mig characterize --workloads resnet50-finetune,gpt2-124m-finetune --layout "
      "3g.71gb@0,3g.71gb@4 --layout 7g.141gb@0 --report --out " +
          out,
      out);
  ASSERT_FALSE(HasFailure());
  ExpectFiguresDrawn(url, {"slots-0", "slots-1", "slots-2", "throughput", "energy", "power"},
                     Drawn);
}

TEST_F(ReportBrowserTest, EveryPlotOfSimulateCharacterizeAndMeasureIsDrawn) {
  struct Case {
    std::string args;
    std::vector<std::string> plots;
  };
  const std::vector<Case> cases = {
      {fmt::format("simulate --config {} --policy polca --report --out {}/simulate",
                   SMALL_ROW_SCENARIO, dir_),
       {"row-power", "latency-hp", "latency-lp", "ttft"}},
      {fmt::format("characterize --model llama2-70b --gpu a100-80gb --sm-clocks 1110,1260 "
                   "--power-limits 300 --prompts 2048 --batches 1 --report --out {}/characterize",
                   dir_),
       {"power-vs-clock", "latency-vs-clock", "power-vs-limit", "latency-vs-limit", "pareto",
        "power-over-time", "phase-power"}},
      {fmt::format("measure --backend sim --sim-count 1 --sim-load inference --interval 50ms "
                   "--report --out {}/measure -- bash -c 'echo \"phase prefill\" > "
                   "$HEADROOM_MARKERS; sleep 0.3; echo \"phase decode\" > $HEADROOM_MARKERS; "
                   "sleep 0.5'",
                   dir_),
       {"power", "phase-power"}},
  };
  for (const Case& c : cases) {
    const CommandRun run = Headroom(c.args);
    ASSERT_EQ(run.exit_code, 0) << c.args << "\n" << run.out;
    const std::size_t at = run.out.find("report: ");
    ASSERT_NE(at, std::string::npos) << run.out;
    const std::string report = run.out.substr(at + 8, run.out.find('\n', at) - at - 8);
    SCOPED_TRACE(report);
    ExpectFiguresDrawn("file://" + std::filesystem::absolute(report).string(), c.plots,
                       DrawnDataPaths);
  }
}

}  // namespace
