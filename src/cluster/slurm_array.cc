#include "cluster/slurm_array.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "core/files.h"
#include "core/parse.h"
#include "core/subprocess.h"

namespace headroom::cluster {
namespace {

// Slurm's commands answer in well under this; a controller that does not is down.
constexpr core::Duration kCommandTimeout = std::chrono::seconds(60);
constexpr std::size_t kMaxCommandOutput = 1 << 20;
// A job just submitted may be missing from squeue for a moment; one gone for longer has ended
// and aged out of the controller's memory (MinJobAge): its tasks' results decide.
constexpr int kPollsBeforeGone = 5;
// How long squeue may fail to answer before the round fails (a controller restarting answers
// again within seconds).
constexpr core::Duration kSilenceLimit = std::chrono::minutes(5);
// A task that fails this often fails for a reason of its own, not the cluster's.
constexpr int kMaxRetries = 100;

// The state of a task whose launch failed and that Slurm holds pending until someone releases
// it: over, as far as the round is concerned.
constexpr const char* kHeld = "HELD";

// The states in which a task is over (squeue %T); every other one is on its way.
const std::set<std::string>& FinalStates() {
  static const auto* states = new std::set<std::string>{
      "COMPLETED", "FAILED",        "CANCELLED", "TIMEOUT", "PREEMPTED",    "NODE_FAIL",
      "BOOT_FAIL", "OUT_OF_MEMORY", "DEADLINE",  "REVOKED", "SPECIAL_EXIT", kHeld};
  return *states;
}

bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && access(fmt::format("{}/{}", dir, program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::string ShellQuoted(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A word of the command with each kTaskIndex the task's index ($SLURM_ARRAY_TASK_ID).
std::string ScriptWord(const std::string& word) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t at; (at = word.find(kTaskIndex, from)) != std::string::npos;) {
    out += ShellQuoted(word.substr(from, at - from)) + "\"$SLURM_ARRAY_TASK_ID\"";
    from = at + std::string_view(kTaskIndex).size();
  }
  return out + ShellQuoted(word.substr(from));
}

core::Result<std::string> WriteScript(const ArrayRound& round) {
  std::string script =
      "#!/bin/sh\n# One task of a headroom job array: its index is SLURM_ARRAY_TASK_ID.\nexec";
  for (const std::string& word : round.command) script += " " + ScriptWord(word);
  const std::string path = round.dir + "/task.sh";
  HEADROOM_RETURN_IF_ERROR(core::WriteFileAtomically(path, script + "\n", 0755));
  return path;
}

core::Result<core::CapturedRun> Command(const std::vector<std::string>& argv) {
  static core::SystemClock clock;
  return core::RunCaptured(argv, kCommandTimeout, kMaxCommandOutput, clock, /*with_stderr=*/true);
}

// The last line of a command's output, for an error.
std::string LastLine(std::string_view text) {
  const std::string_view trimmed = core::Trim(text);
  const std::size_t nl = trimmed.rfind('\n');
  return std::string(nl == std::string_view::npos ? trimmed : trimmed.substr(nl + 1));
}

// A command's whole (short) answer on one line: Slurm's errors come a few lines at a time, the
// first naming what it refused.
std::string OneLine(std::string_view text) {
  return fmt::format("{}", fmt::join(core::Split(core::Trim(text), '\n'), "; "));
}

std::string TaskLog(const ArrayRound& round, int task) {
  return fmt::format("{}/task-{}.log", round.dir, task);
}

// "0-15" for every task, "3,7" for a few, with the throttle.
std::string ArraySpec(const std::vector<int>& tasks, int total, int at_once) {
  std::string spec = static_cast<int>(tasks.size()) == total && total > 0
                         ? fmt::format("0-{}", total - 1)
                         : fmt::format("{}", fmt::join(tasks, ","));
  return at_once > 0 ? fmt::format("{}%{}", spec, at_once) : spec;
}

core::Result<std::string> Submit(const SlurmOptions& o, const ArrayRound& round,
                                 const std::string& script, const std::vector<int>& tasks) {
  std::vector<std::string> argv = {"sbatch",
                                   "--parsable",
                                   "--job-name=" + round.name,
                                   "--array=" + ArraySpec(tasks, round.tasks, o.tasks_at_once),
                                   "--ntasks=1",
                                   "--output=" + round.dir + "/task-%a.log",
                                   "--chdir=" + round.dir};
  if (!o.partition.empty()) argv.push_back("--partition=" + o.partition);
  if (!o.account.empty()) argv.push_back("--account=" + o.account);
  if (!o.time_limit.empty()) argv.push_back("--time=" + o.time_limit);
  argv.insert(argv.end(), o.sbatch_args.begin(), o.sbatch_args.end());
  argv.push_back(script);
  HEADROOM_ASSIGN_OR_RETURN(const core::CapturedRun run, Command(argv));
  const std::string id = run.output.substr(0, run.output.find_first_not_of("0123456789"));
  if (run.exit_code != 0 || id.empty()) {
    return core::Fail(core::Error::Unavailable(fmt::format(
        "sbatch of {} failed (exit {}): {}", round.name, run.exit_code, OneLine(run.output))));
  }
  return id;
}

// The tasks squeue lists for job `id`, by index, with their state (kHeld for a pending one that
// Slurm holds: "launch failed requeued held", JobHeldAdmin, JobHeldUser).
// kUnavailable when squeue could not answer (the controller busy or down): nothing is known
// then.
core::Result<std::map<int, std::string>> TaskStates(const std::string& id) {
  std::map<int, std::string> out;
  HEADROOM_ASSIGN_OR_RETURN(const core::CapturedRun run, Command({"squeue", "-h", "-r", "-t", "all",
                                                                  "-j", id, "-o", "%K %T %r"}));
  // A job the controller no longer knows has ended and aged out (MinJobAge).
  if (run.exit_code != 0) {
    if (run.output.find("Invalid job id") != std::string::npos) return out;
    return core::Fail(core::Error::Unavailable(
        fmt::format("squeue -j {} (exit {}): {}", id, run.exit_code, OneLine(run.output))));
  }
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    int task = 0;
    std::string state, reason;
    if (!(fields >> task >> state)) continue;
    std::getline(fields, reason);
    const bool held =
        reason.find("held") != std::string::npos || reason.find("Held") != std::string::npos;
    out[task] = state == "PENDING" && held ? std::string(kHeld) : state;
  }
  return out;
}

void Cancel(const std::vector<std::string>& jobs) {
  if (jobs.empty()) return;
  std::vector<std::string> argv = {"scancel"};
  argv.insert(argv.end(), jobs.begin(), jobs.end());
  (void)Command(argv);  // best effort: a job already over is no error worth stopping for
}

// Waits until every task of `tasks` in job `id` is over (or gone); their last states.
core::Result<std::map<int, std::string>> AwaitTasks(const SlurmOptions& o, const std::string& id,
                                                    const std::vector<int>& tasks,
                                                    const std::atomic<bool>* stop) {
  core::SystemClock clock;
  std::map<int, std::string> last;
  std::optional<core::TimePoint> silent_since;  // since squeue last answered
  // Short tasks end within a second of their submission: look soon, then less often.
  core::Duration wait = std::min<core::Duration>(o.poll, std::chrono::milliseconds(100));
  for (int unseen_polls = 0;; wait = std::min<core::Duration>(o.poll, 2 * wait)) {
    if (stop && stop->load()) return core::Fail(core::Error::Cancelled("stopped"));
    const core::Result<std::map<int, std::string>> answer = TaskStates(id);
    if (!answer) {
      // A controller that does not answer for a while is not yet a failed round.
      if (!silent_since) silent_since = clock.Now();
      if (clock.Now() - *silent_since > kSilenceLimit) {
        return core::Fail(answer.error().WithContext(
            fmt::format("no answer from Slurm for {}", core::FormatDuration(kSilenceLimit))));
      }
      clock.SleepUntil(clock.Now() + o.poll, stop);
      continue;
    }
    silent_since.reset();
    const std::map<int, std::string>& now = *answer;
    unseen_polls = now.empty() ? unseen_polls + 1 : 0;
    bool over = true;
    for (int t : tasks) {
      const auto it = now.find(t);
      if (it != now.end()) last[t] = it->second;
      const bool done =
          it != now.end() ? FinalStates().count(it->second) > 0 : unseen_polls >= kPollsBeforeGone;
      over = over && done;
    }
    if (over) return last;
    clock.SleepUntil(clock.Now() + wait, stop);
  }
}

}  // namespace

core::Status CheckSlurm(const SlurmOptions& o) {
  for (const char* program : {"sbatch", "squeue", "scancel"}) {
    if (!OnPath(program)) {
      return core::Fail(core::Error::FailedPrecondition(fmt::format(
          "{}: not found on the PATH (the Slurm executor submits with sbatch, waits with "
          "squeue and cancels with scancel)",
          program)));
    }
  }
  std::error_code ec;
  if (o.work_dir.empty() || !std::filesystem::path(o.work_dir).is_absolute() ||
      !std::filesystem::is_directory(o.work_dir, ec) || access(o.work_dir.c_str(), W_OK) != 0) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "--work-dir '{}': expected an existing, writable directory, by its absolute path, that "
        "the cluster's nodes share",
        o.work_dir)));
  }
  if (o.tasks_at_once < 0) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--slurm-tasks-at-once {}: expected >= 0 (0: no limit)", o.tasks_at_once)));
  }
  if (o.retries < 0 || o.retries > kMaxRetries) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--slurm-retries {}: expected >= 0 and at most {}", o.retries, kMaxRetries)));
  }
  return core::Ok();
}

