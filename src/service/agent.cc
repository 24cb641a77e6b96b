#include "service/agent.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <utility>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/check.h"
#include "core/files.h"
#include "gpu/snapshot.h"
#include "policy/same_target.h"
#include "service/agent_link.h"
#include "telemetry/prometheus_text.h"

namespace headroom::service {
namespace {

using nlohmann::ordered_json;

// Locks are compared by the rule the row controller compares targets by: the same clocks of the
// GPU's grid are the same lock, however the driver rounds them.
bool SameLock(const std::optional<gpu::ClockLock>& a, const std::optional<gpu::ClockLock>& b,
              const model::GpuSpec& spec) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (policy::SameClock(a->min, b->min, spec) && policy::SameClock(a->max, b->max, spec));
}

std::string LockText(const std::optional<gpu::ClockLock>& lock) {
  return lock ? fmt::format("{:.0f}-{:.0f} MHz", lock->min.value(), lock->max.value())
              : std::string("unlocked");
}

ordered_json LockJson(const std::optional<gpu::ClockLock>& lock) {
  if (!lock) return nullptr;
  return {{"min_mhz", lock->min.value()}, {"max_mhz", lock->max.value()}};
}

template <class T>
ordered_json OrNull(const std::optional<T>& v) {
  return v ? ordered_json(v->value()) : ordered_json(nullptr);
}

// What /v1/state shows of a GPU's power smoothing: whether it has it, and the active preset.
ordered_json SmoothingJson(const std::optional<gpu::PowerSmoothingState>& s) {
  if (!s) return {{"supported", false}};
  ordered_json out{{"supported", true},
                   {"enabled", s->enabled},
                   {"profile", s->active_profile},
                   {"applied_floor_w", OrNull(s->applied_floor)}};
  const auto p = static_cast<size_t>(s->active_profile);
  if (s->active_profile >= 0 && p < s->profiles.size()) {
    const gpu::PowerSmoothingProfile& a = s->profiles[p];
    out["floor_percent"] = a.floor_percent;
    out["ramp_up_w_per_s"] = a.ramp_up_w_per_s;
    out["ramp_down_w_per_s"] = a.ramp_down_w_per_s;
    out["ramp_down_hysteresis_ms"] = a.ramp_down_hysteresis_ms;
  }
  return out;
}

std::string Utc(std::chrono::system_clock::time_point t) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", std::chrono::floor<std::chrono::seconds>(t));
}

// The GPUs' rated idle power, summed: the J/token fit's idle power when no window was free of
// tokens (telemetry::TokenEnergyFit).
double RatedIdleW(const std::vector<AgentGpu>& gpus) {
  double w = 0;
  for (const AgentGpu& g : gpus) w += g.spec.idle_power.value();
  return w;
}

std::vector<GpuRange> Ranges(const std::vector<AgentGpu>& gpus) {
  std::vector<GpuRange> out;
  for (const AgentGpu& g : gpus) out.push_back(RangeOf(g.device->info().index, g.spec));
  return out;
}

// A GPU that cannot be read keeps its last listing (or an empty one), with a warning.
gpu::GpuListing Listing(gpu::Device& device, core::TimePoint now, const gpu::GpuListing& previous) {
  auto listing = gpu::ReadListing(device, now);
  if (listing) return *listing;
  spdlog::warn("reading GPU {}: {}", device.info().index, listing.error().message());
  if (!previous.info.uuid.empty()) return previous;
  gpu::GpuListing empty;
  empty.info = device.info();
  return empty;
}

// The state file is written by the agent alone (rw-------): another user who could change it
// would choose the settings the agent restores onto the GPUs.
constexpr unsigned kStateFileMode = 0600;
// Each GPU's originals take about 150 bytes; a larger file is not one the agent wrote.
constexpr std::size_t kMaxStateFileBytes = 1024 * 1024;

