// Runs the headroom binary and checks what a user sees: output, JSON fields and exit codes.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "headroom_command.h"
#include "service/testing/fake_engine.h"

namespace {

using headroom::testing::CommandRun;
using headroom::testing::Headroom;
using headroom::testing::Lines;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `headroom X ...` registers X alone (cli/app.h); a command line that starts with a global flag
// registers every command. Each command, and each of its subcommands, must read the same both
// ways: the same help, the same error for a flag it does not have.
TEST(CliTest, ACommandRegisteredAloneReadsAsInTheWholeTree) {
  const CommandRun top = Headroom("--help");
  ASSERT_EQ(top.exit_code, 0) << top.out;
  const std::vector<std::string> lines = Lines(top.out);
  const auto listed = std::find(lines.begin(), lines.end(), "Subcommands:");
  ASSERT_NE(listed, lines.end()) << top.out;
  std::vector<std::string> commands;
  for (auto line = std::next(listed); line != lines.end(); ++line) {
    // "  name   description"; a description's continuation starts with more spaces.
    if (line->size() > 2 && line->compare(0, 2, "  ") == 0 && (*line)[2] != ' ') {
      commands.push_back(line->substr(2, line->find(' ', 2) - 2));
    }
  }
  ASSERT_GE(commands.size(), 10u) << top.out;
  std::vector<std::string> command_lines;
  for (const std::string& command : commands) {
    command_lines.push_back(command + " --help");
    command_lines.push_back(command + " --no-such-flag");
    // Its subcommands, listed in its help the same way.
    const std::vector<std::string> help = Lines(Headroom(command + " --help").out);
    const auto subs = std::find(help.begin(), help.end(), "Subcommands:");
    for (auto line = subs == help.end() ? help.end() : std::next(subs); line != help.end();
         ++line) {
      if (line->size() > 2 && line->compare(0, 2, "  ") == 0 && (*line)[2] != ' ') {
        command_lines.push_back(command + " " + line->substr(2, line->find(' ', 2) - 2) +
                                " --help");
      }
    }
  }
  command_lines.push_back("gpus --backend sim --json");
  ASSERT_GT(command_lines.size(), 2 * commands.size());  // some commands have subcommands
  for (const std::string& args : command_lines) {
    const CommandRun alone = Headroom(args);
    const CommandRun whole = Headroom("--color auto " + args);
    EXPECT_EQ(alone.exit_code, whole.exit_code) << args;
    EXPECT_EQ(alone.out, whole.out) << args;
  }
}

TEST(CliTest, GpusJsonMatchesTheCatalog) {
  const CommandRun run =
      Headroom("gpus --backend sim --sim-gpu a100-80gb-sxm --sim-count 8 --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["gpus"].size(), 8u);
  for (const auto& gpu : j["gpus"]) {
    EXPECT_EQ(gpu["tdp_w"], 400.0);
    EXPECT_EQ(gpu["power_limit_w"], 400.0);
    EXPECT_EQ(gpu["power_limit_min_w"], 100.0);
    EXPECT_EQ(gpu["sm_clock_max_mhz"], 1410.0);
    EXPECT_EQ(gpu["memory_total_bytes"], 80ULL << 30);
    EXPECT_EQ(gpu["name"], "NVIDIA A100-SXM4-80GB");
  }
  EXPECT_EQ(j["gpus"][7]["index"], 7);
}

TEST(CliTest, GpusAcceptsAliasesAndOtherTypes) {
  const CommandRun run = Headroom("gpus --sim-gpu h100-80gb --sim-count 2 --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["gpus"][0]["tdp_w"], 700.0);
  EXPECT_EQ(j["gpus"][0]["catalog_type"], "h100-80gb-sxm");
  EXPECT_NE(Headroom("gpus --sim-count 1").out.find("a100-80gb-sxm"), std::string::npos);
}

TEST(CliTest, MonitorStreamsCsvOnVirtualTime) {
  const CommandRun run = Headroom(
      "monitor --sim-count 2 --sim-load inference --virtual-time --duration 2s --interval 100ms "
      "--format csv");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 1u + 20u * 2u);  // header + 20 samples of 2 GPUs
  EXPECT_EQ(lines[0].rfind("time_s,gpu,power_w,", 0), 0u);
  EXPECT_EQ(lines.back().rfind("2.0,1,", 0), 0u) << lines.back();
}

TEST(CliTest, MonitorJsonlShowsPrefillAboveDecode) {
  const CommandRun run = Headroom(
      "monitor --sim-count 1 --sim-load prefill:1s,decode:1s --virtual-time --duration 2s "
      "--interval 500ms --format jsonl");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 4u);
  const auto prefill = nlohmann::json::parse(lines[1]);  // t = 1.0 s: end of prefill window
  const auto decode = nlohmann::json::parse(lines[3]);   // t = 2.0 s
  EXPECT_GT(prefill["power_avg_w"].get<double>(), 350);
  EXPECT_LT(decode["power_avg_w"].get<double>(), 300);
  EXPECT_GT(decode["energy_j"].get<double>(), prefill["energy_j"].get<double>());
}

TEST(CliTest, MonitorOnTheRealClockEndsAfterItsDuration) {
  const CommandRun run =
      Headroom("monitor --sim-count 1 --duration 300ms --interval 100ms --format jsonl");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(Lines(run.out).size(), 3u);
}

TEST(CliTest, BadInputIsOneLineAndExitCodeTwo) {
  struct Case {
    const char* args;
    const char* says;
  };
  for (const Case& c : {Case{"monitor --interval 5", "'5' is not a duration"},
                        Case{"monitor --interval 1ms", "outside 10ms..60s"},
                        Case{"monitor --format xml --duration 1s", "'xml'"},
                        Case{"gpus --sim-gpu v100", "unknown GPU type 'v100'"},
                        Case{"gpus --sim-load train", "unknown load kind 'train'"},
                        Case{"gpus --sim-count 0", "--sim-count"},
                        Case{"model dvfs --sm-clocks 5000", "outside a100-80gb-sxm's range"},
                        Case{"gpus --bogus", "--bogus"}, Case{"", "subcommand is required"}}) {
    const CommandRun run = Headroom(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.out;
    EXPECT_NE(run.out.find(c.says), std::string::npos) << c.args << "\n" << run.out;
    EXPECT_EQ(run.out.rfind("headroom: ", 0), 0u) << run.out;
  }
}

// `agent` and `controller` run in headroom-daemon, which headroom execs with its command line:
// the daemon's own checks answer, and a missing daemon is one clear runtime error.
TEST(CliTest, TheDaemonCommandsRunInHeadroomDaemon) {
  const CommandRun agent = Headroom("agent --token-file /nonexistent/token");
  EXPECT_EQ(agent.exit_code, 2) << agent.out;
  EXPECT_TRUE(
      headroom::testing::Contains(agent.out, "--token-file: /nonexistent/token: cannot open"))
      << agent.out;
  const CommandRun controller = Headroom("controller --config /nonexistent/row.yaml");
  EXPECT_EQ(controller.exit_code, 2) << controller.out;
  EXPECT_TRUE(headroom::testing::Contains(controller.out, "/nonexistent/row.yaml: cannot open"))
      << controller.out;
  const CommandRun missing =
      Headroom("controller --config row.yaml", "HEADROOM_DAEMON=/nonexistent/headroom-daemon");
  EXPECT_EQ(missing.exit_code, 1) << missing.out;
  EXPECT_EQ(
      missing.out.rfind("headroom: cannot start /nonexistent/headroom-daemon: No such file", 0), 0u)
      << missing.out;
  // Usage errors are headroom's, before any exec.
  const CommandRun usage =
      Headroom("agent --bogus", "HEADROOM_DAEMON=/nonexistent/headroom-daemon");
  EXPECT_EQ(usage.exit_code, 2) << usage.out;
  EXPECT_TRUE(headroom::testing::Contains(usage.out, "--bogus")) << usage.out;
}

TEST(CliTest, NvmlBackendWithoutADriverSaysSoAndSuggestsSim) {
  const CommandRun run =
      Headroom("gpus --backend nvml", "HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("NVML is not available"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("--backend sim"), std::string::npos) << run.out;
  EXPECT_EQ(Lines(run.out).size(), 1u);
}

TEST(CliTest, NvmlBackendThroughTheFakeLibrary) {
  const std::string env = std::string("HEADROOM_NVML_LIBRARY=") + FAKE_NVML +
                          " HEADROOM_FAKE_NVML_COUNT=3 HEADROOM_FAKE_NVML_GPU=h200";
  const CommandRun gpus = Headroom("gpus --backend nvml --json", env);
  ASSERT_EQ(gpus.exit_code, 0) << gpus.out;
  const auto j = nlohmann::json::parse(gpus.out);
  EXPECT_EQ(j["backend"], "nvml");
  ASSERT_EQ(j["gpus"].size(), 3u);
  EXPECT_EQ(j["gpus"][0]["catalog_type"], "h200-141gb-sxm");
  EXPECT_EQ(j["gpus"][0]["tdp_w"], 700.0);

  const CommandRun monitor = Headroom(
      "monitor --backend nvml --gpus 1 --format csv --duration 300ms --interval 100ms", env);
  ASSERT_EQ(monitor.exit_code, 0) << monitor.out;
  const auto lines = Lines(monitor.out);
  ASSERT_EQ(lines.size(), 4u) << monitor.out;
  EXPECT_EQ(lines[1].find(",1,"), lines[1].find(','));  // second column: GPU 1

  const CommandRun bad = Headroom("gpus --backend nvml --gpus 7", env);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.out.find("GPU index 7"), std::string::npos) << bad.out;
}

std::string FakeNvmlEnv(const std::string& extra = "") {
  return std::string("HEADROOM_NVML_LIBRARY=") + FAKE_NVML + " " + extra;
}

TEST(CliTest, MeasureSleepReportsEnergyPerGpu) {
  const CommandRun run = Headroom("measure --backend nvml --json -- sleep 2", FakeNvmlEnv());
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["gpus"].size(), 2u);
  for (const auto& gpu : j["gpus"]) {
    EXPECT_GT(gpu["energy_j"].get<double>(), 0);
    EXPECT_EQ(gpu["energy_source"], "counter");
    // An idle A100 (63 W), read through a counter that moves every 100 ms: over ~2 s the
    // reading can be off by up to one update period's energy at each end (~5%).
    EXPECT_NEAR(gpu["avg_power_w"].get<double>(), 63, 4);
    EXPECT_GE(gpu["peak_power_w"].get<double>(), 63);
    EXPECT_GE(gpu["duration_s"].get<double>(), 1.9);
  }
  EXPECT_GE(j["duration_s"].get<double>(), 2.0);
  EXPECT_TRUE(j["complete"].get<bool>());
}

TEST(CliTest, MeasuredEnergyOfAScriptedLoadMatchesTheModel) {
  // The model's own figure for an H100 decode step at full clock.
  const CommandRun model = Headroom("model dvfs --gpu h100-80gb-sxm --sm-clocks 1980 --json");
  ASSERT_EQ(model.exit_code, 0) << model.out;
  const double decode_w =
      nlohmann::json::parse(model.out)["clock_sweep"][0]["decode"]["power_w"].get<double>();

  const CommandRun run =
      Headroom("measure --backend nvml --gpus 0 --json -- sleep 2",
               FakeNvmlEnv("HEADROOM_FAKE_NVML_LOAD=decode HEADROOM_FAKE_NVML_GPU=h100-80gb-sxm"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto gpu = nlohmann::json::parse(run.out)["gpus"][0];
  const double duration = gpu["duration_s"].get<double>();
  EXPECT_NEAR(gpu["energy_j"].get<double>() / (decode_w * duration), 1.0, 0.01);
  // The counter moves every ~20 ms on Hopper, so over ~2 s it can differ from the integral by
  // at most about one update period's worth of energy.
  const double period = gpu["counter_update_period_s"].get<double>();
  EXPECT_LT(gpu["counter_vs_integration"].get<double>(), period / duration + 0.005);
}

TEST(CliTest, MeasureMarkersRegexWorkAndExitCode) {
  const CommandRun run = Headroom(
      "measure --backend sim --sim-count 1 --sim-load decode --json --work-regex 'gen ([0-9]+)' "
      "--unit tokens -- bash -c 'echo \"phase load\" > $HEADROOM_MARKERS; sleep 0.3; "
      "echo \"phase serve\" > $HEADROOM_MARKERS; echo \"work 40\" > $HEADROOM_MARKERS; "
      "echo gen 60; sleep 0.3; echo bogus > $HEADROOM_MARKERS; exit 3'");
  EXPECT_EQ(run.exit_code, 3) << run.out;
  const size_t json_start = run.out.find("{\n");
  ASSERT_NE(json_start, std::string::npos) << run.out;
  const auto j = nlohmann::json::parse(run.out.substr(json_start));
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_DOUBLE_EQ(j["work"]["units"].get<double>(), 100);
  EXPECT_EQ(j["work"]["unit"], "tokens");
  ASSERT_EQ(j["phases"].size(), 2u);
  EXPECT_EQ(j["phases"][0]["name"], "load");
  EXPECT_EQ(j["phases"][1]["name"], "serve");
  EXPECT_GT(j["phases"][1]["energy_j"].get<double>(), 0);
  EXPECT_NE(run.out.find("gen 60"), std::string::npos);  // the command's output passes through
  EXPECT_NE(run.out.find("unknown marker 'bogus'"), std::string::npos);
}

TEST(CliTest, MeasureGpuLostKeepsDataAndSaysSo) {
  const std::string out = ::testing::TempDir() + "headroom_lost.csv";
  const CommandRun run = Headroom("measure --backend nvml --json --out " + out + " -- sleep 1.5",
                                  FakeNvmlEnv("HEADROOM_FAKE_NVML_LOST_AFTER=500ms"));
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("GPU is lost"), std::string::npos) << run.out;
  const size_t json_start = run.out.find("{\n");
  ASSERT_NE(json_start, std::string::npos) << run.out;
  const auto j =
      nlohmann::json::parse(run.out.substr(json_start, run.out.rfind('}') - json_start + 1));
  EXPECT_FALSE(j["complete"].get<bool>());
  EXPECT_GT(j["gpus"][0]["samples"].get<int>(), 2);
  FILE* f = std::fopen(out.c_str(), "r");
  ASSERT_NE(f, nullptr);
  int lines = 0;
  for (int c; (c = std::fgetc(f)) != EOF;) lines += c == '\n';
  std::fclose(f);
  EXPECT_GT(lines, 4);  // header + the samples before the loss
  const std::string summary = out.substr(0, out.size() - 4) + ".summary.json";
  EXPECT_EQ(std::system(("test -s " + summary).c_str()), 0);
}

TEST(CliTest, MeasureForwardsSignalsToTheCommand) {
  const std::string command = fmt::format(
      "HEADROOM_NVML_LIBRARY={} timeout --preserve-status -s TERM 1 {} measure --backend nvml "
      "-- sleep 30 >/dev/null 2>&1",
      FAKE_NVML, HEADROOM_BINARY);
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(WEXITSTATUS(status), 128 + 15);  // sleep died of the forwarded SIGTERM
}

TEST(CliTest, MeasureBadInput) {
  EXPECT_EQ(Headroom("measure --backend sim -- /nonexistent/tool").exit_code, 2);
  EXPECT_NE(Headroom("measure --backend sim -- /nonexistent/tool").out.find("cannot run"),
            std::string::npos);
  EXPECT_EQ(Headroom("measure --backend sim --out x.txt -- true").exit_code, 2);
  EXPECT_EQ(Headroom("measure --backend sim").exit_code, 2);
  EXPECT_EQ(Headroom("measure --backend sim --work-regex '(' -- true").exit_code, 2);
}

// A serving engine's /metrics on 127.0.0.1: each GET finds more prompt and generated tokens, in a
// mix that changes from one GET to the next.
class ServingEngine {
 public:
  std::string url() const { return engine_.url(); }

 private:
  std::string Page() {
    ++gets_;
    prompt_ += 100.0 * (1 + (gets_ * 7) % 10);
    generated_ += 50.0 * (1 + (gets_ * 3) % 10);
    return fmt::format(
        "vllm:prompt_tokens_total{{model_name=\"m\"}} {}\n"
        "vllm:generation_tokens_total{{model_name=\"m\"}} {}\n"
        "vllm:num_requests_running{{model_name=\"m\"}} 4\n"
        "vllm:num_requests_waiting{{model_name=\"m\"}} 0\n",
        prompt_, generated_);
  }

  int gets_ = 0;
  double prompt_ = 0;
  double generated_ = 0;
  headroom::service::testing::FakeEngine engine_{[this] { return Page(); }};  // last: it calls Page
};

// Issue 51: `measure --engine-metrics URL --duration D` watches a running server from outside
// (through headroom-daemon, which links the HTTP stack) and prints J per prompt and generated
// token with their errors, from the local GPUs' energy counters (here the fake NVML's).
TEST(CliTest, MeasureEngineMetricsPrintsJoulesPerToken) {
  ServingEngine engine;
  const std::string env = FakeNvmlEnv(
      "HEADROOM_FAKE_NVML_COUNT=2 HEADROOM_FAKE_NVML_LOAD="
      "'prefill:300ms,decode*0.6:500ms,idle:200ms'");
  const std::string watch = fmt::format(
      "measure --backend nvml --engine-metrics {} --duration 2s --engine-metrics-interval 200ms",
      engine.url());
  const CommandRun text = Headroom(watch, env);
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("windows over"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("2 GPU(s)"), std::string::npos) << text.out;
  for (const char* row :
       {"J per prompt token", "J per generated token", "idle W", "J per generated token, all in"}) {
    EXPECT_NE(text.out.find(row), std::string::npos) << row << "\n" << text.out;
  }
  EXPECT_NE(text.out.find("\u00b1"), std::string::npos) << text.out;

  const CommandRun json = Headroom(watch + " --json", env);
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["gpus"], 2);
  EXPECT_GE(j["windows"].get<int>(), 8);
  ASSERT_FALSE(j["token_energy"].is_null()) << json.out;
  EXPECT_GT(j["token_energy"]["idle_w"].get<double>(), 0);
  EXPECT_GE(j["token_energy"]["j_per_generated_token_stderr"].get<double>(), 0);
  EXPECT_GT(j["energy_j"].get<double>(), 0);
  // Idle included: above the fitted cost of a generated token.
  EXPECT_GT(j["token_energy"]["all_in_j_per_generated_token"].get<double>(),
            j["token_energy"]["j_per_generated_token"].get<double>());
}

TEST(CliTest, MeasureEngineMetricsBadInput) {
  const CommandRun down = Headroom(
      "measure --backend sim --engine-metrics http://127.0.0.1:1/metrics --duration 1s "
      "--engine-metrics-interval 500ms");
  EXPECT_EQ(down.exit_code, 1) << down.out;
  EXPECT_NE(down.out.find("http://127.0.0.1:1/metrics"), std::string::npos) << down.out;
  EXPECT_NE(down.out.find("is the serving engine up"), std::string::npos) << down.out;
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"--engine-metrics localhost:8000 --duration 1s", "--engine-metrics"},
           {"--engine-metrics http://127.0.0.1:1/metrics --duration 0s", "--duration"},
           {"--engine-metrics http://127.0.0.1:1/metrics --duration soon", "--duration"},
           {"--engine-metrics http://127.0.0.1:1/metrics --duration 1s "
            "--engine-metrics-interval 2s",
            "longer than --duration"},
           {"--engine-metrics http://127.0.0.1:1/metrics --duration 1s -- true", "not both"},
           {"--duration 1s -- true", "--duration is for --engine-metrics"},
           {"--engine-metrics http://127.0.0.1:1/metrics --duration 1s --out x.csv",
            "--out is for a command measured"},
           {"--engine-metrics http://127.0.0.1:1/metrics --duration 1s --interval 1s",
            "--interval is for a command measured"}}) {
    const CommandRun run = Headroom("measure --backend sim " + args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.out;
    EXPECT_NE(run.out.find(says), std::string::npos) << args << "\n" << run.out;
  }
}

