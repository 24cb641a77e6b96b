#include "gpu/nvml/nvml_device.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/parse.h"

namespace headroom::gpu::nvml {
namespace {

using core::Error;
using core::Fail;

core::Watts FromMilliwatts(unsigned int mw) { return core::Watts(mw / 1000.0); }
unsigned int ToMilliwatts(core::Watts w) {
  return static_cast<unsigned int>(std::llround(w.value() * 1000.0));
}

// The handle of the physical GPU named by `selector` (index, GPU UUID or MIG UUID).
core::Result<nvmlDevice_t> Resolve(const NvmlApi& api, std::string_view selector) {
  const std::string text(core::Trim(selector));
  nvmlDevice_t handle = nullptr;
  if (auto index = core::ParseInteger(text); index && *index >= 0) {
    const nvmlReturn_t rc = api.get_handle_by_index(static_cast<unsigned int>(*index), &handle);
    if (rc != kSuccess) return Fail(api.ErrorFor(rc, fmt::format("GPU index {}", text)));
    return handle;
  }
  if (api.get_handle_by_uuid == nullptr) {
    return Fail(Error::Unimplemented(
        fmt::format("GPU '{}': this NVML cannot look GPUs up by UUID; use an index", text)));
  }
  const nvmlReturn_t rc = api.get_handle_by_uuid(text.c_str(), &handle);
  if (rc != kSuccess) return Fail(api.ErrorFor(rc, fmt::format("GPU '{}'", text)));
  if (text.starts_with("MIG-")) {
    // Power, energy and limits exist only for the physical GPU (nvml.md §2, MIG).
    if (api.get_parent_of_mig == nullptr) {
      return Fail(Error::Unimplemented(
          fmt::format("GPU '{}': this NVML cannot map a MIG device to its GPU", text)));
    }
    nvmlDevice_t parent = nullptr;
    const nvmlReturn_t prc = api.get_parent_of_mig(handle, &parent);
    if (prc != kSuccess) return Fail(api.ErrorFor(prc, fmt::format("GPU '{}' parent", text)));
    handle = parent;
  }
  return handle;
}

std::vector<std::string> Selectors(const NvmlOpenOptions& options, unsigned int count) {
  if (!options.selectors.empty()) return options.selectors;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr) {
    std::vector<std::string> out;
    for (std::string_view part : core::Split(visible, ',')) {
      if (!core::Trim(part).empty()) out.emplace_back(core::Trim(part));
    }
    return out;
  }
  std::vector<std::string> all;
  for (unsigned int i = 0; i < count; ++i) all.push_back(std::to_string(i));
  return all;
}

DeviceInfo Describe(const NvmlApi& api, nvmlDevice_t handle, unsigned int fallback_index,
                    const NvmlOpenOptions& options) {
  DeviceInfo info;
  unsigned int index = fallback_index;
  if (api.get_index != nullptr) api.get_index(handle, &index);
  info.index = static_cast<int>(index);
  std::array<char, 128> buffer{};
  if (api.get_name && api.get_name(handle, buffer.data(), kDeviceNameBufferSize) == kSuccess) {
    info.name = buffer.data();
  }
  buffer.fill(0);
  if (api.get_uuid && api.get_uuid(handle, buffer.data(), kDeviceUuidBufferSize) == kSuccess) {
    info.uuid = buffer.data();
  }
  if (options.catalog_type_for_name) info.catalog_type = options.catalog_type_for_name(info.name);
  nvmlMemory_t memory{};
  if (api.get_memory_info && api.get_memory_info(handle, &memory) == kSuccess) {
    info.memory_total_bytes = memory.total;
  }
  unsigned int mhz = 0;
  if (api.get_max_clock_info && api.get_max_clock_info(handle, kClockSm, &mhz) == kSuccess) {
    info.sm_clock_max = core::Megahertz(mhz);
  }
  if (api.get_max_clock_info && api.get_max_clock_info(handle, kClockMem, &mhz) == kSuccess) {
    info.memory_clock_max = core::Megahertz(mhz);
  }
  return info;
}

}  // namespace

core::Result<std::shared_ptr<NvmlSession>> NvmlSession::Open() {
  HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<NvmlLibrary> library, NvmlLibrary::Open());
  HEADROOM_ASSIGN_OR_RETURN(NvmlApi api, NvmlApi::Load(*library));
  const nvmlReturn_t rc = api.init();
  if (rc != kSuccess) {
    const core::Error e =
        api.ErrorFor(rc, fmt::format("NVML could not start ({})", library->path()));
    return Fail(core::Error(e.code(), e.message() + "; use --backend sim for simulated GPUs"));
  }
  return std::shared_ptr<NvmlSession>(new NvmlSession(std::move(library), api));
}

