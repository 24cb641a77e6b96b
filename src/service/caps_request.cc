#include "service/caps_request.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace headroom::service {
namespace {

using nlohmann::json;

core::Error Bad(std::string message) { return core::Error::InvalidArgument(std::move(message)); }

// A finite JSON number (not a bool, which nlohmann also reads as a number).
core::Result<double> Number(const json& value, std::string_view key) {
  if (!value.is_number()) return core::Fail(Bad(fmt::format("'{}' must be a number", key)));
  const double v = value.get<double>();
  if (!std::isfinite(v)) return core::Fail(Bad(fmt::format("'{}' must be finite", key)));
  return v;
}

template <class T>
core::Result<Change<T>> ParseChange(const json& body, std::string_view key) {
  auto it = body.find(key);
  if (it == body.end()) return Change<T>{};
  if (it->is_null()) return Change<T>{std::optional<T>{}};
  HEADROOM_ASSIGN_OR_RETURN(double v, Number(*it, key));
  return Change<T>{std::optional<T>{T(v)}};
}

core::Result<std::optional<std::vector<int>>> ParseGpus(const json& body) {
  auto it = body.find("gpus");
  if (it == body.end()) return std::optional<std::vector<int>>{};
  if (!it->is_array()) return core::Fail(Bad("'gpus' must be an array of GPU indices"));
  std::vector<int> gpus;
  std::set<int> seen;
  for (const json& g : *it) {
    if (!g.is_number_integer()) return core::Fail(Bad("'gpus' must hold integer GPU indices"));
    const auto index = g.get<long long>();
    if (index < 0 || index > 1'000'000) {
      return core::Fail(Bad(fmt::format("'gpus': {} is not a GPU index", index)));
    }
    if (!seen.insert(static_cast<int>(index)).second) {
      return core::Fail(Bad(fmt::format("'gpus': GPU {} is listed twice", index)));
    }
    gpus.push_back(static_cast<int>(index));
  }
  if (gpus.empty()) return core::Fail(Bad("'gpus' is empty (leave it out to mean all GPUs)"));
  return std::optional(std::move(gpus));
}

core::Result<CapsRequest> ParseObject(const json& body) {
  if (!body.is_object()) return core::Fail(Bad("the body must be a JSON object"));
  static const std::set<std::string> kKnown = {"gpus",  "sm_clock_mhz", "power_limit_w",
                                               "brake", "lease_s",      "request_id"};
  for (const auto& [key, value] : body.items()) {
    if (!kKnown.contains(key)) return core::Fail(Bad(fmt::format("unknown key '{}'", key)));
  }
  CapsRequest request;
  HEADROOM_ASSIGN_OR_RETURN(request.gpus, ParseGpus(body));
  HEADROOM_ASSIGN_OR_RETURN(request.sm_clock, ParseChange<core::Megahertz>(body, "sm_clock_mhz"));
  HEADROOM_ASSIGN_OR_RETURN(request.power_limit, ParseChange<core::Watts>(body, "power_limit_w"));
  if (auto it = body.find("brake"); it != body.end()) {
    if (!it->is_boolean()) return core::Fail(Bad("'brake' must be true or false"));
    request.brake = it->get<bool>();
  }
  auto lease = body.find("lease_s");
  if (lease == body.end()) return core::Fail(Bad("'lease_s' is required"));
  HEADROOM_ASSIGN_OR_RETURN(double lease_s, Number(*lease, "lease_s"));
  if (lease_s <= 0 || lease_s > kMaxLeaseSeconds) {
    return core::Fail(Bad(fmt::format("'lease_s' must be in (0, {}] s", kMaxLeaseSeconds)));
  }
  request.lease = core::FromSeconds(lease_s);
  auto id = body.find("request_id");
  if (id == body.end() || !id->is_string()) {
    return core::Fail(Bad("'request_id' is required and must be a string"));
  }
  request.request_id = id->get<std::string>();
  if (request.request_id.empty() || request.request_id.size() > kMaxRequestIdLength) {
    return core::Fail(
        Bad(fmt::format("'request_id' must have 1 to {} characters", kMaxRequestIdLength)));
  }
  // The id goes into the log and the audit trail: a newline or a terminal escape in it could
  // forge or hide lines there.
  const auto printable = [](char c) { return c > ' ' && c < 0x7f; };
  if (!std::all_of(request.request_id.begin(), request.request_id.end(), printable)) {
    return core::Fail(Bad("'request_id' may hold only printable ASCII without spaces"));
  }
  request.canonical_body = body.dump();  // nlohmann::json objects keep keys sorted
  return request;
}

}  // namespace

core::Result<CapsRequest> ParseCapsRequest(std::string_view body) {
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return core::Fail(Bad("the body is not valid JSON"));
  return ParseObject(parsed);
}

GpuRange RangeOf(int index, const model::GpuSpec& spec) {
  return GpuRange{.index = index,
                  .sm_clock_min = spec.sm_clock_min,
                  .sm_clock_max = spec.sm_clock_max,
                  .power_limit_min = spec.power_limit_min,
                  .power_limit_max = spec.power_limit_max};
}

core::Status ValidateCapsRequest(const CapsRequest& request, const std::vector<GpuRange>& gpus) {
  std::vector<const GpuRange*> targets;
  if (!request.gpus) {
    for (const GpuRange& g : gpus) targets.push_back(&g);
  } else {
    for (int index : *request.gpus) {
      auto it = std::find_if(gpus.begin(), gpus.end(),
                             [index](const GpuRange& g) { return g.index == index; });
      if (it == gpus.end()) {
        return core::Fail(core::Error::NotFound(fmt::format("no GPU {} on this node", index)));
      }
      targets.push_back(&*it);
    }
  }
  for (const GpuRange* g : targets) {
    if (request.sm_clock && *request.sm_clock) {
      const core::Megahertz f = **request.sm_clock;
      if (f < g->sm_clock_min || f > g->sm_clock_max) {
        return core::Fail(core::Error::OutOfRange(
            fmt::format("sm_clock_mhz {} is outside GPU {}'s range [{}, {}] MHz", f.value(),
                        g->index, g->sm_clock_min.value(), g->sm_clock_max.value())));
      }
    }
    if (request.power_limit && *request.power_limit) {
      const core::Watts p = **request.power_limit;
      if (p < g->power_limit_min || p > g->power_limit_max) {
        return core::Fail(core::Error::OutOfRange(
            fmt::format("power_limit_w {} is outside GPU {}'s range [{}, {}] W", p.value(),
                        g->index, g->power_limit_min.value(), g->power_limit_max.value())));
      }
    }
  }
  return core::Ok();
}

}  // namespace headroom::service