TEST(CliTest, ModelPredictEveryModelOnEveryGpu) {
  for (const char* model :
       {"llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "bloom-176b",
        "gpt-neox-20b", "opt-30b", "flan-t5-xxl", "roberta-large"}) {
    for (const char* gpu :
         {"a100-40gb-sxm", "a100-80gb-sxm", "h100-80gb-sxm", "h100-80gb-pcie", "h200-141gb-sxm"}) {
      // The default engine, and the profile engine, whose overhead activity was fitted on
      // measured power below its bound: under the vLLM calibrations (activity 1.0 on the A100, at
      // its bound) a small model's decode at TP 8 draws more than its prefill, a known gap
      // (docs/inference-model.md).
      for (const char* engine : {"", " --engine splitwise-sim"}) {
        const CommandRun run = Headroom(
            fmt::format("model predict --model {} --gpu {} --tp 8 --prompt 512 --batch 4 --json{}",
                        model, gpu, engine));
        ASSERT_EQ(run.exit_code, 0) << model << " " << gpu << "\n" << run.out;
        const auto j = nlohmann::json::parse(run.out);
        EXPECT_GT(j["prefill_ms"].get<double>(), 0);
        EXPECT_GT(j["prefill_power_w"].get<double>(), 0);
        EXPECT_GT(j["energy"]["request_j"].get<double>(), 0);
        if (std::string(model) == "roberta-large") {
          EXPECT_TRUE(j["decode_step_ms"].is_null());
        } else {
          EXPECT_GT(j["decode_step_ms"].get<double>(), 0);
          if (*engine != '\0') {
            EXPECT_LT(j["decode_power_w"].get<double>(), j["prefill_power_w"].get<double>());
          }
        }
      }
    }
  }
}