NvmlSession::~NvmlSession() { api_.shutdown(); }

core::Result<std::vector<std::unique_ptr<Device>>> OpenNvmlDevices(const NvmlOpenOptions& options) {
  HEADROOM_ASSIGN_OR_RETURN(std::shared_ptr<NvmlSession> session, NvmlSession::Open());
  const NvmlApi& api = session->api();
  unsigned int count = 0;
  if (const nvmlReturn_t rc = api.get_count(&count); rc != kSuccess) {
    return Fail(api.ErrorFor(rc, "counting GPUs"));
  }
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<nvmlDevice_t> seen;
  for (const std::string& selector : Selectors(options, count)) {
    HEADROOM_ASSIGN_OR_RETURN(nvmlDevice_t handle, Resolve(api, selector));
    // Several MIG devices of one GPU select that GPU once.
    if (std::find(seen.begin(), seen.end(), handle) != seen.end()) continue;
    seen.push_back(handle);
    DeviceInfo info = Describe(api, handle, static_cast<unsigned int>(devices.size()), options);
    devices.push_back(std::make_unique<NvmlDevice>(session, handle, std::move(info)));
  }
  if (devices.empty()) return Fail(Error::NotFound("NVML reports no GPUs"));
  return devices;
}

NvmlDevice::NvmlDevice(std::shared_ptr<NvmlSession> session, nvmlDevice_t handle, DeviceInfo info)
    : session_(std::move(session)), api_(session_->api()), handle_(handle), info_(std::move(info)) {
  // Probe the power fields once (12.x+ drivers; nvml.md §5.1). A failing entry means absent.
  has_instant_field_ = PowerField(kFieldPowerInstant, "probe").has_value();
  has_average_field_ = PowerField(kFieldPowerAverage, "probe").has_value();
}

core::Status NvmlDevice::Check(nvmlReturn_t rc, const char* what) const {
  if (rc == kSuccess) return core::Ok();
  return Fail(api_.ErrorFor(rc, fmt::format("GPU {}: {}", info_.index, what)));
}

core::Status NvmlDevice::Require(const void* fn, const char* what) const {
  if (fn != nullptr) return core::Ok();
  return Fail(Error::Unimplemented(
      fmt::format("GPU {}: {}: not available in {}", info_.index, what, session_->library_path())));
}

core::Result<unsigned int> NvmlDevice::PowerField(unsigned int field_id, const char* what) const {
  HEADROOM_RETURN_IF_ERROR(Require(reinterpret_cast<const void*>(api_.get_field_values), what));
  nvmlFieldValue_t value{};
  value.fieldId = field_id;
  HEADROOM_RETURN_IF_ERROR(Check(api_.get_field_values(handle_, 1, &value), what));
  // The call succeeds if any entry was filled: each entry carries its own status.
  HEADROOM_RETURN_IF_ERROR(Check(value.nvmlReturn, what));
  return value.value.uiVal;
}

core::Result<core::Watts> NvmlDevice::PowerInstant() {
  if (has_instant_field_) {
    HEADROOM_ASSIGN_OR_RETURN(unsigned int mw, PowerField(kFieldPowerInstant, "instant power"));
    return FromMilliwatts(mw);
  }
  // Without the field, the classic reading: instantaneous on A100 and older, a 1 s average on
  // newer GPUs (nvml.md §5.1).
  HEADROOM_RETURN_IF_ERROR(Require(reinterpret_cast<const void*>(api_.get_power_usage), "power"));
  unsigned int mw = 0;
  HEADROOM_RETURN_IF_ERROR(Check(api_.get_power_usage(handle_, &mw), "power"));
  return FromMilliwatts(mw);
}

core::Result<core::Watts> NvmlDevice::PowerAverage() {
  if (!has_average_field_) {
    return Fail(Error::Unimplemented(
        fmt::format("GPU {}: 1 s average power: field 185 not supported", info_.index)));
  }
  HEADROOM_ASSIGN_OR_RETURN(unsigned int mw, PowerField(kFieldPowerAverage, "average power"));
  return FromMilliwatts(mw);
}

