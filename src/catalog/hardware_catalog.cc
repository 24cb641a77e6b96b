#include "catalog/hardware_catalog.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "catalog/embedded_data.h"
#include "core/parse.h"

namespace headroom::catalog {
namespace {

using core::Error;
using core::Fail;
using core::Megahertz;
using core::Result;
using core::Status;
using core::Watts;
using core::YamlReader;

core::Duration Millis(double ms) { return core::FromSeconds(ms / 1000.0); }

Status ParsePowerLimits(const YamlReader& doc, model::GpuSpec& gpu) {
  HEADROOM_ASSIGN_OR_RETURN(YamlReader limits, doc.Map("power_limit_w"));
  HEADROOM_RETURN_IF_ERROR(limits.CheckKnownKeys({"min", "max", "default"}));
  HEADROOM_ASSIGN_OR_RETURN(double min, limits.NumberIn("min", 1, 5000));
  HEADROOM_ASSIGN_OR_RETURN(double max, limits.NumberIn("max", min, 5000));
  HEADROOM_ASSIGN_OR_RETURN(double def, limits.NumberIn("default", min, max));
  gpu.power_limit_min = Watts(min);
  gpu.power_limit_max = Watts(max);
  gpu.power_limit_default = Watts(def);
  return core::Ok();
}

Status ParseClocks(const YamlReader& doc, model::GpuSpec& gpu) {
  HEADROOM_ASSIGN_OR_RETURN(YamlReader clocks, doc.Map("sm_clock_mhz"));
  HEADROOM_RETURN_IF_ERROR(clocks.CheckKnownKeys({"min", "max", "base", "step", "idle"}));
  HEADROOM_ASSIGN_OR_RETURN(double min, clocks.NumberIn("min", 1, 10000));
  HEADROOM_ASSIGN_OR_RETURN(double max, clocks.NumberIn("max", min + 1, 10000));
  HEADROOM_ASSIGN_OR_RETURN(double base, clocks.NumberIn("base", min, max));
  HEADROOM_ASSIGN_OR_RETURN(double step, clocks.NumberIn("step", 1, max - min));
  HEADROOM_ASSIGN_OR_RETURN(double idle, clocks.NumberIn("idle", min, max));
  gpu.sm_clock_min = Megahertz(min);
  gpu.sm_clock_max = Megahertz(max);
  gpu.sm_clock_base = Megahertz(base);
  gpu.sm_clock_step = Megahertz(step);
  gpu.sm_clock_idle = Megahertz(idle);
  HEADROOM_ASSIGN_OR_RETURN(double brake, doc.NumberIn("brake_clock_mhz", 1, max));
  HEADROOM_ASSIGN_OR_RETURN(double mem, doc.NumberIn("memory_clock_mhz", 1, 100000));
  gpu.brake_clock = Megahertz(brake);
  gpu.memory_clock = Megahertz(mem);
  return core::Ok();
}

Status ParsePowerModel(const YamlReader& doc, model::GpuSpec& gpu) {
  HEADROOM_ASSIGN_OR_RETURN(YamlReader pm, doc.Map("power_model"));
  HEADROOM_RETURN_IF_ERROR(
      pm.CheckKnownKeys({"active_w", "sm_w", "memory_w", "voltage_floor", "voltage_knee_mhz"}));
  HEADROOM_ASSIGN_OR_RETURN(gpu.power.active_w, pm.NumberIn("active_w", 0, 5000));
  HEADROOM_ASSIGN_OR_RETURN(gpu.power.sm_w, pm.NumberIn("sm_w", 0, 5000));
  HEADROOM_ASSIGN_OR_RETURN(gpu.power.memory_w, pm.NumberIn("memory_w", 0, 5000));
  HEADROOM_ASSIGN_OR_RETURN(gpu.power.voltage_floor, pm.NumberIn("voltage_floor", 0.05, 1.0));
  HEADROOM_ASSIGN_OR_RETURN(double knee,
                            pm.NumberIn("voltage_knee_mhz", 0, gpu.sm_clock_max.value()));
  gpu.power.voltage_knee = Megahertz(knee);
  return core::Ok();
}

Status ParseTraits(const YamlReader& doc, model::GpuSpec& gpu) {
  HEADROOM_ASSIGN_OR_RETURN(YamlReader sensor, doc.Map("sensor"));
  HEADROOM_RETURN_IF_ERROR(sensor.CheckKnownKeys(
      {"classic_power_is_average", "instant_window_ms", "instant_period_ms", "energy_update_ms"}));
  HEADROOM_ASSIGN_OR_RETURN(gpu.sensor.classic_power_is_average,
                            sensor.Bool("classic_power_is_average"));
  HEADROOM_ASSIGN_OR_RETURN(double period, sensor.NumberIn("instant_period_ms", 1, 10000));
  HEADROOM_ASSIGN_OR_RETURN(double window, sensor.NumberIn("instant_window_ms", 1, period));
  HEADROOM_ASSIGN_OR_RETURN(double energy, sensor.NumberIn("energy_update_ms", 1, 10000));
  gpu.sensor.instant_period = Millis(period);
  gpu.sensor.instant_window = Millis(window);
  gpu.sensor.energy_update_period = Millis(energy);

  HEADROOM_ASSIGN_OR_RETURN(YamlReader limiter, doc.Map("limiter"));
  HEADROOM_RETURN_IF_ERROR(limiter.CheckKnownKeys({"tau_down_ms", "tau_up_ms"}));
  HEADROOM_ASSIGN_OR_RETURN(double down, limiter.NumberIn("tau_down_ms", 0, 60000));
  HEADROOM_ASSIGN_OR_RETURN(double up, limiter.NumberIn("tau_up_ms", 0, 60000));
  gpu.limiter.tau_down = Millis(down);
  gpu.limiter.tau_up = Millis(up);

  HEADROOM_ASSIGN_OR_RETURN(YamlReader thermal, doc.Map("thermal"));
  HEADROOM_RETURN_IF_ERROR(thermal.CheckKnownKeys({"ambient_c", "c_per_w", "tau_s"}));
  HEADROOM_ASSIGN_OR_RETURN(double ambient, thermal.NumberIn("ambient_c", -20, 80));
  HEADROOM_ASSIGN_OR_RETURN(gpu.thermal.c_per_w, thermal.NumberIn("c_per_w", 0, 10));
  HEADROOM_ASSIGN_OR_RETURN(double tau, thermal.NumberIn("tau_s", 0.001, 3600));
  gpu.thermal.ambient = core::Celsius(ambient);
  gpu.thermal.tau = core::FromSeconds(tau);
  return core::Ok();
}

Status ParseCapabilities(const YamlReader& doc, model::GpuSpec& gpu) {
  HEADROOM_ASSIGN_OR_RETURN(double mib, doc.NumberIn("memory_mib", 1, 1e8));
  HEADROOM_ASSIGN_OR_RETURN(double bw, doc.NumberIn("memory_bandwidth_gb_s", 1, 1e6));
  HEADROOM_ASSIGN_OR_RETURN(double bf16, doc.NumberIn("bf16_tflops", 0.001, 1e6));
  HEADROOM_ASSIGN_OR_RETURN(double fp16, doc.NumberIn("fp16_tflops", 0.001, 1e6));
  HEADROOM_ASSIGN_OR_RETURN(double sms, doc.NumberIn("sm_count", 1, 100000));
  HEADROOM_ASSIGN_OR_RETURN(double link, doc.NumberIn("interconnect_gb_s", 1, 1e5));
  gpu.interconnect_bytes_per_s = link * 1e9;
  gpu.memory_bytes = static_cast<std::uint64_t>(mib) * 1024ULL * 1024ULL;
  gpu.memory_bandwidth_bytes_per_s = bw * 1e9;
  gpu.bf16_flops_per_s = bf16 * 1e12;
  gpu.fp16_flops_per_s = fp16 * 1e12;
  gpu.sm_count = static_cast<int>(sms);

  HEADROOM_ASSIGN_OR_RETURN(YamlReader mig, doc.Map("mig"));
  HEADROOM_RETURN_IF_ERROR(mig.CheckKnownKeys({"supported", "max_instances"}));
  HEADROOM_ASSIGN_OR_RETURN(gpu.mig_supported, mig.Bool("supported"));
  HEADROOM_ASSIGN_OR_RETURN(double max_instances, mig.NumberIn("max_instances", 0, 64));
  gpu.mig_max_instances = static_cast<int>(max_instances);
  return core::Ok();
}

}  // namespace

Result<model::GpuSpec> ParseGpuSpec(const YamlReader& doc) {
  HEADROOM_RETURN_IF_ERROR(doc.CheckKnownKeys({"kind",
                                               "name",
                                               "aliases",
                                               "nvml_name",
                                               "architecture",
                                               "tdp_w",
                                               "power_limit_w",
                                               "idle_power_w",
                                               "sm_clock_mhz",
                                               "brake_clock_mhz",
                                               "memory_clock_mhz",
                                               "memory_mib",
                                               "memory_bandwidth_gb_s",
                                               "bf16_tflops",
                                               "fp16_tflops",
                                               "interconnect_gb_s",
                                               "sm_count",
                                               "mig",
                                               "power_model",
                                               "sensor",
                                               "limiter",
                                               "thermal"}));
  model::GpuSpec gpu;
  HEADROOM_ASSIGN_OR_RETURN(gpu.name, doc.String("name"));
  HEADROOM_ASSIGN_OR_RETURN(gpu.aliases, doc.StringList("aliases"));
  HEADROOM_ASSIGN_OR_RETURN(gpu.nvml_name, doc.String("nvml_name"));
  HEADROOM_ASSIGN_OR_RETURN(gpu.architecture, doc.String("architecture"));
  HEADROOM_ASSIGN_OR_RETURN(double tdp, doc.NumberIn("tdp_w", 1, 5000));
  gpu.tdp = Watts(tdp);
  HEADROOM_RETURN_IF_ERROR(ParsePowerLimits(doc, gpu));
  HEADROOM_ASSIGN_OR_RETURN(double idle, doc.NumberIn("idle_power_w", 0, tdp));
  gpu.idle_power = Watts(idle);
  HEADROOM_RETURN_IF_ERROR(ParseClocks(doc, gpu));
  HEADROOM_RETURN_IF_ERROR(ParseCapabilities(doc, gpu));
  HEADROOM_RETURN_IF_ERROR(ParsePowerModel(doc, gpu));
  HEADROOM_RETURN_IF_ERROR(ParseTraits(doc, gpu));
  return gpu;
}

Result<model::ServerSpec> ParseServerSpec(const YamlReader& doc) {
  HEADROOM_RETURN_IF_ERROR(
      doc.CheckKnownKeys({"kind", "name", "aliases", "gpu", "gpus_per_server", "non_gpu_power_w",
                          "non_gpu_idle_w", "max_system_power_w"}));
  model::ServerSpec server;
  HEADROOM_ASSIGN_OR_RETURN(server.name, doc.String("name"));
  HEADROOM_ASSIGN_OR_RETURN(server.aliases, doc.StringList("aliases"));
  HEADROOM_ASSIGN_OR_RETURN(server.gpu, doc.String("gpu"));
  HEADROOM_ASSIGN_OR_RETURN(double count, doc.NumberIn("gpus_per_server", 1, 64));
  server.gpus_per_server = static_cast<int>(count);
  HEADROOM_ASSIGN_OR_RETURN(double non_gpu, doc.NumberIn("non_gpu_power_w", 0, 1e6));
  HEADROOM_ASSIGN_OR_RETURN(double max_system, doc.NumberIn("max_system_power_w", 1, 1e6));
  server.non_gpu_power = Watts(non_gpu);
  // Absent: the rest of the server draws the same whatever its GPUs do (a constant).
  HEADROOM_ASSIGN_OR_RETURN(std::optional<double> idle, doc.OptionalNumber("non_gpu_idle_w"));
  if (idle && !(*idle >= 0 && *idle <= non_gpu)) {
    return Fail(
        doc.ErrorAt("non_gpu_idle_w",
                    fmt::format("{} W must be in [0, non_gpu_power_w = {} W]", *idle, non_gpu)));
  }
  server.non_gpu_idle_power = Watts(idle.value_or(non_gpu));
  server.max_system_power = Watts(max_system);
  return server;
}

Result<HardwareCatalog> HardwareCatalog::FromFiles(std::span<const SourceFile> files) {
  HardwareCatalog catalog;
  NameRegistry names;
  for (const SourceFile& file : files) {
    HEADROOM_ASSIGN_OR_RETURN(YamlReader doc, YamlReader::Parse(file.text, file.path));
    HEADROOM_ASSIGN_OR_RETURN(std::string kind, doc.String("kind"));
    if (kind == "gpu") {
      HEADROOM_ASSIGN_OR_RETURN(model::GpuSpec gpu, ParseGpuSpec(doc));
      HEADROOM_RETURN_IF_ERROR(names.Claim(gpu.name, gpu.aliases, file.path));
      catalog.gpus_.push_back(std::move(gpu));
    } else if (kind == "server") {
      HEADROOM_ASSIGN_OR_RETURN(model::ServerSpec server, ParseServerSpec(doc));
      HEADROOM_RETURN_IF_ERROR(names.Claim(server.name, server.aliases, file.path));
      catalog.servers_.push_back(std::move(server));
    } else {
      return Fail(doc.ErrorAt("kind", fmt::format("'{}' is neither gpu nor server", kind)));
    }
  }
  for (const model::ServerSpec& server : catalog.servers_) {
    auto gpu = catalog.Gpu(server.gpu);
    if (!gpu) return Fail(gpu.error().WithContext(fmt::format("server '{}'", server.name)));
    const Watts at_tdp = (*gpu)->tdp * server.gpus_per_server + server.non_gpu_power;
    if (at_tdp > server.max_system_power) {
      return Fail(Error::InvalidArgument(fmt::format(
          "server '{}': {} GPUs at TDP plus non-GPU power ({} W) exceed max_system_power_w ({} W)",
          server.name, server.gpus_per_server, at_tdp.value(), server.max_system_power.value())));
    }
  }
  auto by_name = [](const auto& a, const auto& b) { return a.name < b.name; };
  std::sort(catalog.gpus_.begin(), catalog.gpus_.end(), by_name);
  std::sort(catalog.servers_.begin(), catalog.servers_.end(), by_name);
  return catalog;
}

Result<HardwareCatalog> HardwareCatalog::LoadDirectory(const std::string& dir) {
  HEADROOM_ASSIGN_OR_RETURN(std::vector<SourceFile> files, ReadYamlDirectory(dir));
  return FromFiles(files);
}

Result<HardwareCatalog> HardwareCatalog::Embedded() {
  return FromFiles(FromEmbedded(EmbeddedHardwareFiles()));
}

Result<const model::GpuSpec*> HardwareCatalog::Gpu(std::string_view name) const {
  return FindByName(gpus_, name, "GPU type");
}

Result<const model::ServerSpec*> HardwareCatalog::Server(std::string_view name) const {
  return FindByName(servers_, name, "server type");
}

const model::GpuSpec* HardwareCatalog::GpuByNvmlName(std::string_view nvml_name) const {
  for (const auto& gpu : gpus_) {
    if (gpu.nvml_name == nvml_name) return &gpu;
  }
  return nullptr;
}

}  // namespace headroom::catalog
