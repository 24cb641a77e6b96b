#include "service/controller_config.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/files.h"
#include "core/parse.h"
#include "core/yaml_reader.h"
#include "policy/policy_factory.h"
#include "service/auth.h"

namespace headroom::service {
namespace {

core::Result<core::Duration> DurationField(const core::YamlReader& map, std::string_view key,
                                           core::Duration fallback) {
  if (!map.Has(key)) return fallback;
  HEADROOM_ASSIGN_OR_RETURN(std::string text, map.String(key));
  auto d = core::ParseDuration(text);
  if (!d || *d <= core::Duration::zero()) {
    return core::Fail(map.ErrorAt(key, fmt::format("'{}' is not a positive duration such as 1s "
                                                   "or 500ms",
                                                   text)));
  }
  // No control time spans more than a day; beyond that `3 * period` and the like would overflow
  // (period: 36000d passed --check, then the controller never took a second step).
  if (*d > std::chrono::days(1)) {
    return core::Fail(map.ErrorAt(key, fmt::format("'{}' is longer than a day", text)));
  }
  return *d;
}

core::Status CheckHttpUrl(const core::YamlReader& map, std::string_view key,
                          const std::string& url) {
  const bool http = url.rfind("http://", 0) == 0 && url.size() > 7;
  const bool https = url.rfind("https://", 0) == 0 && url.size() > 8;
  if ((!http && !https) || url.find_first_of(" \t") != std::string::npos) {
    return core::Fail(
        map.ErrorAt(key, fmt::format("'{}' is not an http:// or https://HOST:PORT URL", url)));
  }
  return core::Ok();
}

core::Result<TelemetryConfig> ParseTelemetry(const core::YamlReader& doc, TelemetryConfig t) {
  if (!doc.Has("telemetry")) return t;
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader map, doc.Map("telemetry"));
  HEADROOM_RETURN_IF_ERROR(map.CheckKnownKeys({"source", "url", "query", "command", "timeout"}));
  HEADROOM_ASSIGN_OR_RETURN(std::string source, map.String("source"));
  HEADROOM_ASSIGN_OR_RETURN(t.timeout, DurationField(map, "timeout", t.timeout));
  auto forbid = [&map](std::initializer_list<std::string_view> keys,
                       std::string_view source) -> core::Status {
    for (std::string_view key : keys) {
      if (map.Has(key)) {
        return core::Fail(map.ErrorAt(key, fmt::format("not used by source {}", source)));
      }
    }
    return core::Ok();
  };
  if (source == "agents") {
    HEADROOM_RETURN_IF_ERROR(forbid({"url", "query", "command"}, source));
    t.source = TelemetrySource::kAgents;
  } else if (source == "prometheus") {
    HEADROOM_RETURN_IF_ERROR(forbid({"command"}, source));
    t.source = TelemetrySource::kPrometheus;
    HEADROOM_ASSIGN_OR_RETURN(t.url, map.String("url"));
    HEADROOM_RETURN_IF_ERROR(CheckHttpUrl(map, "url", t.url));
    HEADROOM_ASSIGN_OR_RETURN(t.query, map.String("query"));
    if (core::Trim(t.query).empty()) return core::Fail(map.ErrorAt("query", "empty"));
  } else if (source == "command") {
    HEADROOM_RETURN_IF_ERROR(forbid({"url", "query"}, source));
    t.source = TelemetrySource::kCommand;
    HEADROOM_ASSIGN_OR_RETURN(t.command, map.StringList("command"));
    if (t.command.empty()) {
      return core::Fail(map.ErrorAt("command",
                                    "missing: the program (and its arguments) that "
                                    "prints the row's watts, as a list"));
    }
  } else {
    return core::Fail(
        map.ErrorAt("source", fmt::format("'{}': expected agents, prometheus or command", source)));
  }
  return t;
}

core::Result<AgentEndpoint> ParseAgent(const core::YamlReader& item,
                                       const catalog::HardwareCatalog& catalog) {
  HEADROOM_RETURN_IF_ERROR(
      item.CheckKnownKeys({"name", "url", "token_file", "priority", "server"}));
  AgentEndpoint a;
  HEADROOM_ASSIGN_OR_RETURN(a.name, item.String("name"));
  HEADROOM_ASSIGN_OR_RETURN(a.url, item.String("url"));
  HEADROOM_RETURN_IF_ERROR(CheckHttpUrl(item, "url", a.url));
  while (!a.url.empty() && a.url.back() == '/') a.url.pop_back();
  HEADROOM_ASSIGN_OR_RETURN(std::string token_file, item.String("token_file"));
  auto token = ReadTokenFile(token_file);
  if (!token) return core::Fail(item.ErrorAt("token_file", token.error().message()));
  a.token = std::move(*token);
  HEADROOM_ASSIGN_OR_RETURN(std::string priority, item.String("priority"));
  auto parsed = policy::ParsePriority(priority);
  if (!parsed) return core::Fail(item.ErrorAt("priority", parsed.error().message()));
  a.priority = *parsed;
  HEADROOM_ASSIGN_OR_RETURN(std::string server, item.String("server"));
  auto spec = catalog.Server(server);
  if (!spec) return core::Fail(item.ErrorAt("server", spec.error().message()));
  a.server = **spec;
  return a;
}

}  // namespace