// What the state file holds is put back onto the GPUs, as root, at the next start: a directory
// another user can write would let them forge the file, or plant a link where the agent writes.
core::Status CheckStateDirectory(const std::string& state_file) {
  std::string dir = std::filesystem::path(state_file).parent_path().string();
  if (dir.empty()) dir = ".";
  auto checked = core::CheckPrivateDirectory(dir);
  // A missing directory fails the first write, which says so.
  if (checked || checked.error().code() == core::Code::kNotFound) return core::Ok();
  return core::Fail(core::Error::InvalidArgument(fmt::format(
      "--state-file {}: refused: {}; the agent restores the GPU settings this file holds, so "
      "keep it in a directory that only the agent's user owns and can write (e.g. `install -d "
      "-m 0700 /var/lib/headroom`, the systemd unit's StateDirectory)",
      state_file, checked.error().message())));
}

// A state file left by an agent that did not exit cleanly: its settings restored, then the
// file removed. Read without following a link, and only if no other user could have written it.
core::Status RestoreFromStateFile(const std::vector<gpu::Device*>& devices,
                                  const std::string& state_file) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(state_file, ec))) return core::Ok();
  auto text = core::ReadPrivateFile(state_file, kMaxStateFileBytes);
  if (!text) {
    return core::Fail(core::Error(
        text.error().code(),
        fmt::format("--state-file {}; not restored from: if the agent wrote it, `chown` it to "
                    "the agent's user and `chmod 0600` it, otherwise remove it",
                    text.error().message())));
  }
  auto saved = OriginalsFromJson(*text);
  if (!saved) return core::Fail(saved.error().WithContext(state_file));
  spdlog::warn(
      "state file {} exists: the previous agent did not exit cleanly; restoring the "
      "original GPU settings it saved",
      state_file);
  auto lines = RestoreOriginals(devices, *saved);
  if (!lines) {
    return core::Fail(lines.error().WithContext(fmt::format(
        "restoring the settings saved in {} (fix the GPUs, then remove the file)", state_file)));
  }
  for (const std::string& line : *lines) spdlog::warn("restored original {}", line);
  if (!std::filesystem::remove(state_file, ec) && ec) {
    return core::Fail(
        core::Error::Unavailable(fmt::format("removing {}: {}", state_file, ec.message())));
  }
  return core::Ok();
}

}  // namespace

core::Result<std::unique_ptr<Agent>> Agent::Create(std::vector<AgentGpu> gpus, AgentOptions options,
                                                   core::Clock* clock) {
  std::vector<gpu::Device*> devices;
  for (const AgentGpu& g : gpus) devices.push_back(g.device);
  HEADROOM_ASSIGN_OR_RETURN(std::optional<policy::EnergySaverSettings> saver,
                            EnergySaverSettingsFor(gpus, options.energy_saver));
  HEADROOM_RETURN_IF_ERROR(CheckStateDirectory(options.state_file));
  HEADROOM_RETURN_IF_ERROR(RestoreFromStateFile(devices, options.state_file));
  HEADROOM_ASSIGN_OR_RETURN(std::vector<OriginalSettings> originals, ReadOriginals(devices));
  // Saved now, before any request, and kept until a clean shutdown: an agent that could not
  // save the originals would have to refuse its first cap, which comes in a power emergency, and
  // a disk that fills up later cannot stop a cap.
  if (auto written =
          core::WriteFileAtomically(options.state_file, OriginalsToJson(originals), kStateFileMode);
      !written) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "--state-file {}: cannot write there ({}); the agent saves the GPUs' original settings "
        "there before it changes them: create the directory and make it writable",
        options.state_file, written.error().message())));
  }
  spdlog::info("saved the original GPU settings to {}", options.state_file);
  auto agent = std::unique_ptr<Agent>(
      new Agent(std::move(gpus), std::move(options), clock, std::move(originals)));
  agent->saver_settings_ = std::move(saver);
  {
    core::MutexLock lock(&agent->mu_);
    agent->ResetEnergySaver();
  }
  if (auto st = agent->ApplyPowerSmoothing(); !st) {
    if (auto restored = agent->Shutdown(); !restored) {
      spdlog::error("restoring after the failed start: {}", restored.error().message());
    }
    return core::Fail(st.error().WithContext("applying power_smoothing at start"));
  }
  // Fail safe from the start: until a controller's PUT arrives the GPUs hold the failsafe cap,
  // as after a lease that ran out. An agent restarted while no controller reaches it (a crash,
  // an OOM kill, an upgrade, a reboot during a controller outage) would otherwise run uncapped.
  if (auto st = agent->EnterFailsafe("started: no controller's PUT yet"); !st) {
    if (auto restored = agent->Shutdown(); !restored) {
      spdlog::error("restoring after the failed start: {}", restored.error().message());
    }
    return core::Fail(st.error().WithContext("applying the failsafe cap at start"));
  }
  agent->Tick();  // the first telemetry sample
  return agent;
}

