#include "report/prometheus_text.h"

#include <array>
#include <functional>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace headroom::report {
namespace {

struct Metric {
  const char* name;
  const char* type;
  const char* help;
  std::function<std::optional<double>(const GpuListing&)> value;
};

std::string Labels(const GpuListing& g, std::string_view extra = {}) {
  std::string labels = fmt::format(R"(gpu="{}",uuid="{}",name="{}")", g.info.index,
                                   EscapeLabelValue(g.info.uuid), EscapeLabelValue(g.info.name));
  if (!extra.empty()) labels += fmt::format(",{}", extra);
  return "{" + labels + "}";
}

template <class T, class F>
std::optional<double> Map(const std::optional<T>& v, F&& f) {
  return v ? std::optional<double>(f(*v)) : std::nullopt;
}

const std::vector<Metric>& Metrics() {
  static const auto* metrics = new std::vector<Metric>{
      {"headroom_gpu_power_watts", "gauge", "GPU power draw, most recent sensor window.",
       [](const GpuListing& g) {
         return Map(g.snapshot.power_instant, [](core::Watts w) { return w.value(); });
       }},
      {"headroom_gpu_power_average_watts", "gauge", "GPU power draw averaged over 1 s.",
       [](const GpuListing& g) {
         return Map(g.snapshot.power_average, [](core::Watts w) { return w.value(); });
       }},
      {"headroom_gpu_energy_joules_total", "counter",
       "Energy the GPU consumed since the driver loaded.",
       [](const GpuListing& g) {
         return Map(g.snapshot.energy_counter, [](core::Joules j) { return j.value(); });
       }},
      {"headroom_gpu_sm_clock_hertz", "gauge", "Current SM clock.",
       [](const GpuListing& g) {
         return Map(g.snapshot.sm_clock, [](core::Megahertz f) { return f.value() * 1e6; });
       }},
      {"headroom_gpu_memory_clock_hertz", "gauge", "Current memory clock.",
       [](const GpuListing& g) {
         return Map(g.snapshot.memory_clock, [](core::Megahertz f) { return f.value() * 1e6; });
       }},
      {"headroom_gpu_power_limit_watts", "gauge",
       "Enforced power limit (the lowest of all limiters, out-of-band caps included).",
       [](const GpuListing& g) {
         return Map(g.snapshot.power_limits, [](const auto& l) { return l.enforced.value(); });
       }},
      {"headroom_gpu_power_limit_default_watts", "gauge", "Factory default power limit (TDP).",
       [](const GpuListing& g) {
         return Map(g.snapshot.power_limits, [](const auto& l) { return l.default_limit.value(); });
       }},
      {"headroom_gpu_utilization_ratio", "gauge", "Fraction of time a kernel ran.",
       [](const GpuListing& g) {
         return Map(g.snapshot.utilization, [](const auto& u) { return u.gpu_percent / 100; });
       }},
      {"headroom_gpu_memory_utilization_ratio", "gauge",
       "Fraction of time memory was read or written.",
       [](const GpuListing& g) {
         return Map(g.snapshot.utilization, [](const auto& u) { return u.memory_percent / 100; });
       }},
      {"headroom_gpu_temperature_celsius", "gauge", "GPU die temperature.",
       [](const GpuListing& g) {
         return Map(g.snapshot.temperature, [](core::Celsius c) { return c.value(); });
       }},
      {"headroom_gpu_memory_used_bytes", "gauge", "GPU memory in use.",
       [](const GpuListing& g) {
         return Map(g.snapshot.memory,
                    [](const auto& m) { return static_cast<double>(m.used_bytes); });
       }},
      {"headroom_gpu_memory_total_bytes", "gauge", "GPU memory in total.",
       [](const GpuListing& g) {
         return Map(g.snapshot.memory,
                    [](const auto& m) { return static_cast<double>(m.total_bytes); });
       }},
  };
  return *metrics;
}

constexpr std::array<std::pair<std::uint64_t, const char*>, 6> kReasons = {{
    {gpu::kThrottleGpuIdle, "idle"},
    {gpu::kThrottleClockSetting, "clock_setting"},
    {gpu::kThrottleSwPowerCap, "power_cap"},
    {gpu::kThrottleSwThermal, "sw_thermal"},
    {gpu::kThrottleHwThermal, "hw_thermal"},
    {gpu::kThrottleHwPowerBrake, "power_brake"},
}};

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string PrometheusText(const std::vector<GpuListing>& gpus) {
  std::string out;
  for (const Metric& m : Metrics()) {
    std::string lines;
    for (const GpuListing& g : gpus) {
      if (auto v = m.value(g)) lines += fmt::format("{}{} {}\n", m.name, Labels(g), *v);
    }
    if (lines.empty()) continue;
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}", m.name, m.help, m.name, m.type, lines);
  }
  std::string throttle;
  for (const GpuListing& g : gpus) {
    if (!g.snapshot.throttle_reasons) continue;
    for (const auto& [bit, reason] : kReasons) {
      throttle += fmt::format("headroom_gpu_throttle_reason{} {}\n",
                              Labels(g, fmt::format(R"(reason="{}")", reason)),
                              (*g.snapshot.throttle_reasons & bit) != 0 ? 1 : 0);
    }
  }
  if (!throttle.empty()) {
    out +=
        "# HELP headroom_gpu_throttle_reason 1 while the clocks are held down for the reason.\n"
        "# TYPE headroom_gpu_throttle_reason gauge\n" +
        throttle;
  }
  return out;
}

}  // namespace headroom::report
