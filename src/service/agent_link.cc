#include "service/agent_link.h"

#include <cmath>

#include <fmt/format.h>
#include <httplib.h>

#include "service/http_client.h"
#include "service/http_status.h"

namespace headroom::service {
namespace {

using nlohmann::json;

// A JSON field that must be a number or null.
core::Result<std::optional<double>> NumberOrNull(const json& obj, const char* key) {
  if (!obj.contains(key) || obj.at(key).is_null()) return std::optional<double>();
  if (!obj.at(key).is_number()) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("'{}' is not a number", key)));
  }
  return std::optional<double>(obj.at(key).get<double>());
}

core::Error HttpError(int status, const std::string& body) {
  std::string message = body;
  try {
    const json j = json::parse(body);
    if (j.is_object() && j.contains("error") && j["error"].is_string()) {
      message = j["error"].get<std::string>();
    }
  } catch (const json::exception&) {
  }
  return core::Error(CodeForHttpStatus(status), fmt::format("HTTP {}: {}", status, message));
}

}  // namespace

nlohmann::ordered_json TargetsJson(const policy::ServerTargets& t) {
  using ordered = nlohmann::ordered_json;
  return {{"sm_clock_mhz", t.sm_clock_cap ? ordered(t.sm_clock_cap->value()) : ordered(nullptr)},
          {"power_limit_w", t.power_limit ? ordered(t.power_limit->value()) : ordered(nullptr)},
          {"brake", t.brake}};
}

core::Result<policy::ServerTargets> TargetsFromJson(const json& caps) {
  if (!caps.is_object()) {
    return core::Fail(core::Error::InvalidArgument("caps: not a JSON object"));
  }
  HEADROOM_ASSIGN_OR_RETURN(std::optional<double> clock, NumberOrNull(caps, "sm_clock_mhz"));
  HEADROOM_ASSIGN_OR_RETURN(std::optional<double> limit, NumberOrNull(caps, "power_limit_w"));
  if (caps.contains("brake") && !caps["brake"].is_boolean()) {
    return core::Fail(core::Error::InvalidArgument("'brake' is not true or false"));
  }
  policy::ServerTargets t;
  if (clock) t.sm_clock_cap = core::Megahertz(*clock);
  if (limit) t.power_limit = core::Watts(*limit);
  t.brake = caps.value("brake", false);
  return t;
}

CapsOutcome ParseCapsOutcome(const json& answer) {
  CapsOutcome out;
  out.result = answer.value("result", std::string());
  out.confirmed = out.result == "applied";
  if (answer.contains("gpus") && answer["gpus"].is_array()) {
    for (const json& g : answer["gpus"]) {
      if (!g.is_object() || g.value("confirmed", true)) continue;
      out.confirmed = false;
      if (out.mismatch.empty()) out.mismatch = g.value("mismatch", std::string());
    }
  }
  return out;
}

namespace {

std::optional<policy::ServingSignal> ServingOf(const json& state) {
  if (!state.contains("serving") || !state["serving"].is_object()) return std::nullopt;
  const json& s = state["serving"];
  auto number = [&s](const char* key) -> std::optional<double> {
    if (!s.contains(key) || !s[key].is_number()) return std::nullopt;
    const double v = s[key].get<double>();
    if (!std::isfinite(v) || v < 0) return std::nullopt;
    return v;
  };
  const auto share = number("prefill_share");
  const auto waiting = number("waiting");
  const auto running = number("running");
  const auto age = number("age_s");
  if (!share || *share > 1 || !waiting || !running || !age || *age > 1e6) return std::nullopt;
  return policy::ServingSignal{.prefill_share = *share,
                               .waiting = *waiting,
                               .running = *running,
                               .age = core::FromSeconds(*age)};
}

}  // namespace