Agent::Agent(std::vector<AgentGpu> gpus, AgentOptions options, core::Clock* clock,
             std::vector<OriginalSettings> originals)
    : gpus_(std::move(gpus)),
      ranges_(Ranges(gpus_)),
      options_(std::move(options)),
      clock_(clock),
      originals_(std::move(originals)),
      caps_(gpus_.size()),
      readback_(gpus_.size()),
      listings_(gpus_.size()),
      token_energy_(telemetry::kTokenEnergyWindows, RatedIdleW(gpus_)) {
  for (const char* result : {"applied", "rejected", "duplicate", "failed"}) commands_[result] = 0;
}

std::vector<gpu::Device*> Agent::Devices() const {
  std::vector<gpu::Device*> out;
  for (const AgentGpu& g : gpus_) out.push_back(g.device);
  return out;
}

std::optional<gpu::ClockLock> Agent::TargetLock(size_t i) const {
  const model::GpuSpec& spec = gpus_[i].spec;
  if (caps_[i].brake) {
    // Locks land on the clock grid (288 MHz on an A100 reads back as 285 MHz).
    const core::Megahertz brake = spec.SnapClock(spec.brake_clock);
    return gpu::ClockLock{brake, brake};
  }
  std::optional<core::Megahertz> cap = caps_[i].sm_clock;
  if (failsafe_active_)
    cap = cap ? std::min(*cap, gpus_[i].failsafe_clock) : gpus_[i].failsafe_clock;
  // The energy saver's clock composes with the row's: the lower wins.
  if (const std::optional<core::Megahertz> saver = SaverCap()) {
    cap = cap ? std::min(*cap, *saver) : *saver;
  }
  if (!cap) return originals_[i].lock;
  const core::Megahertz top = spec.SnapClock(*cap);
  return gpu::ClockLock{spec.sm_clock_min, top};
}

core::Watts Agent::TargetPowerLimit(size_t i) const {
  return caps_[i].power_limit.value_or(originals_[i].power_limit);
}

core::Status Agent::ApplyGpu(size_t i) {
  gpu::Device& device = *gpus_[i].device;
  const model::GpuSpec& spec = gpus_[i].spec;
  const std::optional<gpu::ClockLock> lock = TargetLock(i);
  const core::Watts limit = TargetPowerLimit(i);
  HEADROOM_CHECK(limit >= spec.power_limit_min && limit <= spec.power_limit_max)
      << "GPU " << device.info().index << ": power limit " << limit.value() << " W out of range";
  std::optional<core::Error> first;
  auto keep = [&first](core::Status st) {
    if (!st && !first) first = st.error();
  };
  auto limits = device.PowerLimits();
  if (!limits || !policy::SamePowerLimit(limits->requested, limit)) {
    keep(device.SetPowerLimit(limit));
  }
  auto current = device.SmClockLock();
  if (!current || !SameLock(*current, lock, spec)) {
    keep(lock ? device.LockSmClocks(lock->min, lock->max) : device.ResetSmClocks());
  }
  // Read back to confirm.
  Readback& rb = readback_[i];
  rb = Readback{};
  if (auto after = device.PowerLimits()) rb.power_limit = after->requested;
  if (auto after = device.SmClockLock()) rb.lock = *after;
  if (!rb.power_limit || !policy::SamePowerLimit(*rb.power_limit, limit)) {
    rb.mismatch = fmt::format(
        "power limit reads {} W, expected {:.0f} W",
        rb.power_limit ? fmt::format("{:.0f}", rb.power_limit->value()) : std::string("nothing"),
        limit.value());
  }
  if (!SameLock(rb.lock, lock, spec)) {
    if (!rb.mismatch.empty()) rb.mismatch += "; ";
    rb.mismatch +=
        fmt::format("SM clock lock reads {}, expected {}", LockText(rb.lock), LockText(lock));
  }
  if (!rb.mismatch.empty()) spdlog::warn("GPU {}: {}", device.info().index, rb.mismatch);
  listings_[i] = Listing(device, clock_->Now(), listings_[i]);
  if (first) {
    return core::Fail(first->WithContext(fmt::format("GPU {}", device.info().index)));
  }
  return core::Ok();
}