core::Result<core::Joules> NvmlDevice::EnergyCounter() {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.get_total_energy), "energy counter"));
  unsigned long long mj = 0;
  HEADROOM_RETURN_IF_ERROR(Check(api_.get_total_energy(handle_, &mj), "energy counter"));
  return core::Joules(static_cast<double>(mj) / 1000.0);
}

core::Result<std::vector<PowerSample>> NvmlDevice::PowerSamples(std::uint64_t after_us) {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.get_samples), "power samples"));
  // The usual two calls: the size, then the samples (nvml.md §2, "Sample buffer").
  int value_type = 0;
  unsigned int count = 0;
  nvmlReturn_t rc =
      api_.get_samples(handle_, kTotalPowerSamples, after_us, &value_type, &count, nullptr);
  if (rc == kErrorNotFound) return std::vector<PowerSample>{};  // nothing new
  HEADROOM_RETURN_IF_ERROR(Check(rc, "power samples"));
  std::vector<nvmlSample_t> raw(count);
  rc = api_.get_samples(handle_, kTotalPowerSamples, after_us, &value_type, &count, raw.data());
  if (rc == kErrorNotFound) return std::vector<PowerSample>{};
  HEADROOM_RETURN_IF_ERROR(Check(rc, "power samples"));
  std::vector<PowerSample> out;
  for (unsigned int i = 0; i < count && i < raw.size(); ++i) {
    if (raw[i].timeStamp <= after_us) continue;
    out.push_back({raw[i].timeStamp, FromMilliwatts(raw[i].sampleValue.uiVal)});
  }
  std::sort(out.begin(), out.end(), [](const PowerSample& a, const PowerSample& b) {
    return a.timestamp_us < b.timestamp_us;
  });
  return out;
}

core::Result<core::Megahertz> NvmlDevice::SmClock() {
  HEADROOM_RETURN_IF_ERROR(Require(reinterpret_cast<const void*>(api_.get_clock_info), "SM clock"));
  unsigned int mhz = 0;
  HEADROOM_RETURN_IF_ERROR(Check(api_.get_clock_info(handle_, kClockSm, &mhz), "SM clock"));
  return core::Megahertz(mhz);
}

core::Result<core::Megahertz> NvmlDevice::MemoryClock() {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.get_clock_info), "memory clock"));
  unsigned int mhz = 0;
  HEADROOM_RETURN_IF_ERROR(Check(api_.get_clock_info(handle_, kClockMem, &mhz), "memory clock"));
  return core::Megahertz(mhz);
}

core::Result<std::vector<core::Megahertz>> NvmlDevice::SupportedSmClocks() {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.get_supported_memory_clocks), "supported clocks"));
  HEADROOM_RETURN_IF_ERROR(Require(
      reinterpret_cast<const void*>(api_.get_supported_graphics_clocks), "supported clocks"));
  // A fixed buffer is plenty: H100 lists on the order of 100 clocks (nvml.md §2).
  std::array<unsigned int, 512> buffer{};
  unsigned int count = buffer.size();
  HEADROOM_RETURN_IF_ERROR(Check(api_.get_supported_memory_clocks(handle_, &count, buffer.data()),
                                 "supported memory clocks"));
  if (count == 0) return Fail(Error::Unimplemented("no supported memory clocks reported"));
  const unsigned int mem = *std::max_element(buffer.begin(), buffer.begin() + count);
  count = buffer.size();
  HEADROOM_RETURN_IF_ERROR(
      Check(api_.get_supported_graphics_clocks(handle_, mem, &count, buffer.data()),
            "supported SM clocks"));
  std::vector<core::Megahertz> clocks;
  for (unsigned int i = 0; i < count; ++i) clocks.emplace_back(buffer[i]);
  std::sort(clocks.begin(), clocks.end(), std::greater<>());
  return clocks;
}

core::Result<UtilizationRates> NvmlDevice::Utilization() {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.get_utilization), "utilization"));
  nvmlUtilization_t u{};
  HEADROOM_RETURN_IF_ERROR(Check(api_.get_utilization(handle_, &u), "utilization"));
  return UtilizationRates{.gpu_percent = static_cast<double>(u.gpu),
                          .memory_percent = static_cast<double>(u.memory)};
}

core::Result<core::Celsius> NvmlDevice::Temperature() {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.get_temperature), "temperature"));
  unsigned int c = 0;
  HEADROOM_RETURN_IF_ERROR(
      Check(api_.get_temperature(handle_, kTemperatureGpu, &c), "temperature"));
  return core::Celsius(c);
}

