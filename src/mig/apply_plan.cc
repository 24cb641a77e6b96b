#include "mig/apply_plan.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

namespace headroom::mig {
namespace {

using core::Error;
using core::Fail;
using core::Result;

std::vector<int> SlicesOf(const GpuInstanceState& instance) {
  std::vector<int> slices;
  for (const ComputeInstanceState& ci : instance.compute_instances) {
    slices.push_back(ci.compute_slices);
  }
  std::sort(slices.rbegin(), slices.rend());
  return slices;
}

// A GPU instance the plan touches, with its profile resolved.
struct Touched {
  const GpuInstanceState* instance = nullptr;
  const GiProfile* profile = nullptr;
};

// Largest first: more memory slices, then more compute slices, then the lower start slot.
bool LargerFirst(const Touched& a, const Touched& b) {
  return std::make_tuple(-a.profile->memory_slices, -a.profile->compute_slices, a.instance->start) <
         std::make_tuple(-b.profile->memory_slices, -b.profile->compute_slices, b.instance->start);
}

Result<const GiProfile*> ProfileOf(const GpuMigSpec& spec, const GpuInstanceState& instance,
                                   const char* which) {
  const GiProfile* profile = spec.FindProfile(instance.profile);
  if (profile == nullptr) {
    return Fail(Error::InvalidArgument(fmt::format("{} GPU instance {}@{}: no profile {} on {}",
                                                   which, instance.profile, instance.start,
                                                   instance.profile, spec.name)));
  }
  return profile;
}

ApplyStep StepFor(ApplyStep::Kind kind, const Touched& t) {
  return ApplyStep{.kind = kind,
                   .profile = t.profile->name,
                   .profile_id = t.profile->id,
                   .start = t.instance->start,
                   .gpu_instance_id = t.instance->id};
}

}  // namespace

std::vector<GpuInstanceState> ExpandLayout(const GpuMigSpec& spec, const Layout& layout) {
  std::vector<GpuInstanceState> out;
  for (const GpuInstance& instance : Canonical(layout).instances) {
    GpuInstanceState state{.profile = instance.profile, .start = instance.start};
    std::vector<int> slices = instance.compute_instances;
    if (slices.empty()) {
      const GiProfile* profile = spec.FindProfile(instance.profile);
      slices.push_back(profile != nullptr ? profile->compute_slices : 0);
    }
    for (int size : slices) state.compute_instances.push_back({.compute_slices = size});
    out.push_back(std::move(state));
  }
  return out;
}

Layout ToLayout(const GpuMigSpec& spec, const std::vector<GpuInstanceState>& instances) {
  Layout layout;
  for (const GpuInstanceState& state : instances) {
    GpuInstance instance{.profile = state.profile, .start = state.start};
    instance.compute_instances = SlicesOf(state);
    const GiProfile* profile = spec.FindProfile(state.profile);
    if (instance.compute_instances.empty()) {
      instance.compute_instances = {0};
    } else if (profile != nullptr && instance.compute_instances.size() == 1 &&
               instance.compute_instances[0] == profile->compute_slices) {
      instance.compute_instances.clear();
    }
    layout.instances.push_back(std::move(instance));
  }
  return Canonical(std::move(layout));
}

std::string DescribeStep(const ApplyStep& step) {
  const std::string gi = fmt::format("{}@{}", step.profile, step.start);
  switch (step.kind) {
    case ApplyStep::Kind::kDestroyComputeInstance:
      return fmt::format("destroy compute instance {} ({}c) of {}", step.compute_instance_id,
                         step.compute_slices, gi);
    case ApplyStep::Kind::kDestroyGpuInstance:
      return fmt::format("destroy {} (GPU instance {})", gi, step.gpu_instance_id);
    case ApplyStep::Kind::kCreateGpuInstance:
      return fmt::format("create {}", gi);
    case ApplyStep::Kind::kCreateComputeInstance:
      return fmt::format("create {}c compute instance in {}", step.compute_slices, gi);
  }
  return gi;
}

Result<ApplyPlan> PlanTransition(const GpuMigSpec& spec,
                                 const std::vector<GpuInstanceState>& current,
                                 const std::vector<GpuInstanceState>& target) {
  std::vector<Touched> destroyed;     // current GIs not wanted
  std::vector<Touched> recomputed;    // current GIs kept whose compute instances change
  std::vector<Touched> recomputed_t;  // ... and their targets, in the same order
  std::vector<Touched> created;       // target GIs to create
  std::vector<bool> matched(current.size(), false);
  ApplyPlan plan;
  for (const GpuInstanceState& want : target) {
    HEADROOM_ASSIGN_OR_RETURN(const GiProfile* profile, ProfileOf(spec, want, "target"));
    auto same_place = std::find_if(current.begin(), current.end(), [&](const auto& have) {
      return !matched[&have - current.data()] && have.profile == profile->name &&
             have.start == want.start;
    });
    if (same_place == current.end()) {
      created.push_back({&want, profile});
      continue;
    }
    matched[same_place - current.begin()] = true;
    if (SlicesOf(*same_place) == SlicesOf(want)) {
      plan.kept.push_back(*same_place);
    } else {
      recomputed.push_back({&*same_place, profile});
      recomputed_t.push_back({&want, profile});
    }
  }
  for (size_t i = 0; i < current.size(); ++i) {
    if (matched[i]) continue;
    HEADROOM_ASSIGN_OR_RETURN(const GiProfile* profile, ProfileOf(spec, current[i], "current"));
    destroyed.push_back({&current[i], profile});
  }

  // Teardown mirrors creation: smallest and last-placed first, compute instances before any
  // GPU instance, the newest compute instance of each first.
  std::vector<Touched> emptied = destroyed;
  emptied.insert(emptied.end(), recomputed.begin(), recomputed.end());
  std::sort(emptied.begin(), emptied.end(),
            [](const Touched& a, const Touched& b) { return LargerFirst(b, a); });
  for (const Touched& t : emptied) {
    std::vector<ComputeInstanceState> cis = t.instance->compute_instances;
    std::sort(cis.begin(), cis.end(), [](const auto& a, const auto& b) { return a.id > b.id; });
    for (const ComputeInstanceState& ci : cis) {
      ApplyStep step = StepFor(ApplyStep::Kind::kDestroyComputeInstance, t);
      step.compute_instance_id = ci.id;
      step.compute_slices = ci.compute_slices;
      plan.steps.push_back(step);
    }
  }
  std::sort(destroyed.begin(), destroyed.end(),
            [](const Touched& a, const Touched& b) { return LargerFirst(b, a); });
  for (const Touched& t : destroyed) {
    plan.steps.push_back(StepFor(ApplyStep::Kind::kDestroyGpuInstance, t));
  }

  std::sort(created.begin(), created.end(), LargerFirst);
  for (const Touched& t : created) {
    ApplyStep step = StepFor(ApplyStep::Kind::kCreateGpuInstance, t);
    step.gpu_instance_id = ComputeInstanceState::kNoId;
    plan.steps.push_back(step);
  }
  // Compute instances of every GPU instance that needs them, largest GPU instance first; a
  // kept one is named by its id, a new one by its start slot.
  std::vector<std::pair<Touched, int>> filled;  // (target, existing GI id or kNoId)
  for (size_t i = 0; i < recomputed.size(); ++i) {
    filled.push_back({recomputed_t[i], recomputed[i].instance->id});
  }
  for (const Touched& t : created) filled.push_back({t, ComputeInstanceState::kNoId});
  std::sort(filled.begin(), filled.end(),
            [](const auto& a, const auto& b) { return LargerFirst(a.first, b.first); });
  for (const auto& [t, gi_id] : filled) {
    for (int slices : SlicesOf(*t.instance)) {
      ApplyStep step = StepFor(ApplyStep::Kind::kCreateComputeInstance, t);
      step.gpu_instance_id = gi_id;
      step.compute_slices = slices;
      plan.steps.push_back(step);
    }
  }
  return plan;
}

Result<ApplyPlan> PlanApply(const GpuMigSpec& spec, const std::vector<GpuInstanceState>& current,
                            const Layout& target) {
  HEADROOM_RETURN_IF_ERROR(ValidateLayout(spec, target));
  return PlanTransition(spec, current, ExpandLayout(spec, target));
}

}  // namespace headroom::mig