core::Status Agent::ApplyAll() {
  std::optional<core::Error> first;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    if (auto st = ApplyGpu(i); !st && !first) first = st.error();
  }
  if (first) return core::Fail(*first);
  return core::Ok();
}

ordered_json Agent::GpuCapsJson(size_t i) const {
  ordered_json j;
  j["index"] = gpus_[i].device->info().index;
  const std::optional<gpu::ClockLock> target = TargetLock(i);
  policy::ServerTargets held;
  held.power_limit = caps_[i].power_limit;
  held.brake = caps_[i].brake;
  if (caps_[i].sm_clock) held.sm_clock_cap = gpus_[i].spec.SnapClock(*caps_[i].sm_clock);
  j.update(TargetsJson(held));
  j["effective_sm_clock_lock"] = LockJson(target);
  j["read_back"] = {{"sm_clock_lock", LockJson(readback_[i].lock)},
                    {"power_limit_w", OrNull(readback_[i].power_limit)}};
  j["confirmed"] = readback_[i].mismatch.empty();
  if (!readback_[i].mismatch.empty()) j["mismatch"] = readback_[i].mismatch;
  return j;
}

core::Result<ordered_json> Agent::ApplyRequest(const CapsRequest& request) {
  std::vector<size_t> targets;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    const int index = gpus_[i].device->info().index;
    if (!request.gpus ||
        std::find(request.gpus->begin(), request.gpus->end(), index) != request.gpus->end()) {
      targets.push_back(i);
    }
  }
  for (size_t i : targets) {
    if (request.sm_clock) caps_[i].sm_clock = *request.sm_clock;
    if (request.power_limit) caps_[i].power_limit = *request.power_limit;
    if (request.brake) caps_[i].brake = *request.brake;
  }
  const bool was_failsafe = failsafe_active_;
  failsafe_active_ = false;
  // A PUT after a DELETE hands the GPUs back to the agent's policies, the energy saver included.
  saver_paused_ = false;
  if (was_failsafe) spdlog::info("failsafe lifted by request {}", request.request_id);
  core::Status st = was_failsafe ? ApplyAll() : core::Ok();
  if (!was_failsafe) {
    for (size_t i : targets) {
      if (auto s = ApplyGpu(i); !s && st) st = s;
    }
  }
  HEADROOM_RETURN_IF_ERROR(st);
  ordered_json out;
  out["result"] = "applied";
  out["request_id"] = request.request_id;
  out["gpus"] = ordered_json::array();
  for (size_t i : targets) out["gpus"].push_back(GpuCapsJson(i));
  return out;
}

void Agent::Remember(const CapsRequest& request, const ordered_json& response) {
  remembered_[request.request_id] = Remembered{request.canonical_body, response};
  remembered_order_.push_back(request.request_id);
  while (remembered_order_.size() > kRememberedRequests) {
    remembered_.erase(remembered_order_.front());
    remembered_order_.pop_front();
  }
}

void Agent::NoteCommand(const std::string& request_id, const std::string& result) {
  last_command_ = LastCommand{request_id, Utc(clock_->WallNow()), result};
}

core::Result<ordered_json> Agent::PutCaps(std::string_view body) {
  core::MutexLock lock(&mu_);
  auto request = ParseCapsRequest(body);
  if (!request) {
    ++commands_["rejected"];
    return core::Fail(request.error());
  }
  if (auto it = remembered_.find(request->request_id); it != remembered_.end()) {
    if (it->second.canonical_body != request->canonical_body) {
      ++commands_["rejected"];
      return core::Fail(core::Error::FailedPrecondition(fmt::format(
          "request_id '{}' was already used with a different body", request->request_id)));
    }
    ++commands_["duplicate"];
    return it->second.response;
  }
  if (auto st = ValidateCapsRequest(*request, ranges_); !st) {
    ++commands_["rejected"];
    NoteCommand(request->request_id, "rejected");
    return core::Fail(st.error());
  }
  const core::TimePoint now = clock_->Now();
  lease_deadline_ = now + request->lease;
  lease_expired_ = false;
  ordered_json response;
  if (options_.actuation_delay > core::Duration::zero()) {
    pending_.push_back(Pending{now + options_.actuation_delay, *request});
    response = {{"result", "scheduled"},
                {"request_id", request->request_id},
                {"apply_in_s", core::ToSeconds(options_.actuation_delay)}};
  } else {
    auto applied = ApplyRequest(*request);
    if (!applied) {
      ++commands_["failed"];
      NoteCommand(request->request_id, "failed");
      return core::Fail(applied.error());
    }
    response = std::move(*applied);
  }
  ++commands_["applied"];
  NoteCommand(request->request_id, response["result"].get<std::string>());
  Remember(*request, response);
  return response;
}

