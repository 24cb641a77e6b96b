#include "gpu/mig_apply.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.h"

namespace headroom::gpu {
namespace {

using core::Error;
using core::Fail;
using mig::ApplyStep;

// Runs `steps` in order, appending each one done to `*done`; the first error, prefixed with the
// step ("create 3g.40gb@4 failed: ..."), stops it.
core::Status RunSteps(Device& device, const std::vector<ApplyStep>& steps,
                      std::vector<ApplyStep>* done) {
  std::map<int, int> created_at;  // start slot -> id of the GPU instance created there
  for (const ApplyStep& step : steps) {
    core::Status status = core::Ok();
    switch (step.kind) {
      case ApplyStep::Kind::kDestroyComputeInstance:
        status = device.DestroyComputeInstance(step.gpu_instance_id, step.compute_instance_id);
        break;
      case ApplyStep::Kind::kDestroyGpuInstance:
        status = device.DestroyGpuInstance(step.gpu_instance_id);
        break;
      case ApplyStep::Kind::kCreateGpuInstance: {
        core::Result<int> id = device.CreateGpuInstance(step.profile_id, step.start);
        if (id) created_at[step.start] = *id;
        if (!id) status = Fail(id.error());
        break;
      }
      case ApplyStep::Kind::kCreateComputeInstance: {
        int gi = step.gpu_instance_id;
        if (gi == mig::ComputeInstanceState::kNoId) {
          // The plan creates every GPU instance before any compute instance in it.
          auto it = created_at.find(step.start);
          HEADROOM_CHECK(it != created_at.end()) << "no GPU instance created at " << step.start;
          gi = it->second;
        }
        core::Result<int> id = device.CreateComputeInstance(gi, step.compute_slices);
        if (!id) status = Fail(id.error());
        break;
      }
    }
    if (!status) {
      return Fail(Error(status.error().code(), fmt::format("{} failed: {}", mig::DescribeStep(step),
                                                           status.error().message())));
    }
    done->push_back(step);
  }
  return core::Ok();
}

std::string ProcessList(const std::vector<GpuProcess>& processes) {
  std::vector<std::string> items;
  for (const GpuProcess& p : processes) {
    items.push_back(p.gpu_instance_id.has_value()
                        ? fmt::format("{} (GPU instance {})", p.pid, *p.gpu_instance_id)
                        : std::to_string(p.pid));
  }
  return fmt::format("{}", fmt::join(items, ", "));
}

core::Status RequireMigEnabled(Device& device) {
  HEADROOM_ASSIGN_OR_RETURN(MigModeState mode, device.MigMode());
  if (mode.current) return core::Ok();
  const int index = device.info().index;
  if (mode.pending) {
    return Fail(Error::FailedPrecondition(
        fmt::format("GPU {}: MIG mode is enabled but pending a GPU reset; reset the GPU (as root: "
                    "nvidia-smi -i {} -r) and retry",
                    index, index)));
  }
  return Fail(Error::FailedPrecondition(fmt::format(
      "GPU {}: MIG mode is disabled; enable it as root with 'nvidia-smi -i {} -mig 1' (stop the "
      "GPU's processes first; it may need a GPU reset), then retry",
      index, index)));
}

// Undoes a failed apply: plans from the state now back to `original` and runs that.
void RollBack(Device& device, const mig::GpuMigSpec& spec,
              const std::vector<mig::GpuInstanceState>& original, MigApplyReport* report) {
  auto now = ReadMigState(device, spec);
  if (!now) {
    report->rollback_error = now.error().WithContext("reading the GPU for the rollback");
    return;
  }
  auto undo = mig::PlanTransition(spec, *now, original);
  if (!undo) {
    report->rollback_error = undo.error().WithContext("planning the rollback");
    return;
  }
  if (auto status = RunSteps(device, undo->steps, &report->rollback); !status) {
    report->rollback_error = status.error();
  }
}

}  // namespace

core::Result<std::vector<mig::GpuInstanceState>> ToMigState(
    const mig::GpuMigSpec& spec, const std::vector<MigGpuInstance>& instances) {
  std::vector<mig::GpuInstanceState> out;
  for (const MigGpuInstance& gi : instances) {
    const mig::GiProfile* profile = spec.FindProfileById(gi.profile_id);
    if (profile == nullptr) {
      return Fail(Error::InvalidArgument(
          fmt::format("GPU instance {} has profile ID {}, which the MIG catalog of {} lacks", gi.id,
                      gi.profile_id, spec.name)));
    }
    mig::GpuInstanceState state{.id = gi.id, .profile = profile->name, .start = gi.start};
    for (const MigComputeInstance& ci : gi.compute_instances) {
      state.compute_instances.push_back({.id = ci.id, .compute_slices = ci.compute_slices});
    }
    out.push_back(std::move(state));
  }
  return out;
}

core::Result<std::vector<mig::GpuInstanceState>> ReadMigState(Device& device,
                                                              const mig::GpuMigSpec& spec) {
  HEADROOM_ASSIGN_OR_RETURN(std::vector<MigGpuInstance> instances, device.MigInstances());
  return ToMigState(spec, instances);
}

core::Result<MigApplyReport> ApplyMigLayout(Device& device, const mig::GpuMigSpec& spec,
                                            const mig::Layout& target,
                                            const MigApplyOptions& options) {
  HEADROOM_RETURN_IF_ERROR(mig::ValidateLayout(spec, target));
  HEADROOM_RETURN_IF_ERROR(RequireMigEnabled(device));
  HEADROOM_ASSIGN_OR_RETURN(std::vector<mig::GpuInstanceState> original,
                            ReadMigState(device, spec));
  MigApplyReport report;
  report.before = mig::FormatLayout(mig::ToLayout(spec, original));
  HEADROOM_ASSIGN_OR_RETURN(report.plan, mig::PlanApply(spec, original, target));
  if (!options.force && !report.plan.empty()) {
    // A GPU without process accounting cannot be checked; the driver still refuses to destroy
    // an instance in use.
    auto processes = device.RunningProcesses();
    if (!processes && processes.error().code() != core::Code::kUnimplemented) {
      return Fail(processes.error());
    }
    if (processes && !processes->empty()) {
      return Fail(
          Error::FailedPrecondition(fmt::format("GPU {} has running compute processes: {}",
                                                device.info().index, ProcessList(*processes))));
    }
  }
  if (options.dry_run || report.plan.empty()) {
    report.after = report.before;
    return report;
  }
  if (auto status = RunSteps(device, report.plan.steps, &report.done); !status) {
    report.error = status.error();
    RollBack(device, spec, original, &report);
  }
  auto after = ReadMigState(device, spec);
  report.after = after ? mig::FormatLayout(mig::ToLayout(spec, *after))
                       : fmt::format("(unreadable: {})", after.error().message());
  return report;
}

}  // namespace headroom::gpu