TEST(CliTest, ModelPredictUnderClockAndPowerLimit) {
  auto prefill_ms = [](const std::string& extra) {
    const CommandRun run = Headroom(
        "model predict --model llama2-70b --gpu a100-80gb --tp 8 --prompt 2048 --json " + extra);
    EXPECT_EQ(run.exit_code, 0) << run.out;
    return nlohmann::json::parse(run.out)["prefill_ms"].get<double>();
  };
  const double base = prefill_ms("");
  // A batch whose decode would draw more than the GPU's 400 W runs at a lower clock, and says so.
  const std::string big =
      "model predict --model llama2-70b --gpu a100-80gb --batch 128 --prompt 128";
  const auto j = nlohmann::json::parse(Headroom(big + " --json").out);
  ASSERT_TRUE(j["held_at_default_power_limit"]["decode"].get<bool>()) << j;
  EXPECT_LE(j["decode_power_w"].get<double>(), 400 + 1e-6);
  EXPECT_LT(j["decode_step"]["sm_clock_mhz"].get<double>(), 1410);
  EXPECT_NE(Headroom(big).out.find("the GPU holds its 400 W power limit"), std::string::npos);
  EXPECT_EQ(Headroom(big + " --power-limit 250").out.find("holds its"), std::string::npos);
  EXPECT_GT(prefill_ms("--sm-clock 1110"), base * 1.1);
  EXPECT_GT(prefill_ms("--power-limit 250"), base * 1.1);
  EXPECT_EQ(Headroom("model predict --tp 3").exit_code, 2);
  EXPECT_EQ(Headroom("model predict --sm-clock 5000").exit_code, 2);
  EXPECT_EQ(Headroom("model predict --power-limit 50").exit_code, 2);
  EXPECT_EQ(Headroom("model predict --sm-clock 1200 --power-limit 300").exit_code, 2);
  EXPECT_EQ(Headroom("model predict --model gpt-9").exit_code, 2);
}

TEST(CliTest, ModelFitReportsHeldOutError) {
  const CommandRun run = Headroom("model fit --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["fits"].size(), 2u);
  for (const auto& fit : j["fits"]) {
    EXPECT_GT(fit["held_out"]["points"].get<int>(), 0);
    EXPECT_LT(fit["held_out"]["decode_mape"].get<double>(), 0.1);
  }
  EXPECT_EQ(j["excluded"].size(), 3u);
  // The power-capped H100 rows are explained by the H100 model under a cap below TDP.
  EXPECT_LT(j["capped"][0]["implied_power_limit_w"].get<double>(), 700);
}

// The engine a prediction assumes is a flag; a wrong one, or a GPU type the engine was never
// measured on, is a usage error naming both; `model validate` scores every engine.
TEST(CliTest, ModelPredictTakesAnEngineAndModelValidateScoresEveryOne) {
  auto decode_ms = [](const std::string& extra) {
    const CommandRun run = Headroom(
        "model predict --model llama2-13b --gpu a100-80gb-sxm --tp 1 --prompt 128 --output 128 "
        "--json " +
        extra);
    EXPECT_EQ(run.exit_code, 0) << run.out;
    const auto j = nlohmann::json::parse(run.out);
    EXPECT_FALSE(j["engine"].get<std::string>().empty());
    return j["decode_step_ms"].get<double>();
  };
  // lmdeploy measured 17 ms for this step; the 2023 stack SplitwiseSim profiled is much slower.
  EXPECT_LT(decode_ms("--engine lmdeploy"), 0.8 * decode_ms("--engine splitwise-sim"));
  // Without --engine: today's vLLM server, named with its version in text and JSON.
  const CommandRun plain = Headroom("model predict --model llama2-13b --gpu a100-80gb-sxm --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  const auto pj = nlohmann::json::parse(plain.out);
  EXPECT_EQ(pj["engine"], "vllm-server");
  EXPECT_FALSE(pj["engine_version"].get<std::string>().empty());
  const CommandRun text = Headroom("model predict --model llama2-13b --gpu a100-80gb-sxm");
  EXPECT_NE(text.out.find("(engine vllm-server >= "), std::string::npos) << text.out;
  EXPECT_NEAR(decode_ms("--engine lmdeploy"), 17.0, 2.0);
  const CommandRun unknown = Headroom("model predict --engine tgi-9");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.out.find("--engine: no serving engine 'tgi-9'"), std::string::npos)
      << unknown.out;
  const CommandRun h100 = Headroom("model predict --engine lmdeploy --gpu h100-80gb-sxm");
  EXPECT_EQ(h100.exit_code, 2);
  EXPECT_NE(h100.out.find("engine 'lmdeploy' has no calibration for GPU type 'h100-80gb-sxm'"),
            std::string::npos)
      << h100.out;
  EXPECT_EQ(Headroom("model predict --engine vllm --engine-file x.yaml").exit_code, 2);

  const CommandRun validate = Headroom("model validate --json");
  ASSERT_EQ(validate.exit_code, 0) << validate.out;
  std::set<std::string> engines;
  const auto report = nlohmann::json::parse(validate.out);
  bool energy_scored = false;
  for (const auto& cell : report["cells"]) {
    engines.insert(cell["engine"].get<std::string>());
    energy_scored |=
        cell["metric"] == "j_per_token" && cell["engine"] == "vllm" && cell["rows"].get<int>() > 0;
    if (cell["own_engine"].get<bool>()) {
      EXPECT_LT(cell["mape"].get<double>(), 0.2) << cell;
    }
  }
  EXPECT_TRUE(energy_scored) << validate.out;
  EXPECT_EQ(engines, (std::set<std::string>{"deepspeed-mii", "lmdeploy", "splitwise-sim", "trtllm",
                                            "vllm", "vllm-server"}));
  ASSERT_GE(report["fitted_workloads"].size(), 1u);
  EXPECT_EQ(report["fitted_workloads"][0]["dataset"], "mlenergy-v2");
  EXPECT_EQ(report["fitted_workloads"][0]["quantity"], "mean prompt tokens");
  ASSERT_EQ(report["mig_scaling"].size(), 1u);
  EXPECT_GT(report["mig_scaling"][0]["rows"].get<int>(), 50);
  EXPECT_LT(report["mig_scaling"][0]["mape"].get<double>(), 0.2);
  EXPECT_EQ(report["training"].size(), 1u);
  // One engine asked for: only its cells, and neither training nor MIG scaling.
  const CommandRun only = Headroom("model validate --engine vllm --json");
  ASSERT_EQ(only.exit_code, 0) << only.out;
  const auto only_report = nlohmann::json::parse(only.out);
  for (const auto& cell : only_report["cells"]) EXPECT_EQ(cell["engine"], "vllm");
  EXPECT_TRUE(only_report["mig_scaling"].empty());
  const CommandRun refit = Headroom("model fit --engine lmdeploy --json");
  ASSERT_EQ(refit.exit_code, 0) << refit.out;
  EXPECT_EQ(nlohmann::json::parse(refit.out)["cells"].size(), 2u);
}

bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out);
}

// A user's own profile becomes an engine calibration that predict and simulate take.
TEST(CliTest, ModelFitOnYourOwnProfileWritesAnEngineEveryCommandTakes) {
  const std::string dir = ::testing::TempDir();
  const std::string profile = dir + "/my-profile.csv";
  std::string rows = "model,gpu,tp,batch,prompt,output,ttft_ms,tpot_ms\n";
  for (int batch : {1, 2, 4, 8, 16, 32}) {
    for (int prompt : {128, 512, 1024, 2048}) {
      // A stack that streams 7B's weights at ~70% of the A100-80GB's bandwidth.
      const double tpot = 9.5 + 0.004 * batch * prompt / 128.0;
      const std::string ttft = batch == 1 ? fmt::format("{:.1f}", 8.0 + 0.065 * prompt) : "";
      rows +=
          fmt::format("llama2-7b,a100-80gb-sxm,1,{},{},128,{},{:.2f}\n", batch, prompt, ttft, tpot);
    }
  }
  ASSERT_TRUE(WriteText(profile, rows));
  const std::string engine = dir + "/my-engine.yaml";
  const CommandRun fit = Headroom(
      fmt::format("model fit --profile {} --name my-stack --write {} --json", profile, engine));
  ASSERT_EQ(fit.exit_code, 0) << fit.out;
  const auto j = nlohmann::json::parse(fit.out);
  EXPECT_EQ(j["engine"], "my-stack");
  int held_out = 0;
  for (const auto& e : j["errors"]) held_out += e["held_out_rows"].get<int>();
  EXPECT_GT(held_out, 0);
  const CommandRun predict = Headroom(fmt::format(
      "model predict --model llama2-7b --gpu a100-80gb-sxm --tp 1 --batch 1 --prompt 512 "
      "--output 128 --json --engine-file {}",
      engine));
  ASSERT_EQ(predict.exit_code, 0) << predict.out;
  const auto p = nlohmann::json::parse(predict.out);
  EXPECT_EQ(p["engine"], "my-stack");
  EXPECT_NEAR(p["decode_step_ms"].get<double>(), 9.5 + 0.004 * 4.5, 1.5);
  const CommandRun simulate =
      Headroom(fmt::format("simulate --trace azure --servers 40 --json --engine-file {}", engine));
  EXPECT_EQ(simulate.exit_code, 0) << simulate.out;
  // Bad input names the file, the line and the column.
  ASSERT_TRUE(WriteText(profile, "model,gpu,tp,batch,prompt,ttft_ms,tpot_ms\n"));
  const CommandRun missing = Headroom(fmt::format("model fit --profile {} --name x", profile));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.out.find("my-profile.csv:1: no column 'output'"), std::string::npos)
      << missing.out;
  ASSERT_TRUE(WriteText(
      profile,
      "model,gpu,tp,batch,prompt,output,ttft_ms,tpot_ms\nllama2-7b,a100,1,1,128,128,,x\n"));
  const CommandRun bad = Headroom(fmt::format("model fit --profile {} --name x", profile));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("my-profile.csv:2: column 'tpot_ms': 'x' is not a positive number"),
            std::string::npos)
      << bad.out;
}