core::Result<MemoryUsage> NvmlDevice::Memory() {
  HEADROOM_RETURN_IF_ERROR(Require(reinterpret_cast<const void*>(api_.get_memory_info), "memory"));
  nvmlMemory_t m{};
  HEADROOM_RETURN_IF_ERROR(Check(api_.get_memory_info(handle_, &m), "memory"));
  return MemoryUsage{.used_bytes = m.used, .total_bytes = m.total};
}

core::Result<PowerLimitState> NvmlDevice::PowerLimits() {
  for (const void* fn : {reinterpret_cast<const void*>(api_.get_power_limit),
                         reinterpret_cast<const void*>(api_.get_power_limit_constraints),
                         reinterpret_cast<const void*>(api_.get_power_default_limit)}) {
    HEADROOM_RETURN_IF_ERROR(Require(fn, "power limits"));
  }
  unsigned int min = 0, max = 0, def = 0, requested = 0;
  HEADROOM_RETURN_IF_ERROR(
      Check(api_.get_power_limit_constraints(handle_, &min, &max), "power limit constraints"));
  HEADROOM_RETURN_IF_ERROR(Check(api_.get_power_default_limit(handle_, &def), "default limit"));
  HEADROOM_RETURN_IF_ERROR(Check(api_.get_power_limit(handle_, &requested), "power limit"));
  // The enforced limit includes out-of-band (BMC) caps, exactly what a row controller sets
  // (nvml.md §5.8); without the call, the requested limit is the best we know.
  unsigned int enforced = requested;
  if (api_.get_enforced_power_limit != nullptr) {
    HEADROOM_RETURN_IF_ERROR(
        Check(api_.get_enforced_power_limit(handle_, &enforced), "enforced power limit"));
  }
  return PowerLimitState{.min = FromMilliwatts(min),
                         .max = FromMilliwatts(max),
                         .default_limit = FromMilliwatts(def),
                         .requested = FromMilliwatts(requested),
                         .enforced = FromMilliwatts(enforced)};
}

core::Result<std::uint64_t> NvmlDevice::ThrottleReasons() {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.get_clock_event_reasons), "throttle reasons"));
  unsigned long long reasons = 0;
  HEADROOM_RETURN_IF_ERROR(
      Check(api_.get_clock_event_reasons(handle_, &reasons), "throttle reasons"));
  return static_cast<std::uint64_t>(reasons);
}

core::Result<std::optional<ClockLock>> NvmlDevice::SmClockLock() {
  core::MutexLock lock(&mu_);
  return lock_;
}

core::Status NvmlDevice::SetPowerLimit(core::Watts limit) {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.set_power_limit), "set power limit"));
  HEADROOM_ASSIGN_OR_RETURN(PowerLimitState limits, PowerLimits());
  if (limit < limits.min || limit > limits.max) {
    return Fail(Error::OutOfRange(
        fmt::format("GPU {}: power limit {} W is outside the settable range [{}, {}] W",
                    info_.index, limit.value(), limits.min.value(), limits.max.value())));
  }
  return Check(api_.set_power_limit(handle_, ToMilliwatts(limit)), "set power limit");
}

core::Status NvmlDevice::ResetPowerLimit() {
  HEADROOM_ASSIGN_OR_RETURN(PowerLimitState limits, PowerLimits());
  return SetPowerLimit(limits.default_limit);
}

core::Status NvmlDevice::LockSmClocks(core::Megahertz min, core::Megahertz max) {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.set_locked_clocks), "lock SM clocks"));
  if (min > max || min.value() <= 0 ||
      (info_.sm_clock_max.has_value() && max > *info_.sm_clock_max)) {
    return Fail(Error::OutOfRange(fmt::format(
        "GPU {}: SM clock lock [{}, {}] MHz is outside the supported range or has min > max",
        info_.index, min.value(), max.value())));
  }
  core::MutexLock lock(&mu_);
  HEADROOM_RETURN_IF_ERROR(
      Check(api_.set_locked_clocks(handle_, static_cast<unsigned int>(std::lround(min.value())),
                                   static_cast<unsigned int>(std::lround(max.value()))),
            "lock SM clocks"));
  lock_ = ClockLock{min, max};
  return core::Ok();
}

core::Status NvmlDevice::ResetSmClocks() {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.reset_locked_clocks), "reset SM clocks"));
  core::MutexLock lock(&mu_);
  HEADROOM_RETURN_IF_ERROR(Check(api_.reset_locked_clocks(handle_), "reset SM clocks"));
  lock_.reset();
  return core::Ok();
}

}  // namespace headroom::gpu::nvml