core::Status Agent::ApplyPowerSmoothing() {
  if (!options_.power_smoothing) return core::Ok();
  const PowerSmoothingConfig& want = *options_.power_smoothing;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    gpu::Device& device = *gpus_[i].device;
    const gpu::DeviceInfo& info = device.info();
    const std::optional<gpu::SmoothingSettings>& saved = originals_[i].power_smoothing;
    if (!saved) {
      // Not saved means not restorable: such a GPU is never changed.
      auto why = device.PowerSmoothing();
      spdlog::warn("GPU {} ({}): no power smoothing ({}); power_smoothing changes nothing on it",
                   info.index, info.name,
                   why ? "its settings could not be saved" : why.error().message());
      continue;
    }
    if (want.profile >= static_cast<int>(saved->profiles.size())) {
      return core::Fail(core::Error::OutOfRange(
          fmt::format("GPU {}: power_smoothing.profile {}: this GPU has presets 0-{}", info.index,
                      want.profile, static_cast<int>(saved->profiles.size()) - 1)));
    }
    if (!want.update.empty()) {
      HEADROOM_RETURN_IF_ERROR(device.UpdatePowerSmoothingProfile(want.profile, want.update));
    }
    HEADROOM_RETURN_IF_ERROR(device.ActivatePowerSmoothingProfile(want.profile));
    HEADROOM_RETURN_IF_ERROR(device.SetPowerSmoothingEnabled(true));
    spdlog::info("GPU {}: power smoothing on, profile {}", info.index, want.profile);
  }
  return core::Ok();
}

core::Status Agent::RestoreLocked(std::vector<std::string>* lines, bool keep_smoothing) {
  ResetEnergySaver();  // back at its highest clock: no cap of its own
  caps_.assign(gpus_.size(), Caps{});
  pending_.clear();
  lease_deadline_.reset();
  lease_expired_ = false;
  failsafe_active_ = false;
  std::vector<OriginalSettings> targets = originals_;
  if (keep_smoothing) {
    for (OriginalSettings& o : targets) o.power_smoothing.reset();
  }
  HEADROOM_ASSIGN_OR_RETURN(*lines, RestoreOriginals(Devices(), targets));
  for (size_t i = 0; i < gpus_.size(); ++i) {
    readback_[i] = Readback{};
    listings_[i] = Listing(*gpus_[i].device, clock_->Now(), listings_[i]);
  }
  return core::Ok();
}

core::Result<ordered_json> Agent::DeleteCaps() {
  core::MutexLock lock(&mu_);
  std::vector<std::string> lines;
  if (auto st = RestoreLocked(&lines, /*keep_smoothing=*/true); !st) {
    NoteCommand("", "failed");
    return core::Fail(st.error());
  }
  for (const std::string& line : lines) spdlog::info("caps lifted: restored {}", line);
  // The GPUs as found, held so until a PUT: the energy saver would otherwise lower them again.
  saver_paused_ = saver_.has_value();
  NoteCommand("", "restored");
  return ordered_json{{"result", "restored"}, {"gpus", lines}};
}

core::Result<std::vector<std::string>> Agent::Shutdown() {
  core::MutexLock lock(&mu_);
  stopped_ = true;  // nothing of the agent's own is applied again
  std::vector<std::string> lines;
  HEADROOM_RETURN_IF_ERROR(RestoreLocked(&lines, /*keep_smoothing=*/false));
  // Only a clean stop removes the state file: its presence at start means a crash.
  std::error_code ec;
  if (!std::filesystem::remove(options_.state_file, ec) && ec) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("removing {}: {}", options_.state_file, ec.message())));
  }
  return lines;
}