TEST(CliTest, CharacterizeSimulatedSweepWritesResultsAndPicksASetting) {
  const std::string dir = ::testing::TempDir() + "headroom_characterize";
  const CommandRun run = Headroom(
      "characterize --model llama2-70b --gpu a100-80gb --sm-clocks 1110,1260 --power-limits 300 "
      "--prompts 256,2048 --batches 1 --slo 10% --json --out " +
      dir);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["settings"].size(), 4u);
  // The engine it assumed, with its version: the default, today's vLLM server.
  EXPECT_EQ(j["engine"].get<std::string>().rfind("vllm-server >= ", 0), 0u) << j["engine"];
  // The best setting meets the SLO and has the lowest peak of those that do.
  double best_peak = 1e9;
  std::string best;
  for (const auto& setting : j["settings"]) {
    if (setting["worst_latency_increase"].get<double>() > 0.10) continue;
    if (setting["peak_power_change"].get<double>() < best_peak) {
      best_peak = setting["peak_power_change"].get<double>();
      best = setting["setting"].get<std::string>();
    }
  }
  EXPECT_EQ(j["best_under_slo"], best);
  EXPECT_NE(best, "default");
  // Clock locks cut the peak, the reactive power cap hardly does.
  EXPECT_LT(j["settings"][1]["peak_power_change"].get<double>(), -0.15);
  EXPECT_GT(j["settings"][3]["peak_power_change"].get<double>(), -0.05);
  FILE* f = std::fopen((dir + "/results.csv").c_str(), "r");
  ASSERT_NE(f, nullptr);
  int lines = 0;
  for (int c; (c = std::fgetc(f)) != EOF;) lines += c == '\n';
  std::fclose(f);
  EXPECT_EQ(lines, 1 + 4 * 2);
  // The traced runs (the report's plots are tested in perf_report_test.cc).
  EXPECT_EQ(ReadAll(dir + "/power-trace.csv").rfind("setting,time_s,power_w\n", 0), 0u);

  const CommandRun training = Headroom(
      "characterize --workload training --model gpt-neox-20b --gpu a100-40gb --sm-clocks 1260 "
      "--json");
  ASSERT_EQ(training.exit_code, 0) << training.out;
  EXPECT_EQ(nlohmann::json::parse(training.out)["settings"].size(), 2u);
}

