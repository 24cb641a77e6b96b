#include "telemetry/sampler.h"

#include <algorithm>

#include <fmt/format.h>

namespace headroom::telemetry {
namespace {

constexpr core::Duration kMinInterval = std::chrono::milliseconds(10);
constexpr core::Duration kMaxInterval = std::chrono::seconds(60);

}  // namespace

core::Result<std::unique_ptr<Sampler>> Sampler::Create(std::vector<gpu::Device*> devices,
                                                       core::Clock* clock, SamplerOptions options) {
  if (options.interval < kMinInterval || options.interval > kMaxInterval) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "sampling interval {} ms is outside 10 ms .. 60 s",
        std::chrono::duration_cast<std::chrono::milliseconds>(options.interval).count())));
  }
  if (devices.empty()) return core::Fail(core::Error::InvalidArgument("no GPUs to sample"));
  if (options.ring_capacity == 0) options.ring_capacity = 1;
  return std::unique_ptr<Sampler>(new Sampler(std::move(devices), clock, std::move(options)));
}

Sampler::Sampler(std::vector<gpu::Device*> devices, core::Clock* clock, SamplerOptions options)
    : devices_(std::move(devices)),
      clock_(clock),
      options_(std::move(options)),
      driver_last_us_(devices_.size(), 0),
      driver_samples_supported_(devices_.size(), true),
      driver_primed_(devices_.size(), false),
      meters_(devices_.size()) {}

Sampler::~Sampler() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void Sampler::Start() {
  if (!SampleOnce()) return;
  thread_ = std::thread([this] { Run(); });
}

void Sampler::Run() {
  core::TimePoint next = clock_->Now() + options_.interval;
  while (!stop_.load()) {
    clock_->SleepUntil(next, &stop_);
    if (stop_.load()) return;
    if (!SampleOnce()) return;
    next += options_.interval;
    // After a stall longer than an interval, skip the missed ticks rather than burst.
    const core::TimePoint now = clock_->Now();
    if (next < now) next = now + options_.interval;
  }
}

void Sampler::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  bool take_last = false;
  {
    core::MutexLock lock(&mu_);
    // A last sample marks the stop time, unless the clock has not moved since the latest one.
    take_last = !error_ && (ring_.empty() || clock_->Now() > ring_.back().snapshot.time);
  }
  if (take_last) SampleOnce();
}

bool Sampler::SampleOnce() {
  std::vector<Sample> taken;
  std::vector<std::vector<gpu::PowerSample>> drained(devices_.size());
  std::vector<std::uint64_t> after_us;
  std::vector<bool> drain;
  {
    core::MutexLock lock(&mu_);
    after_us = driver_last_us_;
    drain = driver_samples_supported_;
  }
  for (size_t i = 0; i < devices_.size(); ++i) {
    gpu::Device* device = devices_[i];
    auto snapshot = gpu::TakeSnapshot(*device, clock_->Now());
    if (!snapshot) {
      core::MutexLock lock(&mu_);
      error_ = snapshot.error();
      return false;
    }
    taken.push_back({device->info().index, std::move(*snapshot)});
    if (!drain[i]) continue;
    auto samples = device->PowerSamples(after_us[i]);
    if (samples) {
      drained[i] = std::move(*samples);
    } else {
      drain[i] = false;  // unsupported, or failing: the snapshots still carry the measurement
    }
  }
  {
    core::MutexLock lock(&mu_);
    for (size_t i = 0; i < taken.size(); ++i) {
      meters_[i].Add(taken[i].snapshot);
      ring_.push_back(taken[i]);
      while (ring_.size() > options_.ring_capacity) ring_.pop_front();
      driver_samples_supported_[i] = drain[i];
      const bool primed = driver_primed_[i];
      driver_primed_[i] = true;
      for (const gpu::PowerSample& p : drained[i]) {
        driver_last_us_[i] = std::max(driver_last_us_[i], p.timestamp_us);
        if (!primed) continue;
        meters_[i].AddDriverSample(p.power);
        driver_ring_.push_back({taken[i].gpu, p});
        while (driver_ring_.size() > options_.ring_capacity) driver_ring_.pop_front();
      }
    }
  }
  if (options_.sink) {
    for (const Sample& s : taken) options_.sink(s);
  }
  return true;
}

void Sampler::MarkPhase(const std::string& phase) {
  core::MutexLock lock(&mu_);
  for (EnergyMeter& m : meters_) m.MarkPhase(phase);
  phase_ = phase;
}

void Sampler::AddWork(double units) {
  core::MutexLock lock(&mu_);
  work_ += units;
  const std::string phase = phase_;
  if (phase.empty()) return;
  auto it = std::find_if(work_by_phase_.begin(), work_by_phase_.end(),
                         [&phase](const auto& p) { return p.first == phase; });
  if (it == work_by_phase_.end()) {
    work_by_phase_.emplace_back(phase, units);
  } else {
    it->second += units;
  }
}

double Sampler::work() const {
  core::MutexLock lock(&mu_);
  return work_;
}

std::vector<std::pair<std::string, double>> Sampler::work_by_phase() const {
  core::MutexLock lock(&mu_);
  return work_by_phase_;
}

std::vector<Sample> Sampler::Recent() const {
  core::MutexLock lock(&mu_);
  return {ring_.begin(), ring_.end()};
}

std::vector<DriverPowerSample> Sampler::RecentDriverSamples() const {
  core::MutexLock lock(&mu_);
  return {driver_ring_.begin(), driver_ring_.end()};
}

std::vector<EnergyReport> Sampler::Reports() const {
  core::MutexLock lock(&mu_);
  std::vector<EnergyReport> out;
  for (const EnergyMeter& m : meters_) out.push_back(m.Report());
  return out;
}

std::vector<std::vector<PhaseEnergy>> Sampler::Phases() const {
  core::MutexLock lock(&mu_);
  std::vector<std::vector<PhaseEnergy>> out;
  for (const EnergyMeter& m : meters_) out.push_back(m.Phases());
  return out;
}

std::optional<core::Error> Sampler::error() const {
  core::MutexLock lock(&mu_);
  return error_;
}

}  // namespace headroom::telemetry