void Agent::RecordRejected() {
  core::MutexLock lock(&mu_);
  ++commands_["rejected"];
}

void Agent::SampleLocked() {
  const core::TimePoint now = clock_->Now();
  for (size_t i = 0; i < gpus_.size(); ++i) {
    listings_[i] = Listing(*gpus_[i].device, now, listings_[i]);
  }
  next_sample_ = now + options_.sample_interval;
}

void Agent::Tick() {
  core::MutexLock lock(&mu_);
  const core::TimePoint now = clock_->Now();
  while (!pending_.empty() && pending_.front().due <= now) {
    const Pending p = std::move(pending_.front());
    pending_.pop_front();
    auto applied = ApplyRequest(p.request);
    if (!applied) {
      spdlog::error("applying delayed request {}: {}", p.request.request_id,
                    applied.error().message());
    }
    // A repeat of this request_id now returns what was applied.
    if (auto it = remembered_.find(p.request.request_id); it != remembered_.end()) {
      it->second.response =
          applied ? *applied
                  : ordered_json{{"result", "failed"}, {"error", applied.error().message()}};
    }
    NoteCommand(p.request.request_id, applied ? "applied" : "failed");
  }
  if (lease_deadline_ && now >= *lease_deadline_ && !lease_expired_) {
    lease_expired_ = true;
    if (auto st = FailsafeLocked("lease expired without renewal"); !st) {
      spdlog::error("applying the failsafe: {}", st.error().message());
    }
  }
  StepEnergySaver(now);
  if (!next_sample_ || now >= *next_sample_) SampleLocked();
}

core::Status Agent::EnterFailsafe(const std::string& why) {
  core::MutexLock lock(&mu_);
  return FailsafeLocked(why);
}

core::Status Agent::FailsafeLocked(const std::string& why) {
  failsafe_active_ = true;
  failsafe_reason_ = why;
  spdlog::warn("{}: capping every GPU at its failsafe SM clock", why);
  return ApplyAll();
}

nlohmann::ordered_json Agent::State() {
  core::MutexLock lock(&mu_);
  const core::TimePoint now = clock_->Now();
  ordered_json out;
  out["priority"] = options_.priority;
  out["backend"] = options_.backend;
  out["gpus"] = ordered_json::array();
  bool brake = false;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    const gpu::GpuListing& l = listings_[i];
    ordered_json g;
    g["index"] = gpus_[i].device->info().index;
    g["uuid"] = gpus_[i].device->info().uuid;
    g["power_w"] = OrNull(l.snapshot.power_instant);
    g["sm_clock_mhz"] = OrNull(l.snapshot.sm_clock);
    g["power_limit_w"] = l.snapshot.power_limits
                             ? ordered_json(l.snapshot.power_limits->requested.value())
                             : ordered_json(nullptr);
    g["sm_clock_lock"] = LockJson(l.clock_lock);
    g["power_smoothing"] = SmoothingJson(l.power_smoothing);
    g["caps"] = GpuCapsJson(i);
    out["gpus"].push_back(std::move(g));
    brake = brake || caps_[i].brake;
  }
  out["brake"] = brake;
  ordered_json lease;
  lease["expires_in_s"] = lease_deadline_ && !lease_expired_
                              ? ordered_json(core::ToSeconds(*lease_deadline_ - now))
                              : ordered_json(nullptr);
  lease["expired"] = lease_expired_;
  out["lease"] = lease;
  out["failsafe_active"] = failsafe_active_;
  if (failsafe_active_) out["failsafe_reason"] = failsafe_reason_;
  out["pending"] = ordered_json::array();
  for (const Pending& p : pending_) {
    out["pending"].push_back(
        {{"request_id", p.request.request_id}, {"apply_in_s", core::ToSeconds(p.due - now)}});
  }
  // The engine's last window (policy::ServingSignal), null without one; with an error when the
  // last scrape failed.
  const auto serving = engine_.Signal(now);
  out["serving"] = serving ? ordered_json{{"prefill_share", serving->prefill_share},
                                          {"waiting", serving->waiting},
                                          {"running", serving->running},
                                          {"age_s", core::ToSeconds(serving->age)}}
                           : ordered_json(nullptr);
  if (engine_scraped_ && !engine_.error().empty()) out["serving_error"] = engine_.error();
  TokenEnergyState(out);
  out["energy_saver"] = EnergySaverJson(now);
  out["last_command"] = last_command_ ? ordered_json{{"request_id", last_command_->request_id},
                                                     {"at", last_command_->at},
                                                     {"result", last_command_->result}}
                                      : ordered_json(nullptr);
  return out;
}