TEST(CliTest, CharacterizeACommandOnRealGpusRestoresTheirSettings) {
  const CommandRun run = Headroom(
      "characterize --backend nvml --sm-clocks 1110 --power-limits 300 --interval 50ms --json "
      "-- sleep 0.5",
      FakeNvmlEnv("HEADROOM_FAKE_NVML_LOAD=prefill HEADROOM_FAKE_NVML_COUNT=1"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("restored GPU 0: power limit 400 W, SM clocks unlocked"),
            std::string::npos)
      << run.out;
  const size_t json_start = run.out.find("{\n");
  ASSERT_NE(json_start, std::string::npos);
  const auto j = nlohmann::json::parse(run.out.substr(json_start));
  ASSERT_EQ(j["runs"].size(), 3u);
  const double base = j["runs"][0]["peak_power_w"].get<double>();
  EXPECT_LT(j["runs"][1]["peak_power_w"].get<double>(), base * 0.85);  // the clock lock
  EXPECT_LT(j["runs"][2]["energy_j"].get<double>(), j["runs"][0]["energy_j"].get<double>());

  const CommandRun denied = Headroom("characterize --backend nvml --power-limits 300 -- true",
                                     FakeNvmlEnv("HEADROOM_FAKE_NVML_NOT_ROOT=1"));
  EXPECT_EQ(denied.exit_code, 1);
  EXPECT_NE(denied.out.find("Insufficient Permissions"), std::string::npos) << denied.out;
  EXPECT_EQ(Headroom("characterize --sm-clocks 5000").exit_code, 2);
  EXPECT_EQ(Headroom("characterize --slo fast").exit_code, 2);
}

TEST(CliTest, HelpOnEveryLevelAndVersion) {
  for (const char* args :
       {"--help", "gpus --help", "monitor --help", "model --help", "model dvfs --help"}) {
    const CommandRun run = Headroom(args);
    EXPECT_EQ(run.exit_code, 0) << args;
    EXPECT_NE(run.out.find("Usage"), std::string::npos) << args << run.out;
  }
  const CommandRun version = Headroom("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("headroom 0.", 0), 0u) << version.out;
}

TEST(CliTest, ModelDvfsJson) {
  const CommandRun run = Headroom("model dvfs --gpu a100-80gb --sm-clocks 1410,1110 --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["clock_sweep"].size(), 2u);
  EXPECT_GT(j["clock_sweep"][1]["prefill"]["power_cut"].get<double>(), 0.15);
  EXPECT_GT(j["burst"]["capped"]["peak_w"].get<double>(), j["burst"]["cap_w"].get<double>());
  EXPECT_LE(j["burst"]["locked"]["peak_w"].get<double>(), j["burst"]["cap_w"].get<double>());
}

TEST(CliTest, CatalogDirectoryOverrideAndItsErrors) {
  const std::string source = std::getenv("HEADROOM_SOURCE_DIR");
  EXPECT_EQ(Headroom("--catalog " + source + "/data/hardware gpus --sim-count 1").exit_code, 0);
  const CommandRun missing = Headroom("--catalog /nonexistent gpus");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.out.find("/nonexistent"), std::string::npos);
}

TEST(CliTest, TraceSynthThenStatsRoundTrip) {
  const std::string path = ::testing::TempDir() + "headroom_synth_code.csv";
  const std::string args = "trace synth --from azure-code --duration 2d --seed 5 --out " + path;
  const CommandRun synth = Headroom(args);
  ASSERT_EQ(synth.exit_code, 0) << synth.out;
  ASSERT_EQ(synth.out.rfind("Wrote ", 0), 0u) << synth.out;
  const long long wrote = std::stoll(synth.out.substr(6));
  const std::string text = ReadAll(path);
  EXPECT_EQ(text.rfind("TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-13 00:00:", 0), 0u);

  const CommandRun stats = Headroom("trace stats --json " + path);
  ASSERT_EQ(stats.exit_code, 0) << stats.out;
  const auto j = nlohmann::json::parse(stats.out);
  EXPECT_EQ(j["count"].get<long long>(), wrote);
  // The code trace's mean rate is 8,819 requests over 3,435.9 s (traces/README.md); weekdays run
  // at 7 / (5 + 2 x 0.7) of the week's mean (the default weekend factor is 0.7).
  EXPECT_NEAR(static_cast<double>(wrote) / (2 * 86'400), 8'819 / 3'435.9 * 7 / 6.4, 0.05);
  EXPECT_EQ(j["start"].get<std::string>().substr(0, 13), "2023-11-13 00");
  ASSERT_EQ(j["per_day"].size(), 2u);
  EXPECT_EQ(j["per_day"][0]["weekday"], "Mon");
  EXPECT_EQ(j["per_day"][1]["date"], "2023-11-14");
  EXPECT_LE(j["prompt_tokens"]["max"].get<int>(), 7437);
  EXPECT_GT(j["per_hour_of_day"][14].get<int>(), 2 * j["per_hour_of_day"][2].get<int>());

  // The same seed writes the same bytes; the named traces work from any directory.
  const std::string again = ::testing::TempDir() + "headroom_synth_code_again.csv";
  ASSERT_EQ(
      Headroom("trace synth --from azure-code --duration 2d --seed 5 --out " + again, "cd / &&")
          .exit_code,
      0);
  EXPECT_TRUE(ReadAll(again) == text);
  const CommandRun conv = Headroom("trace stats azure-conv", "cd / &&");
  ASSERT_EQ(conv.exit_code, 0) << conv.out;
  EXPECT_NE(conv.out.find("azure-conv: 19366 requests"), std::string::npos) << conv.out;
}

TEST(CliTest, TraceBadInput) {
  struct Case {
    std::string args;
    const char* says;
  };
  const std::string out = " --out " + ::testing::TempDir() + "headroom_bad.csv";
  for (const Case& c : {Case{"trace synth --from azure-chat" + out, "neither a named trace"},
                        Case{"trace synth --duration 5" + out, "'5' is not a duration"},
                        Case{"trace synth --peak-to-trough 0.5" + out, "peak-to-trough"},
                        Case{"trace synth --rate-scale -2" + out, "rate scale"},
                        Case{"trace synth --start yesterday" + out, "--start"},
                        Case{"trace synth --out /no/such/dir/x.csv", "does not exist"},
                        Case{"trace synth", "--out is required"},
                        Case{"trace stats no-such-trace.csv", "neither a named trace"}}) {
    const CommandRun run = Headroom(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.out;
    EXPECT_NE(run.out.find(c.says), std::string::npos) << c.args << "\n" << run.out;
    EXPECT_EQ(run.out.rfind("headroom: ", 0), 0u) << run.out;
  }
}

// tests/testdata/small-row.yaml: the default scenario's structure at 4 servers, replaying the
// real 1-hour traces (fast enough for a test).
const std::string kSmallScenario = ReadAll(SMALL_ROW_SCENARIO);

std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

int CountLines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

constexpr const char* kSimulateAzure = "simulate --trace azure --servers 4 --policy polca --json";

TEST(CliTest, SimulateJsonHasTheSummary) {
  const CommandRun run = Headroom(kSimulateAzure);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["servers"], 4);
  EXPECT_EQ(j["policy"], "polca");
  EXPECT_TRUE(j["brake_events"].is_number_unsigned()) << j["brake_events"];
  const double peak = j["row_power"]["peak_frac"].get<double>();
  const double mean = j["row_power"]["mean_frac"].get<double>();
  EXPECT_GT(mean, 0);
  EXPECT_GE(peak, mean);
  for (const char* cls : {"hp", "lp"}) {
    for (const char* key : {"ttft_p50_s", "ttft_p99_s", "tbt_p50_s", "tbt_p99_s", "e2e_p50_s",
                            "e2e_p99_s", "throughput_tok_s"}) {
      ASSERT_TRUE(j[cls][key].is_number()) << cls << "." << key;
      EXPECT_GT(j[cls][key].get<double>(), 0) << cls << "." << key;
    }
    EXPECT_GE(j[cls]["ttft_p99_s"].get<double>(), j[cls]["ttft_p50_s"].get<double>()) << cls;
    EXPECT_GE(j[cls]["e2e_p99_s"].get<double>(), j[cls]["e2e_p50_s"].get<double>()) << cls;
    EXPECT_GT(j[cls]["requests"].get<int>(), 0) << cls;
  }
}

TEST(CliTest, SimulateIsDeterministicAndTheSeedMatters) {
  const CommandRun first = Headroom(kSimulateAzure);
  const CommandRun second = Headroom(kSimulateAzure);
  const CommandRun other_seed = Headroom(std::string(kSimulateAzure) + " --seed 2");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  ASSERT_EQ(other_seed.exit_code, 0) << other_seed.out;
  EXPECT_TRUE(first.out == second.out);
  EXPECT_NE(first.out, other_seed.out);
}

TEST(CliTest, SimulateOutWritesSummaryPowerAndRequests) {
  const std::string dir = ::testing::TempDir() + "headroom_simulate_out";
  ASSERT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
  const CommandRun run = Headroom(std::string(kSimulateAzure) + " --out " + dir);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  // With --json stdout is the summary itself.
  EXPECT_TRUE(ReadAll(dir + "/summary.json") == run.out);
  const auto j = nlohmann::json::parse(ReadAll(dir + "/summary.json"));

  const std::string power = ReadAll(dir + "/power.csv");
  EXPECT_EQ(power.rfind("time_s,row_w,row_frac,state\n", 0), 0u) << power.substr(0, 80);
  // One sample per 1 s metering period over the simulated span (about an hour).
  const int samples = CountLines(power) - 1;
  EXPECT_GT(samples, 3400);
  EXPECT_NEAR(samples, j["simulated_s"].get<double>(), 1);
  const auto power_lines = Lines(power);
  EXPECT_NE(power_lines.back().find(",normal"), std::string::npos) << power_lines.back();

  const std::string requests = ReadAll(dir + "/requests.csv");
  EXPECT_EQ(requests.rfind("arrival_s,priority,", 0), 0u) << requests.substr(0, 80);
  EXPECT_EQ(CountLines(requests) - 1,
            j["hp"]["requests"].get<int>() + j["lp"]["requests"].get<int>());
}

TEST(CliTest, SimulateOversubscriptionOfAScenarioFile) {
  const std::string config = WriteTempFile("headroom_small_row.yaml", kSmallScenario);
  const CommandRun run = Headroom("simulate --config " + config + " --oversubscription 50% --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["servers"], 6);
  EXPECT_EQ(j["hp_servers"], 3);
  // budget_servers: 4 of DGX-A100 at 6.5 kW.
  EXPECT_DOUBLE_EQ(j["budget_w"].get<double>(), 26'000);
}

// A day of the A100 row (tests/testdata/*-day.yaml) cut to half the row (20 servers' budget) and
// its first 16 hours, written to a temporary file: a run costs about a minute under the
// sanitizers, where the whole row's day costs three to four.
std::string HalfRowFirst16Hours(const std::string& day, const std::string& name) {
  std::ifstream in(day);
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& [from, to] : {std::pair{"  servers: 40\n", "  servers: 20\n"},
                                 std::pair{"budget_servers: 40 ", "budget_servers: 20 "},
                                 std::pair{"duration: 1d\n", "duration: 16h\n"}}) {
    EXPECT_NE(yaml.find(from), std::string::npos) << day << ": " << from;
    if (yaml.find(from) != std::string::npos)
      yaml.replace(yaml.find(from), std::string(from).size(), to);
  }
  return WriteTempFile(name, yaml);
}

// Half the A100 row at 26 servers (+30%) for 16 hours whose bursts triple the traffic: mix-aware's
// burst reserve keeps the row under its budget, where the same policy without it (no floor, a rise
// forgotten at once, no deeper caps) brakes.
TEST(CliTest, MixAwareKeepsRoomForBurstsAndTheRowUnderItsBudget) {
  const std::string config = HalfRowFirst16Hours(BURST_DAY_SCENARIO, "headroom_burst_hours.yaml");
  const auto run_day = [&config](const std::string& sets) {
    // Longer than Headroom()'s minute under the sanitizers.
    const CommandRun run = headroom::testing::RunShell(
        fmt::format("timeout 300 {} simulate --config {} --servers 26 --policy mix-aware {} --json "
                    "2>&1",
                    HEADROOM_BINARY, config, sets));
    EXPECT_EQ(run.exit_code, 0) << run.out;
    return run.exit_code == 0 ? nlohmann::json::parse(run.out) : nlohmann::json{};
  };
  const nlohmann::json with = run_day("");
  ASSERT_FALSE(with.empty());
  EXPECT_EQ(with["brake_events"], 0);
  EXPECT_EQ(with["over_budget_s"].get<double>(), 0.0);
  EXPECT_GT(with["state_seconds"]["burst"].get<double>(), 0) << "the caps deepened in a burst";
  const nlohmann::json without =
      run_day("--set mix_reserve_floor=0 --set mix_reserve_memory_s=1 --set mix_burst_rise=0.99");
  ASSERT_FALSE(without.empty());
  EXPECT_GT(without["brake_events"].get<int>(), 0);
}

// Half the A100 row at 25 servers (+25%) while the grid asks for 25% less for three hours at its
// peak (tests/testdata/shed-day.yaml): simulate says how the row met it against the
// uncapped row. It cannot: POLCA's caps and then the brake leave it over the lowered budget, and
// the table says so (issue 50).
TEST(CliTest, SimulateSaysHowTheRowMetALoweredBudget) {
  // Half the row at 25 servers for the 16 hours that hold the shed, simulated once.
  const std::string config = HalfRowFirst16Hours(SHED_DAY_SCENARIO, "headroom_shed_hours.yaml");
  const std::string dir = std::filesystem::temp_directory_path() / "headroom-shed-day-report";
  std::filesystem::remove_all(dir);
  const CommandRun text = headroom::testing::RunShell(
      fmt::format("timeout 300 {} simulate --config {} --servers 25 --policy polca --report --out "
                  "{} 2>&1",
                  HEADROOM_BINARY, config, dir));
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("LOWERED BUDGET"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("d0 13:00 for 3h"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("never"), std::string::npos) << text.out;
  std::ifstream summary(dir + "/summary.json");
  const nlohmann::json j = nlohmann::json::parse(summary, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(j.is_object()) << "summary.json";
  ASSERT_EQ(j["budget_events"].size(), 1u);
  const nlohmann::json& e = j["budget_events"][0];
  EXPECT_EQ(e["reason"], "utility demand response");
  EXPECT_DOUBLE_EQ(e["start_s"].get<double>(), 13 * 3600);
  EXPECT_DOUBLE_EQ(e["end_s"].get<double>(), 16 * 3600);
  EXPECT_NEAR(e["shed"].get<double>(), 0.25, 1e-9);
  EXPECT_DOUBLE_EQ(e["comply_within_s"].get<double>(), 60);
  EXPECT_FALSE(e["complied_in_time"].get<bool>());
  EXPECT_GT(e["over_after_deadline_s"].get<double>(), 0);
  EXPECT_GT(e["power_before_w"].get<double>(), e["budget_w"].get<double>());
  EXPECT_LT(e["mean_w"].get<double>(), e["power_before_w"].get<double>());
  EXPECT_GT(e["energy_not_drawn_j"].get<double>(), 0) << "against the uncapped row";
  EXPECT_GT(e["lp"]["e2e_p50_change_pct"].get<double>(), 0);
  EXPECT_GT(e["lp"]["requests"].get<int>(), 0);
  // The report's row power plot draws the budget in force, down from 13:00 to 16:00.
  std::ifstream plot_data(dir + "/plots/row-power.dat");
  const std::string data((std::istreambuf_iterator<char>(plot_data)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(data.find("budget in force"), std::string::npos) << data.substr(0, 400);
  EXPECT_NE(data.find("13 97.5"), std::string::npos) << "the step down at 13 h to 97.5 kW";
  std::filesystem::remove_all(dir);
  // Two windows that overlap: one error naming the file, the line and both windows.
  std::ifstream in(config);
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string window =
      "    - {daily: \"13:00\", for: 3h, shed: 25%, comply_within: 60s, reason: utility demand "
      "response}\n";
  ASSERT_NE(yaml.find(window), std::string::npos);
  yaml.insert(yaml.find(window) + window.size(),
              "    - {at: 15h, for: 1h, shed: 10%, reason: emergency}\n");
  const std::string overlapping = WriteTempFile("headroom_shed_overlap.yaml", yaml);
  const CommandRun bad = Headroom("simulate --config " + overlapping + " --servers 25");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("power.budget_schedule[1]"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("('emergency') overlaps budget window 1 ('utility demand response')"),
            std::string::npos)
      << bad.out;
}

TEST(CliTest, SimulateBadInput) {
  std::string unknown_key = kSmallScenario;
  unknown_key.replace(unknown_key.find("  servers: 4\n"), 13, "  servers: 4\n  bogus_key: 3\n");
  const std::string bad_config = WriteTempFile("headroom_bad_key.yaml", unknown_key);
  struct Case {
    std::string args;
    std::string says;
  };
  const std::string base = "simulate --trace azure --servers 4 ";
  for (const Case& c :
       {Case{base + "--policy bogus", "unknown policy 'bogus'"},
        Case{base + "--set t2=0.5", "t2: 0.5 must be > t1"},
        Case{base + "--set nokey=1", "unknown policy parameter 'nokey'"},
        Case{"simulate --config /nonexistent.yaml", "no scenario '/nonexistent.yaml'"},
        Case{"simulate --config " + bad_config, bad_config + ":6: field 'row.bogus_key'"},
        Case{"simulate --trace /nonexistent.csv", "trace '/nonexistent.csv' is neither"},
        Case{"simulate --trace azure --oversubscription abc", "--oversubscription 'abc'"}}) {
    const CommandRun run = Headroom(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.out;
    EXPECT_NE(run.out.find(c.says), std::string::npos) << c.args << "\n" << run.out;
    EXPECT_EQ(run.out.rfind("headroom: ", 0), 0u) << run.out;
    EXPECT_EQ(Lines(run.out).size(), 1u) << c.args << "\n" << run.out;
  }
}

// A training row of 4 servers for 2 minutes with one checkpoint: every mitigation weighed, the
// cheapest within the limits chosen, the table, the JSON and the report (issue 50).
constexpr const char* kSmallTrainingRow =
    "kind: training-row\n"
    "name: small-training\n"
    "row:\n"
    "  server: dgx-a100\n"
    "  servers: 4\n"
    "workload:\n"
    "  training: gpt-neox-20b\n"
    "  checkpoint_every: 60s\n"
    "  checkpoint_for: 10s\n"
    "simulation:\n"
    "  duration: 2m\n"
    "grid:\n"
    "  max_ramp_w_per_s: 3000\n"
    "  max_low_band_amplitude_w: 600\n"
    "mitigations:\n"
    "  - {kind: none}\n"
    "  - {kind: clock-lock, clock_mhz: 1110}\n"
    "  - {kind: power-smoothing, floor_pct: 70, ramp_up_w_per_s: 50, ramp_down_w_per_s: 50, "
    "ramp_down_hysteresis: 2s}\n";

TEST(CliTest, SimulateATrainingRowWeighsItsMitigations) {
  const std::string config = WriteTempFile("headroom_training_row.yaml", kSmallTrainingRow);
  const CommandRun text = Headroom("simulate --config " + config);
  ASSERT_EQ(text.exit_code, 0) << text.out;
  for (const char* says : {"mitigation", "ramp up/down kW/s", "0.1-2 Hz share, kW", "iter/h",
                           "clock-lock 1110 MHz", "smoothing 70% 50/50 W/s 2s", "within"}) {
    EXPECT_NE(text.out.find(says), std::string::npos) << says << "\n" << text.out;
  }
  const CommandRun run = Headroom("simulate --config " + config + " --servers 2 --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["kind"], "training-row");
  EXPECT_EQ(j["servers"], 2);
  ASSERT_EQ(j["mitigations"].size(), 3u);
  const auto& none = j["mitigations"][0];
  const auto& lock = j["mitigations"][1];
  const auto& smooth = j["mitigations"][2];
  EXPECT_EQ(none["throughput_change"], 0.0);
  EXPECT_LT(lock["throughput_change"].get<double>(), -0.05);
  EXPECT_LT(lock["peak_w"].get<double>(), none["peak_w"].get<double>());
  EXPECT_GT(smooth["energy_change"].get<double>(), 0);
  EXPECT_LT(smooth["ramp_up_window_w_per_s"].get<double>(),
            none["ramp_up_window_w_per_s"].get<double>() / 3);
  for (const char* key : {"iterations_per_hour", "energy_per_iteration_j", "average_w",
                          "ramp_down_window_w_per_s", "ramp_up_step_w_per_s"}) {
    EXPECT_GT(none[key].get<double>(), 0) << key;
  }
  EXPECT_GT(none["low_band"]["amplitude_w"].get<double>(), 600);
  EXPECT_FALSE(none["within_limits"].get<bool>());
  EXPECT_FALSE(none["broken"].empty());
  // Within the limits only with smoothing, at a throughput cost below the clock lock's.
  EXPECT_TRUE(smooth["within_limits"].get<bool>()) << smooth.dump(2);
  EXPECT_EQ(j["chosen"], smooth["mitigation"]["name"]);
}

TEST(CliTest, SimulateATrainingRowWritesItsReport) {
  const std::string config = WriteTempFile("headroom_training_row.yaml", kSmallTrainingRow);
  const std::string dir = ::testing::TempDir() + "headroom_training_out";
  ASSERT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
  const CommandRun run = Headroom("simulate --config " + config + " --json --report --out " + dir);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  // With --json stdout is the summary itself (and the report's path after it).
  EXPECT_EQ(run.out.rfind(ReadAll(dir + "/training-row.json"), 0), 0u) << run.out;
  const std::string power = ReadAll(dir + "/training-power.csv");
  EXPECT_EQ(power.rfind("time_s,\"none W\",\"clock-lock 1110 MHz W\",", 0), 0u)
      << power.substr(0, 80);
  EXPECT_NEAR(CountLines(power) - 1, 1200, 1);  // 2 minutes at 100 ms
  const std::string html = ReadAll(dir + "/report.html");
  for (const char* plot :
       {"data-plot=\"iterations\"", "data-plot=\"checkpoint\"", "data-plot=\"spectrum\""}) {
    EXPECT_NE(html.find(plot), std::string::npos) << plot;
  }
}

TEST(CliTest, SimulateATrainingRowRefusesBadInput) {
  std::string zero_ramp = kSmallTrainingRow;
  zero_ramp.replace(zero_ramp.find("ramp_up_w_per_s: 50"), 19, "ramp_up_w_per_s: 0");
  const std::string bad = WriteTempFile("headroom_training_zero_ramp.yaml", zero_ramp);
  const CommandRun run = Headroom("simulate --config " + bad);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find(bad + ":18: field 'mitigations[2].ramp_up_w_per_s': a ramp limit of 0"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(Lines(run.out).size(), 1u) << run.out;
  const std::string good = WriteTempFile("headroom_training_row.yaml", kSmallTrainingRow);
  const CommandRun policy = Headroom("simulate --config " + good + " --policy none");
  EXPECT_EQ(policy.exit_code, 2) << policy.out;
  EXPECT_NE(policy.out.find("--policy does not apply to a training row"), std::string::npos)
      << policy.out;
}

// A training row's plan is its mitigation (issue 50): `plan` weighs them as `simulate` does, and
// refuses the capacity search's flags.
TEST(CliTest, PlanATrainingRowChoosesItsMitigation) {
  const std::string config = WriteTempFile("headroom_training_row.yaml", kSmallTrainingRow);
  const CommandRun plan = Headroom("plan --config " + config + " --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.out;
  const CommandRun simulate = Headroom("simulate --config " + config + " --json");
  ASSERT_EQ(simulate.exit_code, 0) << simulate.out;
  const auto j = nlohmann::json::parse(plan.out);
  EXPECT_EQ(j, nlohmann::json::parse(simulate.out));
  EXPECT_EQ(j["chosen"], j["mitigations"][2]["mitigation"]["name"]);
  const CommandRun shed = Headroom("plan --config " + config + " --shed 10%:1h");
  EXPECT_EQ(shed.exit_code, 2) << shed.out;
  EXPECT_NE(shed.out.find("--shed does not apply to a training row"), std::string::npos)
      << shed.out;
}

// simulate --as-recorded: a user's request log replayed as recorded, whatever the row's size:
// every row served once (here all low priority: the log has no priority column) over the log's
// own span; without the flag the same log is scaled to the scenario's per-server rates.
TEST(CliTest, SimulateAsRecordedReplaysALogUnscaled) {
  std::string log_text = "arrival_s,prompt_tokens,output_tokens,cached_tokens\n";
  for (int i = 0; i < 40; ++i) {
    log_text += fmt::format("{},{},64,{}\n", 10 * i, 600 + 20 * i, i % 2 == 0 ? "500" : "");
  }
  const std::string log = WriteTempFile("headroom_user_log.csv", log_text);
  for (const char* servers : {"1", "4"}) {
    const CommandRun run = Headroom(fmt::format(
        "simulate --trace {} --as-recorded --servers {} --policy none --json", log, servers));
    ASSERT_EQ(run.exit_code, 0) << run.out;
    const auto j = nlohmann::json::parse(run.out);
    EXPECT_EQ(j["lp"]["requests"].get<int>(), 40) << servers;
    EXPECT_EQ(j["hp"]["requests"].get<int>(), 0) << servers;
    EXPECT_GE(j["simulated_s"].get<double>(), 390) << servers;
    EXPECT_LT(j["simulated_s"].get<double>(), 420) << servers;
  }
  const CommandRun scaled =
      Headroom(fmt::format("simulate --trace {} --servers 4 --policy none --json", log));
  ASSERT_EQ(scaled.exit_code, 0) << scaled.out;
  const auto j = nlohmann::json::parse(scaled.out);
  EXPECT_GT(j["hp"]["requests"].get<int>() + j["lp"]["requests"].get<int>(), 200);

  struct Case {
    std::string args;
    std::string says;
  };
  for (const Case& c :
       {Case{"simulate --as-recorded",
             "--as-recorded replays one request log: name it with --trace"},
        Case{"simulate --trace azure --as-recorded", "but --trace azure is two traces"},
        Case{"simulate --trace synth-week --as-recorded", "but --trace synth-week synthesizes"},
        Case{"simulate --trace /nonexistent.csv --as-recorded", "/nonexistent.csv"}}) {
    const CommandRun run = Headroom(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.out;
    EXPECT_NE(run.out.find(c.says), std::string::npos) << c.args << "\n" << run.out;
    EXPECT_EQ(Lines(run.out).size(), 1u) << c.args << "\n" << run.out;
  }
}

TEST(CliTest, PlanASmallScenario) {
  const std::string config = WriteTempFile("headroom_plan_row.yaml", kSmallScenario);
  const CommandRun run = Headroom("plan --config " + config + " --json --threads 2");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["baseline_servers"], 4);
  ASSERT_TRUE(j["policies"].is_array());
  ASSERT_EQ(j["policies"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const auto& plan = j["policies"][i];
    EXPECT_EQ(plan["policy"], i == 0 ? "none" : "polca");
    for (const char* key : {"max_servers", "extra_pct", "brake_events", "hp_p50_impact_pct"}) {
      EXPECT_TRUE(plan[key].is_number()) << plan["policy"] << " " << key << ": " << plan[key];
    }
    const int max_servers = plan["max_servers"].get<int>();
    EXPECT_GE(max_servers, 0);
    EXPECT_LE(max_servers, 6);  // 4 servers + max_extra_pct 50
  }
  // Uncapped, the provisioned row peaks below its budget (~92%) and a fifth server goes over.
  EXPECT_EQ(j["policies"][0]["max_servers"], 4);
  // The engine the plan assumed (the scenario names the 2023 stack, which has no version).
  EXPECT_EQ(j["inputs"]["engine"], "splitwise-sim");

  const CommandRun table = Headroom("plan --config " + config + " --threads 2");
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("serving engine: splitwise-sim\n"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("servers"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("\nnone "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("\npolca "), std::string::npos) << table.out;
}

// The rows without caps fit 11 servers on the planning week (seed 1); the first unseen week (seed
// 1001) brakes there, so the weekly risk bounded from the file's 2 unseen weeks (1 of 2: at most
// 97.5% at 95%) is above the file's 80%, and the plan lowers them to 10 (0 of 2: at most 77.6%)
// and says why (tests/testdata).
TEST(CliTest, PlanLowersAnAnswerThatFailsOnAnUnseenWeek) {
  const std::string plan = "plan --config " + std::string(SMALL_SYNTH_ROW_SCENARIO) +
                           " --threads 2 --json --policies none,brake-only";
  const CommandRun search_only = Headroom(plan + " --validate 0");
  ASSERT_EQ(search_only.exit_code, 0) << search_only.out;
  const auto s = nlohmann::json::parse(search_only.out);
  EXPECT_EQ(s["validation_weeks"], 0);
  EXPECT_EQ(s["week_seeds"], nlohmann::json::array({1}));
  EXPECT_EQ(s["policies"][1]["max_servers"], 11);
  EXPECT_EQ(s["policies"][1]["validation_failure"], "");

  const CommandRun run = Headroom(plan);  // the file's 2 unseen weeks
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["planning_weeks"], 1);
  EXPECT_EQ(j["validation_weeks"], 2);
  EXPECT_EQ(j["week_seeds"], nlohmann::json::array({1, 1001, 1002}));
  const auto& brake_only = j["policies"][1];
  EXPECT_EQ(brake_only["policy"], "brake-only");
  EXPECT_EQ(brake_only["searched_servers"], 11);
  EXPECT_EQ(brake_only["max_servers"], 10);
  EXPECT_EQ(brake_only["validated_weeks"], 2);
  EXPECT_EQ(j["max_weekly_risk"], 0.8);
  EXPECT_EQ(j["confidence"], 0.95);
  const std::string why =
      "1 of 2 unseen weeks had a power event (weekly risk at most 97.5% at 95%, above 80%), "
      "first unseen week 1 (seed 1001): 1 brake event";
  EXPECT_EQ(brake_only["validation_failure"], "at 11 servers " + why);
  EXPECT_EQ(brake_only["limit"], "11 servers: " + why);
  // The risk table: at 10, 0 of 2 unseen weeks; at 11, 1 of 2, each with both bounds.
  std::map<int, nlohmann::json> risk;  // brake-only's, by servers
  for (const auto& r : j["risk"]) {
    if (r["policy"] == "brake-only") risk[r["servers"].get<int>()] = r;
  }
  ASSERT_TRUE(risk.count(10) && risk.count(11)) << j["risk"];
  EXPECT_EQ(risk[10]["unseen_weeks"], 2);
  EXPECT_EQ(risk[10]["unseen_weeks_with_power_event"], 0);
  EXPECT_NEAR(risk[10]["unseen_risk_upper"].get<double>(), 0.7764, 1e-4);
  EXPECT_EQ(risk[10]["unseen_risk_lower"], 0.0);
  EXPECT_EQ(risk[11]["unseen_weeks_with_power_event"], 1);
  EXPECT_NEAR(risk[11]["unseen_risk_upper"].get<double>(), 0.9747, 1e-4);
  EXPECT_NEAR(risk[11]["unseen_risk_lower"].get<double>(), 0.0253, 1e-4);
  // The verdict is the runs': at 11 servers the unseen week 1 braked and the planning week did
  // not; at 10 every week ran to its end without one.
  std::map<std::pair<int, int>, nlohmann::json> runs;  // brake-only's, by (servers, week)
  for (const auto& r : j["runs"]) {
    if (r["policy"] == "brake-only") runs[{r["servers"].get<int>(), r["week"].get<int>()}] = r;
  }
  const auto at = [&runs](int servers, int week) { return runs[std::pair{servers, week}]; };
  ASSERT_TRUE(runs.count(std::pair{11, 0}) && runs.count(std::pair{11, 1})) << j["runs"];
  EXPECT_EQ(at(11, 0)["brake_events"], 0);
  EXPECT_GE(at(11, 1)["brake_events"].get<int>(), 1);
  for (int week = 1; week <= 2; ++week) {
    ASSERT_TRUE(runs.count(std::pair{10, week})) << week;
    EXPECT_EQ(at(10, week)["brake_events"], 0) << week;
    EXPECT_EQ(at(10, week)["stopped_early"], false) << week;
  }
  // The same seeds, the same plan.
  EXPECT_EQ(Headroom(plan).out, run.out);

  const CommandRun table =
      Headroom("plan --config " + std::string(SMALL_SYNTH_ROW_SCENARIO) + " --threads 2");
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("a count fits only if its weekly risk of a power event, bounded from "
                           "2 unseen weeks (seeds 1001 to 1002) at 95% confidence, is at most 80%"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("0/2, <=77.6%, was 11"), std::string::npos) << table.out;
  // The risk per count judged on the unseen weeks: the answer (starred) and one server past it.
  EXPECT_NE(table.out.find("WEEKLY RISK (95%)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("brake-only      10*             2             0            0   "
                           "0.0%      0.0% to 77.6%"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("2.5% to 97.5%"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("safe on 1 planning week; 0 power events in 2 unseen weeks, weekly "
                           "risk at most 77.6% (95%)"),
            std::string::npos)
      << table.out;
}

// With seed 1000 the planning weeks are seeds 1000 and 1001: the second brakes at 11.
TEST(CliTest, PlanKeepsACountOnlyIfEveryPlanningWeekKeepsTheSlo) {
  const CommandRun run =
      Headroom("plan --config " + std::string(SMALL_SYNTH_ROW_SCENARIO) +
               " --threads 2 --json --policies brake-only --weeks 2 --validate 0 --seed 1000");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["week_seeds"], nlohmann::json::array({1000, 1001}));
  EXPECT_EQ(j["policies"][0]["max_servers"], 10);
  EXPECT_EQ(j["policies"][0]["limit"], "11 servers: planning week 2 (seed 1001): 1 brake event");
}

// brake-only keeps 11 servers on every week of the file (seed 1 and the unseen 1001 and 1002
// without the file's validation) until a stress case of bursts three times the rate, on planning
// week 1's seed, brakes there: the count is rejected and the stress case named.
TEST(CliTest, PlanRejectsACountAStressCaseBrakes) {
  const std::string plan = "plan --config " + std::string(SMALL_SYNTH_ROW_SCENARIO) +
                           " --threads 2 --json --policies brake-only --validate 0";
  const CommandRun calm = Headroom(plan);
  ASSERT_EQ(calm.exit_code, 0) << calm.out;
  EXPECT_EQ(nlohmann::json::parse(calm.out)["policies"][0]["max_servers"], 11);
  const CommandRun run = Headroom(plan + " --stress bursts:burst_size=3");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["stress_cases"], nlohmann::json::array({"bursts (bursts x3)"}));
  EXPECT_EQ(j["week_seeds"], nlohmann::json::array({1, 1}));
  EXPECT_EQ(j["policies"][0]["max_servers"], 10);
  EXPECT_EQ(j["policies"][0]["limit"],
            "11 servers: stress bursts (bursts x3; seed 1): 1 brake event");
  bool stressed_brake = false;
  for (const auto& r : j["runs"]) {
    if (r["policy"] == "brake-only" && r["servers"] == 11 && r["week"] == 1) {
      stressed_brake = r["brake_events"].get<int>() >= 1;
    }
  }
  EXPECT_TRUE(stressed_brake) << j["runs"];
  const CommandRun twice = Headroom(plan + " --stress a:load=1.1 --stress a:load=1.2");
  EXPECT_EQ(twice.exit_code, 2) << twice.out;
  EXPECT_NE(twice.out.find("stress case 'a' is given twice"), std::string::npos) << twice.out;
}

// The report's row power is the plan's own run of the chosen policy at its capacity, on the
// planning week where it peaked highest: no simulation more, and the same peak as the table's.
TEST(CliTest, PlanOutKeepsTheChosenPolicysRowPowerFromItsOwnRun) {
  const std::string dir = ::testing::TempDir() + "headroom_plan_power";
  ASSERT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
  const CommandRun run = Headroom("plan --config " + std::string(SMALL_SYNTH_ROW_SCENARIO) +
                                  " --threads 2 --json --policies none,brake-only --validate 0 "
                                  "--weeks 2 --out " +
                                  dir);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto printed = nlohmann::json::parse(run.out);
  std::ifstream file(dir + "/plan.json");
  const auto j = nlohmann::json::parse(file);
  EXPECT_EQ(j["simulations"], printed["simulations"]);
  const auto& chosen = j["policies"][1];
  ASSERT_EQ(chosen["policy"], "brake-only");
  const auto& power = j["row_power"];
  EXPECT_EQ(power["policy"], "brake-only");
  EXPECT_EQ(power["servers"], chosen["max_servers"]);
  EXPECT_EQ(power["window_s"], 2.0);  // an hour in 2,000 windows of whole 1 s periods
  std::ifstream csv(dir + "/row-power.csv");
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "start_s,mean_w,max_w");
  double peak_w = 0;
  int windows = 0;
  while (std::getline(csv, line)) {
    peak_w = std::max(peak_w, std::stod(line.substr(line.rfind(',') + 1)));
    ++windows;
  }
  EXPECT_GE(windows, 1800);
  EXPECT_LE(windows, 2100);
  EXPECT_NEAR(peak_w / power["budget_w"].get<double>(), chosen["peak_frac"].get<double>(), 1e-5);
}

// Demand response at the answers (issue 50), on the small row's hour (tests/testdata): asked at
// the hour's peak to shed 10% within 60 s for 20 minutes, power-cap's answer holds it without a
// brake; brake-only's cannot, for it has nothing but the brake, and the plan says so and why.
TEST(CliTest, PlanShedSaysWhichAnswersHoldADemandResponseAndWhyNot) {
  const std::string dir = std::filesystem::temp_directory_path() / "headroom-plan-shed";
  std::filesystem::remove_all(dir);
  const std::string plan = "plan --config " + std::string(SMALL_SYNTH_ROW_SCENARIO) +
                           " --policies none,brake-only,power-cap --validate 0 --threads 2";
  const CommandRun run = Headroom(plan + " --shed 10%:20m --json --report --out " + dir);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto j = nlohmann::json::parse(run.out.substr(0, run.out.rfind("}\n") + 1));
  const nlohmann::json& dr = j["demand_response"];
  EXPECT_DOUBLE_EQ(dr["shed"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(dr["length_s"].get<double>(), 1200);
  EXPECT_DOUBLE_EQ(dr["comply_within_s"].get<double>(), 60);
  ASSERT_EQ(dr["policies"].size(), 2u) << dr.dump(1);
  const nlohmann::json& brake_only = dr["policies"][0];
  EXPECT_EQ(brake_only["policy"], "brake-only");
  EXPECT_FALSE(brake_only["holds"].get<bool>());
  EXPECT_NE(brake_only["why_not"].get<std::string>().find("brake"), std::string::npos)
      << brake_only["why_not"];
  EXPECT_EQ(brake_only["largest_held"].get<double>(), 0);
  const nlohmann::json& power_cap = dr["policies"][1];
  EXPECT_EQ(power_cap["policy"], "power-cap");
  EXPECT_TRUE(power_cap["holds"].get<bool>()) << power_cap.dump(1);
  EXPECT_GE(power_cap["largest_held"].get<double>(), 10);
  ASSERT_EQ(power_cap["weeks"].size(), 1u);
  const nlohmann::json& week = power_cap["weeks"][0];
  EXPECT_TRUE(week["held"].get<bool>());
  EXPECT_LE(week["complied_after_s"].get<double>(), 60);
  EXPECT_EQ(week["brake_events"], 0);
  EXPECT_EQ(week["over_after_deadline_s"].get<double>(), 0);
  EXPECT_NEAR(week["budget_w"].get<double>(), 0.9 * 65000, 1);
  EXPECT_GT(week["uncapped_mean_w"].get<double>(), 0);
  EXPECT_FALSE(dr["power"].empty()) << "the event's row power, for the report's plot";

  std::ifstream html(dir + "/report.html");
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<h2>Demand response</h2>"), std::string::npos);
  EXPECT_NE(page.find("Row power through a 10% shed"), std::string::npos);
  // headroom report DIR reads plan.json's demand response back and draws the same page.
  const CommandRun again = Headroom("report " + dir);
  ASSERT_EQ(again.exit_code, 0) << again.out;

  const CommandRun text = Headroom(plan + " --shed 10%:20m");
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("Demand response: shed 10% of 65 kW (to 58.5 kW) within 60 s"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("brake-only at 11 servers cannot hold 10% for 20m within 60 s"),
            std::string::npos)
      << text.out;
  // A bad --shed is refused before the plan runs.
  const CommandRun bad = Headroom(plan + " --shed 10%");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--shed '10%': two or three fields"), std::string::npos) << bad.out;
  EXPECT_EQ(bad.out.find("simulations"), std::string::npos) << bad.out;
}

TEST(CliTest, PlanWeeksBadInput) {
  std::string zero_weeks = ReadAll(SMALL_SYNTH_ROW_SCENARIO);
  zero_weeks.replace(zero_weeks.find("  weeks: 1\n"), 11, "  weeks: 0\n");
  const std::string bad_file = WriteTempFile("headroom_zero_weeks.yaml", zero_weeks);
  std::string bad_risk = ReadAll(SMALL_SYNTH_ROW_SCENARIO);
  bad_risk.replace(bad_risk.find("  weeks: 1\n"), 11, "  weeks: 1\n  risk_beyond: -2\n");
  const std::string bad_risk_file = WriteTempFile("headroom_bad_risk.yaml", bad_risk);
  const std::string synth = "plan --config " + std::string(SMALL_SYNTH_ROW_SCENARIO);
  struct Case {
    std::string args;
    std::string says;
  };
  for (const Case& c :
       {Case{synth + " --weeks 0", "--weeks 0: expected 1 to 100 weeks"},
        Case{synth + " --validate 10001", "--validate 10001: expected 0 to 10000 weeks"},
        Case{synth + " --validate 1",
             "--validate 1: 1 unseen week cannot bound the weekly risk at or below 80% at 95% "
             "confidence, even all clean: 2 would (or 0: no risk bound)"},
        Case{synth + " --max-weekly-risk 1%",
             "plan.validate_weeks 2: 2 unseen weeks cannot bound the weekly risk at or below 1% "
             "at 95% confidence, even all clean: 299 would"},
        Case{synth + " --max-weekly-risk 0", "--max-weekly-risk '0': expected a percentage"},
        Case{synth + " --max-weekly-risk 100%", "--max-weekly-risk '100%': expected a percentage"},
        Case{synth + " --confidence 50%", "--confidence '50%': expected a percentage between 50%"},
        Case{synth + " --confidence high", "--confidence 'high': expected a percentage"},
        Case{"plan --config " + std::string(SMALL_ROW_SCENARIO) + " --max-weekly-risk 1%",
             "a weekly risk, need a synthesized one"},
        Case{"plan --config " + std::string(SMALL_ROW_SCENARIO) + " --weeks 2",
             "the workload 'scenario' replays real traces"},
        Case{"plan --config " + bad_file, bad_file + ":44: field 'plan.weeks'"},
        Case{synth + " --risk-beyond 101", "--risk-beyond 101: expected 0 to 100 servers"},
        Case{"plan --config " + bad_risk_file, bad_risk_file + ":45: field 'plan.risk_beyond'"}}) {
    const CommandRun run = Headroom(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.out;
    EXPECT_NE(run.out.find(c.says), std::string::npos) << c.args << "\n" << run.out;
    EXPECT_EQ(Lines(run.out).size(), 1u) << c.args << "\n" << run.out;
  }
}

// check-verdict --exact-from takes each case's exact week from an earlier check's JSON (so other
// verdict settings are checked at the verdict's cost) and says how many; a check of another
// scenario or a malformed one is one error naming the file.
TEST(CliTest, CheckVerdictTakesTheExactWeeksOfAnEarlierCheck) {
  const std::string check = "check-verdict --config " + std::string(SMALL_SYNTH_ROW_SCENARIO) +
                            " --policies none,polca --weeks 1 --no-stress --json --servers ";
  const CommandRun first = Headroom(check + "10-11");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const auto exact = nlohmann::json::parse(first.out);
  EXPECT_EQ(exact["exact_read"], 0);
  const std::string file = WriteTempFile("headroom_exact_weeks.json", first.out);
  const CommandRun again = Headroom(check + "10-11 --warmup 1m --exact-from " + file);
  ASSERT_EQ(again.exit_code, 0) << again.out;
  const auto read = nlohmann::json::parse(again.out);
  ASSERT_EQ(read["cases"].size(), 4u);
  EXPECT_EQ(read["exact_read"], 4);
  EXPECT_EQ(read["exact_events"], exact["exact_events"]);
  for (std::size_t i = 0; i < 4; ++i) {
    for (const char* key : {"exact_event", "exact_peak_frac", "exact_cpu_s"}) {
      EXPECT_EQ(read["cases"][i][key], exact["cases"][i][key]) << i << " " << key;
    }
  }
  // A case the file lacks is simulated: one count more.
  const CommandRun wider = Headroom(check + "10-12 --exact-from " + file);
  ASSERT_EQ(wider.exit_code, 0) << wider.out;
  EXPECT_EQ(nlohmann::json::parse(wider.out)["exact_read"], 4);
  auto other = exact;
  other["scenario"] = "polca-h100-row";
  const std::string other_file = WriteTempFile("headroom_exact_other.json", other.dump());
  auto broken = exact;
  broken["cases"][1]["servers"] = "ten";
  const std::string broken_file = WriteTempFile("headroom_exact_broken.json", broken.dump());
  for (const auto& [path, says] :
       {std::pair{other_file,
                  "--exact-from " + other_file + ": a check of scenario 'polca-h100-row', not"},
        std::pair{broken_file, broken_file + ": field 'cases[1].servers'"}}) {
    const CommandRun run = Headroom(check + "10-11 --exact-from " + path);
    EXPECT_EQ(run.exit_code, 2) << run.out;
    EXPECT_NE(run.out.find(says), std::string::npos) << run.out;
    EXPECT_EQ(Lines(run.out).size(), 1u) << run.out;
  }
}

// `headroom study FILE`: each plan of the file under each grid setting, planned as `plan` plans
// it alone, compared in one table, study.json and report.html (which `headroom report` rebuilds).
TEST(CliTest, AStudyPlansEachOfItsPlansAsPlanDoes) {
  const std::string dir = ::testing::TempDir() + "headroom_study";
  std::filesystem::remove_all(dir);
  // Four plans: longer than Headroom()'s minute under the sanitizers on a busy machine.
  const CommandRun run = headroom::testing::RunShell(fmt::format(
      "timeout 240 {} study {} --out {} --report --json 2>&1", HEADROOM_BINARY, SMALL_STUDY, dir));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto study = nlohmann::json::parse(run.out.substr(0, run.out.rfind("}") + 1));
  ASSERT_EQ(study["plans"].size(), 4u);
  EXPECT_EQ(study["plans"][3]["name"], "polca slo.lp_p50_e2e_pct=20");
  const CommandRun alone = Headroom("plan --config " + std::string(SMALL_SYNTH_ROW_SCENARIO) +
                                    " --policies none,polca --slo lp_p50_e2e_pct=20 --json");
  ASSERT_EQ(alone.exit_code, 0) << alone.out;
  const auto plan = nlohmann::json::parse(alone.out);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(study["plans"][3]["policies"][k]["max_servers"], plan["policies"][k]["max_servers"])
        << k;
  }
  const std::string plan_dir = dir + "/" + study["plans"][3]["dir"].get<std::string>();
  EXPECT_EQ(nlohmann::json::parse(ReadAll(plan_dir + "/plan.json"))["policies"], plan["policies"]);
  std::filesystem::remove(dir + "/report.html");
  const CommandRun again = Headroom("report " + dir);
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.html"));
}

TEST(CliTest, AStudyFilesMistakesAreOneErrorNamingTheField) {
  const std::string scenario = SMALL_SYNTH_ROW_SCENARIO;
  struct Case {
    std::string text, says;
  };
  for (const Case& c :
       {Case{"plans: []\n", "field 'name'"},
        Case{"name: s\nplans: []\n", "field 'plans': expected at least one plan"},
        Case{"name: s\nplanz: []\n", "planz"},
        Case{"name: s\nplans:\n  - {name: a, scenario: " + scenario +
                 "}\n  - {name: a, scenario: " + scenario + "}\n",
             "field 'plans[1].name': given twice"},
        Case{
            "name: s\nplans:\n  - {name: a, scenario: " + scenario + "}\ngrid:\n  budget: [1, 2]\n",
            "field 'grid.budget': expected slo.KEY"},
        Case{"name: s\nplans:\n  - {name: a, scenario: " + scenario + "}\ngrid:\n  seed: [x]\n",
             "'x': expected a seed"},
        Case{"name: s\nplans:\n  - {name: a, scenario: " + scenario + ", slo: {lp_p50: 3}}\n",
             "plan 'a': "}}) {
    const std::string file = WriteTempFile("headroom_bad_study.yaml", c.text);
    const CommandRun run = Headroom("study " + file);
    EXPECT_EQ(run.exit_code, 2) << c.text << "\n" << run.out;
    EXPECT_NE(run.out.find(c.says), std::string::npos) << c.text << "\n" << run.out;
    EXPECT_EQ(Lines(run.out).size(), 1u) << run.out;
  }
}

TEST(CliTest, ReportNamesWhatIsMissing) {
  const std::string dir = ::testing::TempDir() + "headroom_report_errors";
  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir + "/empty").c_str()), 0);
  struct Case {
    std::string args;
    std::string says;
  };
  for (const Case& c : {Case{"report " + dir + "/nothing", dir + "/nothing: no such directory"},
                        Case{"report " + dir + "/empty",
                             dir + "/empty: holds none of study.json, plan.json, mig-plan.json"}}) {
    const CommandRun run = Headroom(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.out;
    EXPECT_NE(run.out.find(c.says), std::string::npos) << c.args << "\n" << run.out;
    EXPECT_EQ(Lines(run.out).size(), 1u) << run.out;
  }
  std::ofstream(dir + "/empty/plan.json") << "{\"baseline_servers\": 4}";
  const CommandRun bad = Headroom("report " + dir + "/empty");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find(dir + "/empty/plan.json: field 'baseline' is missing"), std::string::npos)
      << bad.out;
}

}  // namespace