std::string_view TelemetrySourceName(TelemetrySource source) {
  switch (source) {
    case TelemetrySource::kAgents:
      return "agents";
    case TelemetrySource::kPrometheus:
      return "prometheus";
    case TelemetrySource::kCommand:
      return "command";
  }
  return "?";
}

namespace {

// The control section: the step's timing and the bounds between its durations.
core::Status ParseControl(const core::YamlReader& control, ControllerConfig& c) {
  HEADROOM_RETURN_IF_ERROR(
      control.CheckKnownKeys({"period", "lease_ttl", "agent_timeout", "restart_hold",
                              "escalate_after", "converge_within"}));
  HEADROOM_ASSIGN_OR_RETURN(c.period, DurationField(control, "period", c.period));
  HEADROOM_ASSIGN_OR_RETURN(c.lease_ttl, DurationField(control, "lease_ttl", c.lease_ttl));
  HEADROOM_ASSIGN_OR_RETURN(c.agent_timeout,
                            DurationField(control, "agent_timeout", c.agent_timeout));
  HEADROOM_ASSIGN_OR_RETURN(c.restart_hold, DurationField(control, "restart_hold", c.restart_hold));
  HEADROOM_ASSIGN_OR_RETURN(c.escalate_after,
                            DurationField(control, "escalate_after", c.escalate_after));
  HEADROOM_ASSIGN_OR_RETURN(c.converge_within,
                            DurationField(control, "converge_within", c.converge_within));
  if (c.lease_ttl < 3 * c.period) {
    return core::Fail(control.ErrorAt(
        "lease_ttl", "must be at least 3 periods, or one slow step lets every lease run out"));
  }
  if (c.agent_timeout >= c.period) {
    return core::Fail(control.ErrorAt(
        "agent_timeout", "must be shorter than the period, or a slow agent stalls the loop"));
  }
  if (core::ToSeconds(c.lease_ttl) > 3600) {
    return core::Fail(control.ErrorAt("lease_ttl", "longer than the agents accept (1h)"));
  }
  return core::Ok();
}

core::Status ParseGrid(const core::YamlReader& doc, ControllerConfig& c) {
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader grid, doc.Map("grid"));
  HEADROOM_RETURN_IF_ERROR(
      grid.CheckKnownKeys({"token_file", "comply_within", "min_interval", "max_duration",
                           "budget_schedule", "ramp_up_w_per_s", "ramp_window"}));
  if (grid.Has("ramp_up_w_per_s")) {
    // Zero would hold every lift for ever: leave the key out for no limit.
    HEADROOM_ASSIGN_OR_RETURN(c.grid.ramp_up_w_per_s, grid.NumberIn("ramp_up_w_per_s", 1e-3, 1e9));
  }
  if (grid.Has("token_file")) {
    HEADROOM_ASSIGN_OR_RETURN(std::string path, grid.String("token_file"));
    auto token = ReadTokenFile(path);
    if (!token) return core::Fail(grid.ErrorAt("token_file", token.error().message()));
    for (const AgentEndpoint& a : c.agents) {
      if (a.token == *token) {
        return core::Fail(grid.ErrorAt(
            "token_file", fmt::format("the same token as agent {}'s: whoever holds a server's "
                                      "token could then lower the row's budget",
                                      a.name)));
      }
    }
    c.grid.token = std::move(*token);
  }
  GridLimits& limits = c.grid.limits;
  for (const auto& [key, out] : {std::pair{"comply_within", &limits.comply_within},
                                 std::pair{"min_interval", &limits.min_interval},
                                 std::pair{"max_duration", &limits.max_duration},
                                 std::pair{"ramp_window", &c.grid.ramp_window}}) {
    if (!grid.Has(key)) continue;
    HEADROOM_ASSIGN_OR_RETURN(std::string text, grid.String(key));
    auto d = core::ParseDuration(text);
    if (!d) return core::Fail(grid.ErrorAt(key, d.error().message()));
    if (d->count() <= 0) return core::Fail(grid.ErrorAt(key, "must be positive"));
    *out = *d;
  }
  HEADROOM_ASSIGN_OR_RETURN(std::vector<core::YamlReader> items, grid.MapList("budget_schedule"));
  HEADROOM_ASSIGN_OR_RETURN(c.grid.schedule,
                            policy::ParseBudgetSchedule(items, /*once_allowed=*/false));
  return core::Ok();
}

core::Status ParseTls(const core::YamlReader& doc, ControllerConfig& c) {
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader tls, doc.Map("tls"));
  HEADROOM_RETURN_IF_ERROR(tls.CheckKnownKeys({"ca_file"}));
  HEADROOM_ASSIGN_OR_RETURN(c.tls_ca_file, tls.String("ca_file"));
  if (auto ca = core::ReadFile(c.tls_ca_file); !ca) {
    return core::Fail(tls.ErrorAt("ca_file", ca.error().message()));
  }
  return core::Ok();
}

}  // namespace