void Agent::RecordEngineScrape(const core::Result<EngineSample>& scrape) {
  core::MutexLock lock(&mu_);
  engine_scraped_ = true;
  const core::TimePoint now = clock_->Now();
  if (scrape) {
    engine_.Add(*scrape, now);
  } else {
    engine_.Fail(scrape.error().message());
  }
  RecordTokenEnergy(scrape, now);
}

std::string Agent::Metrics() {
  core::MutexLock lock(&mu_);
  telemetry::PrometheusWriter out;
  telemetry::WriteGpuMetrics(listings_, out);
  auto gpu = [this](size_t i) {
    return std::vector<std::pair<std::string, std::string>>{
        {"gpu", std::to_string(gpus_[i].device->info().index)}};
  };
  out.Family("headroom_agent_sm_clock_cap_hertz", "gauge",
             "SM clock cap the agent holds (request, failsafe, brake or energy saver); only capped "
             "GPUs.");
  for (size_t i = 0; i < gpus_.size(); ++i) {
    const bool capped =
        caps_[i].brake || caps_[i].sm_clock || failsafe_active_ || SaverCap().has_value();
    if (!capped) continue;
    if (auto target = TargetLock(i)) out.Sample(target->max.value() * 1e6, gpu(i));
  }
  out.Family("headroom_agent_power_limit_target_watts", "gauge",
             "Power limit the agent holds (the cap, else the original limit).");
  for (size_t i = 0; i < gpus_.size(); ++i) out.Sample(TargetPowerLimit(i).value(), gpu(i));
  bool brake = false;
  double server_w = 0;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    brake = brake || caps_[i].brake;
    if (listings_[i].snapshot.power_instant)
      server_w += listings_[i].snapshot.power_instant->value();
  }
  out.Family("headroom_agent_brake", "gauge", "1 while any GPU is held at its brake clock.");
  out.Sample(brake ? 1 : 0);
  out.Family("headroom_agent_lease_expired", "gauge", "1 when the last lease ran out unrenewed.");
  out.Sample(lease_expired_ ? 1 : 0);
  out.Family("headroom_agent_failsafe_active", "gauge",
             "1 while the failsafe clock cap is applied.");
  out.Sample(failsafe_active_ ? 1 : 0);
  out.Family("headroom_agent_server_power_watts", "gauge", "Sum of the GPUs' power draw.");
  out.Sample(server_w);
  out.Family("headroom_agent_commands_total", "counter", "Caps requests by outcome.");
  for (const auto& [result, count] : commands_) {
    out.Sample(static_cast<double>(count), {{"result", result}});
  }
  if (engine_scraped_) {
    const auto serving = engine_.Signal(clock_->Now());
    out.Family("headroom_engine_prefill_share", "gauge",
               "Prompt tokens over all tokens the serving engine processed in its last window.");
    if (serving) out.Sample(serving->prefill_share);
    out.Family("headroom_engine_requests_waiting", "gauge",
               "Requests queued in the serving engine at its last window's end.");
    if (serving) out.Sample(serving->waiting);
    out.Family("headroom_engine_requests_running", "gauge",
               "Requests in the serving engine's batch at its last window's end.");
    if (serving) out.Sample(serving->running);
    out.Family("headroom_engine_window_age_seconds", "gauge",
               "How long ago the serving engine's last window ended.");
    if (serving) out.Sample(core::ToSeconds(serving->age));
    out.Family("headroom_engine_scrape_failures_total", "counter",
               "Scrapes of the serving engine's metrics that failed (down or malformed).");
    out.Sample(static_cast<double>(engine_.failures()));
  }
  EnergyMetrics(out);
  out.Family("headroom_agent_info", "gauge", "The agent's priority class and GPU backend.");
  out.Sample(1, {{"priority", options_.priority}, {"backend", options_.backend}});
  return out.text();
}

}  // namespace headroom::service
