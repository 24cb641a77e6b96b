#include "service/row_meter.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/parse.h"
#include "service/http_client.h"

extern char** environ;

namespace headroom::service {
namespace {

using nlohmann::json;

core::Error BadReading(std::string_view what) {
  return core::Error::Unavailable(fmt::format("row meter: {}", what));
}

core::Result<double> SampleValue(const json& value) {
  // A Prometheus sample is [unix_time, "value as a string"].
  if (!value.is_array() || value.size() != 2 || !value[1].is_string()) {
    return core::Fail(BadReading("a sample is not [time, \"value\"]"));
  }
  auto v = core::ParseDouble(value[1].get<std::string>());
  if (!v || !std::isfinite(*v)) {
    return core::Fail(
        BadReading(fmt::format("sample '{}' is not a finite number", value[1].get<std::string>())));
  }
  return *v;
}

}  // namespace

core::Result<core::Watts> ParsePrometheusQueryResponse(std::string_view body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception&) {
    return core::Fail(BadReading("the query answer is not JSON"));
  }
  try {
    if (j.value("status", std::string()) != "success") {
      return core::Fail(BadReading(
          fmt::format("query failed: {}", j.value("error", std::string("no error text")))));
    }
    const json& data = j.at("data");
    const std::string type = data.at("resultType").get<std::string>();
    double sum = 0;
    if (type == "scalar") {
      HEADROOM_ASSIGN_OR_RETURN(sum, SampleValue(data.at("result")));
    } else if (type == "vector") {
      const json& result = data.at("result");
      if (result.empty()) {
        return core::Fail(BadReading("the query returned no series (is the target scraped?)"));
      }
      for (const json& series : result) {
        HEADROOM_ASSIGN_OR_RETURN(double v, SampleValue(series.at("value")));
        sum += v;
      }
    } else {
      return core::Fail(BadReading(
          fmt::format("the query returned a {}, not a scalar or an instant vector", type)));
    }
    if (sum < 0) return core::Fail(BadReading(fmt::format("negative power {} W", sum)));
    return core::Watts(sum);
  } catch (const json::exception& e) {
    return core::Fail(BadReading(fmt::format("unexpected query answer: {}", e.what())));
  }
}

core::Result<core::Watts> ParseMeterOutput(std::string_view text) {
  std::string_view t = core::Trim(text);
  if (t.size() > 1 && (t.back() == 'W' || t.back() == 'w'))
    t = core::Trim(t.substr(0, t.size() - 1));
  auto v = core::ParseDouble(t);
  if (!v || !std::isfinite(*v) || *v < 0) {
    return core::Fail(BadReading(
        fmt::format("the command printed '{}', not a number of watts", core::Trim(text))));
  }
  return core::Watts(*v);
}

PrometheusMeter::PrometheusMeter(std::string url, std::string query, core::Duration timeout,
                                 std::string ca_file)
    : url_(std::move(url)),
      query_(std::move(query)),
      timeout_(timeout),
      ca_file_(std::move(ca_file)) {}

std::string PrometheusMeter::Describe() const {
  return fmt::format("prometheus {} '{}'", url_, query_);
}

core::Result<core::Watts> PrometheusMeter::Read() {
  // "http://host:port/prefix" -> client on "http://host:port", path "/prefix/api/v1/query".
  const size_t slash = url_.find('/', url_.find("://") + 3);
  const std::string base = slash == std::string::npos ? url_ : url_.substr(0, slash);
  std::string prefix = slash == std::string::npos ? "" : url_.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  httplib::Client client(base);
  ConfigureHttpClient(client, timeout_, ca_file_);
  const httplib::Params params = {{"query", query_}};
  auto res = client.Get(prefix + "/api/v1/query", params, httplib::Headers{});
  if (!res) {
    return core::Fail(
        BadReading(fmt::format("GET {}/api/v1/query: {}", url_, httplib::to_string(res.error()))));
  }
  if (res->status != 200 && res->status != 400 && res->status != 422) {
    return core::Fail(BadReading(fmt::format("GET {}/api/v1/query: HTTP {}", url_, res->status)));
  }
  return ParsePrometheusQueryResponse(res->body);
}

CommandMeter::CommandMeter(std::vector<std::string> argv, core::Duration timeout)
    : argv_(std::move(argv)), timeout_(timeout) {}

std::string CommandMeter::Describe() const {
  return fmt::format("command [{}]", fmt::join(argv_, " "));
}

core::Result<core::Watts> CommandMeter::Read() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return core::Fail(BadReading("pipe failed"));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<char*> argv;
  for (const std::string& a : argv_) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return core::Fail(BadReading(fmt::format("cannot run {}: {}", argv_[0], strerror(rc))));
  }
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  bool timed_out = false;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buf[256];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;  // EOF: the command closed its output
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > 4096) break;  // a meter prints one number; do not buffer a runaway
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return core::Fail(BadReading(
        fmt::format("{} did not answer within {:.1f} s", argv_[0], core::ToSeconds(timeout_))));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return core::Fail(BadReading(fmt::format("{} failed (status {})", argv_[0], status)));
  }
  return ParseMeterOutput(out);
}

}  // namespace headroom::service