core::Result<AgentReport> ParseAgentState(const json& state) {
  auto bad = [](const std::string& what) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("agent state: {}", what)));
  };
  if (!state.is_object()) return bad("not a JSON object");
  try {
    AgentReport r;
    if (state.contains("priority") && state["priority"].is_string()) {
      r.priority = state["priority"].get<std::string>();
    }
    if (!state.contains("gpus") || !state["gpus"].is_array()) return bad("no 'gpus' list");
    for (const json& g : state["gpus"]) {
      HEADROOM_ASSIGN_OR_RETURN(std::optional<double> w, NumberOrNull(g, "power_w"));
      if (w && *w < 0 && r.implausible.empty()) {
        r.implausible = fmt::format("GPU {} reports {} W", r.gpu_count, *w);
      }
      r.gpu_power += core::Watts(w.value_or(0));
      ++r.gpu_count;
      if (!g.contains("caps") || !g["caps"].is_object()) return bad("a GPU without 'caps'");
      const json& caps = g["caps"];
      HEADROOM_ASSIGN_OR_RETURN(policy::ServerTargets gpu_caps, TargetsFromJson(caps));
      r.caps = policy::Tightest(r.caps, gpu_caps);
      if (!caps.value("confirmed", true) && r.confirmed) {
        r.confirmed = false;
        r.mismatch = fmt::format("GPU {}: {}", g.value("index", json(-1)).dump(),
                                 caps.value("mismatch", std::string("read-back differs")));
      }
    }
    if (state.contains("lease") && state["lease"].is_object()) {
      const json& lease = state["lease"];
      r.lease_expired = lease.value("expired", false);
      r.has_lease =
          r.lease_expired || (lease.contains("expires_in_s") && !lease["expires_in_s"].is_null());
    }
    r.failsafe_active = state.value("failsafe_active", false);
    r.serving = ServingOf(state);
    r.pending =
        state.contains("pending") && state["pending"].is_array() && !state["pending"].empty();
    return r;
  } catch (const json::exception& e) {
    return bad(e.what());
  }
}

std::string CapsBody(const CapsCommand& command) {
  nlohmann::ordered_json body =
      command.targets ? TargetsJson(*command.targets) : nlohmann::ordered_json::object();
  body["lease_s"] = core::ToSeconds(command.lease);
  body["request_id"] = command.request_id;
  return body.dump();
}

HttpAgentLink::HttpAgentLink(const std::string& url, std::string token, core::Duration timeout,
                             const std::string& ca_file)
    : url_(url),
      token_(std::move(token)),
      get_client_(std::make_unique<httplib::Client>(url)),
      put_client_(std::make_unique<httplib::Client>(url)) {
  ConfigureHttpClient(*get_client_, timeout, ca_file);
  ConfigureHttpClient(*put_client_, timeout, ca_file);
}

HttpAgentLink::~HttpAgentLink() = default;

core::Result<AgentReport> HttpAgentLink::GetState() {
  // Read into a bounded buffer: whatever answers at an agent's address must not be able to make
  // the controller hold an unbounded answer.
  std::string body;
  bool too_big = false;
  auto res = get_client_->Get("/v1/state", [&body, &too_big](const char* data, size_t n) {
    too_big = body.size() + n > kMaxAgentStateBytes;
    if (!too_big) body.append(data, n);
    return !too_big;
  });
  if (too_big) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "GET {}/v1/state: the answer is larger than {} bytes", url_, kMaxAgentStateBytes)));
  }
  if (!res) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("GET {}/v1/state: {}", url_, httplib::to_string(res.error()))));
  }
  if (res->status != 200) return core::Fail(HttpError(res->status, body));
  try {
    auto report = ParseAgentState(json::parse(body));
    if (!report)
      return core::Fail(report.error().WithContext(fmt::format("GET {}/v1/state", url_)));
    return report;
  } catch (const json::exception& e) {
    return core::Fail(
        core::Error::InvalidArgument(fmt::format("GET {}/v1/state: not JSON: {}", url_, e.what())));
  }
}

core::Result<CapsOutcome> HttpAgentLink::PutCaps(const CapsCommand& command) {
  const httplib::Headers headers = {{"Authorization", "Bearer " + token_}};
  auto res = put_client_->Put("/v1/caps", headers, CapsBody(command), "application/json");
  if (!res) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("PUT {}/v1/caps: {}", url_, httplib::to_string(res.error()))));
  }
  if (res->status != 200) return core::Fail(HttpError(res->status, res->body));
  try {
    return ParseCapsOutcome(json::parse(res->body));
  } catch (const json::exception& e) {
    return core::Fail(core::Error::Internal(
        fmt::format("PUT {}/v1/caps: answer is not JSON: {}", url_, e.what())));
  }
}

}  // namespace headroom::service
