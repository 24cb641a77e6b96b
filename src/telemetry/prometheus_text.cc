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

// The active power-smoothing preset, or nullptr when the driver named one it did not list.
const gpu::PowerSmoothingProfile* ActiveSmoothingProfile(const gpu::PowerSmoothingState& s) {
  const auto p = static_cast<size_t>(s.active_profile);
  return s.active_profile >= 0 && p < s.profiles.size() ? &s.profiles[p] : nullptr;
}

using SmoothingValue = std::optional<double> (*)(const gpu::PowerSmoothingState&);
struct SmoothingFamily {
  const char* name;
  const char* help;
  SmoothingValue value;
};

// Written only for GPUs that have power smoothing; the active preset's values.
const std::array<SmoothingFamily, 6> kSmoothingFamilies = {{
    {"headroom_gpu_power_smoothing_enabled", "1 while power smoothing is on.",
     [](const gpu::PowerSmoothingState& s) -> std::optional<double> { return s.enabled ? 1 : 0; }},
    {"headroom_gpu_power_smoothing_profile", "The active power-smoothing preset.",
     [](const gpu::PowerSmoothingState& s) -> std::optional<double> { return s.active_profile; }},
    {"headroom_gpu_power_smoothing_floor_watts", "The power floor in force (0 while off).",
     [](const gpu::PowerSmoothingState& s) {
       return Map(s.applied_floor, [](core::Watts w) { return w.value(); });
     }},
    {"headroom_gpu_power_smoothing_floor_ratio", "The active preset's floor as a fraction of TDP.",
     [](const gpu::PowerSmoothingState& s) -> std::optional<double> {
       const auto* p = ActiveSmoothingProfile(s);
       if (p == nullptr) return std::nullopt;
       return p->floor_percent / 100;
     }},
    {"headroom_gpu_power_smoothing_ramp_up_watts_per_second",
     "The active preset's fastest power rise.",
     [](const gpu::PowerSmoothingState& s) -> std::optional<double> {
       const auto* p = ActiveSmoothingProfile(s);
       if (p == nullptr) return std::nullopt;
       return p->ramp_up_w_per_s;
     }},
    {"headroom_gpu_power_smoothing_ramp_down_watts_per_second",
     "The active preset's fastest power fall.",
     [](const gpu::PowerSmoothingState& s) -> std::optional<double> {
       const auto* p = ActiveSmoothingProfile(s);
       if (p == nullptr) return std::nullopt;
       return p->ramp_down_w_per_s;
     }},
}};

void WritePowerSmoothingMetrics(const std::vector<gpu::GpuListing>& gpus, PrometheusWriter& out) {
  out.Family("headroom_gpu_power_smoothing_supported", "gauge",
             "1 when the GPU has power smoothing (Blackwell and later).");
  for (const gpu::GpuListing& g : gpus) out.Sample(g.power_smoothing ? 1 : 0, Labels(g));
  for (const SmoothingFamily& f : kSmoothingFamilies) {
    out.Family(f.name, "gauge", f.help);
    for (const gpu::GpuListing& g : gpus) {
      if (!g.power_smoothing) continue;
      if (auto v = f.value(*g.power_smoothing)) out.Sample(*v, Labels(g));
    }
  }
}

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
  WritePowerSmoothingMetrics(gpus, out);
}

std::string GpuMetricsText(const std::vector<gpu::GpuListing>& gpus) {
  PrometheusWriter out;
  WriteGpuMetrics(gpus, out);
  return out.text();
}

}  // namespace headroom::telemetry