core::Result<ControllerConfig> ParseControllerConfig(std::string_view text,
                                                     const std::string& source,
                                                     const catalog::HardwareCatalog& catalog) {
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader doc, core::YamlReader::Parse(text, source));
  HEADROOM_RETURN_IF_ERROR(
      doc.CheckKnownKeys({"row", "policy", "control", "telemetry", "agents", "tls", "grid"}));
  ControllerConfig c;

  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader row, doc.Map("row"));
  HEADROOM_RETURN_IF_ERROR(row.CheckKnownKeys({"name", "budget_w"}));
  HEADROOM_ASSIGN_OR_RETURN(c.row_name, row.String("name"));
  HEADROOM_ASSIGN_OR_RETURN(double budget, row.NumberIn("budget_w", 1, 1e9));
  c.budget = core::Watts(budget);

  HEADROOM_ASSIGN_OR_RETURN(std::vector<core::YamlReader> items, doc.MapList("agents"));
  if (items.empty()) return core::Fail(doc.ErrorAt("agents", "missing: list every server"));
  std::set<std::string> names;
  for (const core::YamlReader& item : items) {
    HEADROOM_ASSIGN_OR_RETURN(AgentEndpoint a, ParseAgent(item, catalog));
    if (!names.insert(a.name).second) {
      return core::Fail(item.ErrorAt("name", fmt::format("'{}' is listed twice", a.name)));
    }
    if (!c.agents.empty() && a.server.gpu != c.agents.front().server.gpu) {
      return core::Fail(item.ErrorAt(
          "server", fmt::format("its GPU ({}) differs from the first server's ({}): one "
                                "controller drives one GPU type, so split the row",
                                a.server.gpu, c.agents.front().server.gpu)));
    }
    c.agents.push_back(std::move(a));
  }
  HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec* gpu, catalog.Gpu(c.agents.front().server.gpu));
  c.gpu = *gpu;

  c.params = policy::DefaultParamsFor(*gpu);
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader pol, doc.Map("policy"));
  const std::vector<std::string> known = policy::ParamNames();
  for (const std::string& key : pol.Keys()) {
    if (key == "name") continue;
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return core::Fail(pol.ErrorAt(
          key, fmt::format("unknown policy constant (known: name, {})", fmt::join(known, ", "))));
    }
    HEADROOM_ASSIGN_OR_RETURN(double v, pol.Number(key));
    if (auto st = policy::SetParam(c.params, key, v); !st) {
      return core::Fail(pol.ErrorAt(key, st.error().message()));
    }
  }
  HEADROOM_ASSIGN_OR_RETURN(c.policy_name, pol.String("name"));
  if (const auto names = policy::PolicyNames();
      std::find(names.begin(), names.end(), c.policy_name) == names.end()) {
    return core::Fail(pol.ErrorAt("name", fmt::format("unknown policy '{}' (known: {})",
                                                      c.policy_name, fmt::join(names, ", "))));
  }
  if (auto st = policy::ValidateParams(c.params, *gpu); !st) {
    return core::Fail(pol.ErrorAt("", st.error().message()));
  }

  if (doc.Has("control")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader control, doc.Map("control"));
    HEADROOM_RETURN_IF_ERROR(ParseControl(control, c));
  }
  if (doc.Has("tls")) HEADROOM_RETURN_IF_ERROR(ParseTls(doc, c));
  if (doc.Has("grid")) HEADROOM_RETURN_IF_ERROR(ParseGrid(doc, c));
  c.telemetry.timeout = c.agent_timeout;
  HEADROOM_ASSIGN_OR_RETURN(c.telemetry, ParseTelemetry(doc, c.telemetry));
  if (c.telemetry.timeout >= c.period) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{}: telemetry.timeout must be shorter than control.period", source)));
  }
  return c;
}

std::vector<std::vector<std::string>> AgentsSharingTokens(const ControllerConfig& config) {
  std::map<std::string, std::vector<std::string>> by_token;
  std::vector<std::string> order;  // tokens in the order of their first agent
  for (const AgentEndpoint& a : config.agents) {
    std::vector<std::string>& names = by_token[a.token];
    if (names.empty()) order.push_back(a.token);
    names.push_back(a.name);
  }
  std::vector<std::vector<std::string>> out;
  for (const std::string& token : order) {
    if (by_token[token].size() > 1) out.push_back(by_token[token]);
  }
  return out;
}

core::Result<ControllerConfig> LoadControllerConfig(const std::string& path,
                                                    const catalog::HardwareCatalog& catalog) {
  HEADROOM_ASSIGN_OR_RETURN(std::string text, core::ReadFile(path));
  return ParseControllerConfig(text, path, catalog);
}

}  // namespace headroom::service
