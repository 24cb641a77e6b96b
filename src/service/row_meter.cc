#include "service/row_meter.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "core/parse.h"
#include "core/subprocess.h"
#include "service/http_client.h"

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

CommandMeter::CommandMeter(std::vector<std::string> argv, core::Duration timeout,
                           const core::Clock* clock)
    : argv_(std::move(argv)), timeout_(timeout), clock_(clock) {}

std::string CommandMeter::Describe() const {
  return fmt::format("command [{}]", fmt::join(argv_, " "));
}

core::Result<core::Watts> CommandMeter::Read() {
  // A meter prints one number: 4 KiB is plenty, and bounds a runaway.
  constexpr std::size_t kMaxOutput = 4096;
  auto run = core::RunCaptured(argv_, timeout_, kMaxOutput, *clock_);
  if (!run) return core::Fail(BadReading(run.error().message()));
  if (run->timed_out) {
    return core::Fail(BadReading(
        fmt::format("{} did not answer within {:.1f} s", argv_[0], core::ToSeconds(timeout_))));
  }
  if (run->truncated) {
    return core::Fail(
        BadReading(fmt::format("{} printed more than {} bytes", argv_[0], kMaxOutput)));
  }
  if (run->exit_code != 0) {
    return core::Fail(BadReading(fmt::format("{} failed (exit {})", argv_[0], run->exit_code)));
  }
  return ParseMeterOutput(run->output);
}

}  // namespace headroom::service