core::Status RunArrayRound(const SlurmOptions& o, const ArrayRound& round,
                           const std::atomic<bool>* stop) {
  std::error_code ec;
  std::filesystem::create_directories(round.dir, ec);
  if (ec) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("{}: cannot create the round's directory: {}", round.dir, ec.message())));
  }
  HEADROOM_ASSIGN_OR_RETURN(const std::string script, WriteScript(round));
  std::vector<int> pending(static_cast<std::size_t>(round.tasks));
  for (int t = 0; t < round.tasks; ++t) pending[static_cast<std::size_t>(t)] = t;
  std::vector<std::string> jobs;
  for (int attempt = 0; !pending.empty(); ++attempt) {
    auto id = Submit(o, round, script, pending);
    if (!id) {
      Cancel(jobs);
      return core::Fail(id.error());
    }
    jobs.push_back(*id);
    auto states = AwaitTasks(o, *id, pending, stop);
    if (!states) {
      Cancel(jobs);
      return core::Fail(states.error());
    }
    // A held task stays pending for ever: its job goes, and the task is tried again.
    if (std::any_of(states->begin(), states->end(),
                    [](const auto& s) { return s.second == kHeld; })) {
      Cancel({*id});
    }
    std::vector<int> failed;
    for (int t : pending) {
      const auto it = states->find(t);
      const std::string state = it == states->end() ? "no longer listed" : it->second;
      const core::Status result = round.check(t);
      if (state == "COMPLETED" && result) continue;
      if (state == "no longer listed" && result) continue;  // ended and aged out: it did
      if (attempt < o.retries) {
        failed.push_back(t);
        continue;
      }
      Cancel(jobs);
      const bool missing = !result && result.error().code() == core::Code::kNotFound;
      return core::Fail(core::Error::Unavailable(fmt::format(
          "task {} of {} gave no result in {} tries (last: {} in job {}; {}; its log {} ends: "
          "'{}'){}",
          t, round.name, attempt + 1, state, *id,
          result ? std::string("its result was there") : result.error().message(),
          TaskLog(round, t), LastLine(core::ReadFile(TaskLog(round, t)).value_or("")),
          missing ? fmt::format("; is {} shared with the nodes, at the same path?", o.work_dir)
                  : "")));
    }
    pending = std::move(failed);
  }
  return core::Ok();
}

}  // namespace headroom::cluster
