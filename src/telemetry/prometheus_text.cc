#include "telemetry/prometheus_text.h"

#include <array>
#include <functional>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace headroom::telemetry {
namespace {

struct Metric {
  const char* name;
  const char* type;
  const char* help;
  std::function<std::optional<double>(const gpu::GpuListing&)> value;
};

std::vector<std::pair<std::string, std::string>> Labels(const gpu::GpuListing& g) {
  return {{"gpu", std::to_string(g.info.index)}, {"uuid", g.info.uuid}, {"name", g.info.name}};
}

template <class T, class F>
std::optional<double> Map(const std::optional<T>& v, F&& f) {
  return v ? std::optional<double>(f(*v)) : std::nullopt;
}

const std::vector<Metric>& Metrics() {
  static const auto* metrics = new std::vector<Metric>{
      {"headroom_gpu_power_watts", "gauge", "GPU power draw, most recent sensor window.",
       [](const gpu::GpuListing& g) {
         return Map(g.snapshot.power_instant, [](core::Watts w) { return w.value(); });
       }},
      {"headroom_gpu_power_average_watts", "gauge", "GPU power draw averaged over 1 s.",
       [](const gpu::GpuListing& g) {
         return Map(g.snapshot.power_average, [](core::Watts w) { return w.value(); });
       }},
      {"headroom_gpu_energy_joules_total", "counter",
       "Energy the GPU consumed since the driver loaded.",
       [](const gpu::GpuListing& g) {
         return Map(g.snapshot.energy_counter, [](core::Joules j) { return j.value(); });
       }},
      {"headroom_gpu_sm_clock_hertz", "gauge", "Current SM clock.",
       [](const gpu::GpuListing& g) {
         return Map(g.snapshot.sm_clock, [](core::Megahertz f) { return f.value() * 1e6; });
       }},
      {"headroom_gpu_memory_clock_hertz", "gauge", "Current memory clock.",
       [](const gpu::GpuListing& g) {
         return Map(g.snapshot.memory_clock, [](core::Megahertz f) { return f.value() * 1e6; });
       }},
      {"headroom_gpu_power_limit_watts", "gauge",
       "Enforced power limit (the lowest of all limiters, out-of-band caps included).",
       [](const gpu::GpuListing& g) {
         return Map(g.snapshot.power_limits, [](const auto& l) { return l.enforced.value(); });
       }},
      {"headroom_gpu_power_limit_default_watts", "gauge", "Factory default power limit (TDP).",
       [](const gpu::GpuListing& g) {
         return Map(g.snapshot.power_limits, [](const auto& l) { return l.default_limit.value(); });
       }},
      {"headroom_gpu_utilization_ratio", "gauge", "Fraction of time a kernel ran.",
       [](const gpu::GpuListing& g) {
         return Map(g.snapshot.utilization, [](const auto& u) { return u.gpu_percent / 100; });
       }},
      {"headroom_gpu_memory_utilization_ratio", "gauge",
       "Fraction of time memory was read or written.",
       [](const gpu::GpuListing& g) {
         return Map(g.snapshot.utilization, [](const auto& u) { return u.memory_percent / 100; });
       }},
      {"headroom_gpu_temperature_celsius", "gauge", "GPU die temperature.",
       [](const gpu::GpuListing& g) {
         return Map(g.snapshot.temperature, [](core::Celsius c) { return c.value(); });
       }},
      {"headroom_gpu_memory_used_bytes", "gauge", "GPU memory in use.",
       [](const gpu::GpuListing& g) {
         return Map(g.snapshot.memory,
                    [](const auto& m) { return static_cast<double>(m.used_bytes); });
       }},
      {"headroom_gpu_memory_total_bytes", "gauge", "GPU memory in total.",
       [](const gpu::GpuListing& g) {
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

void PrometheusWriter::Family(std::string_view name, std::string_view type, std::string_view help) {
  name_ = std::string(name);
  header_ = fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void PrometheusWriter::Line(std::string_view labels, double value) {
  out_ += header_;
  header_.clear();
  out_ += fmt::format("{}{} {}\n", name_, labels, value);
}

void PrometheusWriter::Sample(double value, Labels labels) {
  Sample(value, std::vector<std::pair<std::string, std::string>>(labels.begin(), labels.end()));
}

void PrometheusWriter::Sample(double value,
                              const std::vector<std::pair<std::string, std::string>>& labels) {
  std::string text;
  for (const auto& [name, v] : labels) {
    text += fmt::format("{}{}=\"{}\"", text.empty() ? "{" : ",", name, EscapeLabelValue(v));
  }
  if (!text.empty()) text += "}";
  Line(text, value);
}

void WriteGpuMetrics(const std::vector<gpu::GpuListing>& gpus, PrometheusWriter& out) {
  for (const Metric& m : Metrics()) {
    out.Family(m.name, m.type, m.help);
    for (const gpu::GpuListing& g : gpus) {
      if (auto v = m.value(g)) out.Sample(*v, Labels(g));
    }
  }
  out.Family("headroom_gpu_throttle_reason", "gauge",
             "1 while the clocks are held down for the reason.");
  for (const gpu::GpuListing& g : gpus) {
    if (!g.snapshot.throttle_reasons) continue;
    for (const auto& [bit, reason] : kReasons) {
      auto labels = Labels(g);
      labels.emplace_back("reason", reason);
      out.Sample((*g.snapshot.throttle_reasons & bit) != 0 ? 1 : 0, labels);
    }
  }
}

std::string GpuMetricsText(const std::vector<gpu::GpuListing>& gpus) {
  PrometheusWriter out;
  WriteGpuMetrics(gpus, out);
  return out.text();
}

}  // namespace headroom::telemetry
