#include "mig/enumerate.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.h"
#include "core/parse.h"

namespace headroom::mig {
namespace {

struct Candidate {
  int profile = 0;  // index into the chosen profiles
  int start = 0;
  std::uint32_t slices = 0;  // memory-slice bit mask
};

// The state of a partial layout and the depth-first search over candidates in a fixed order,
// each either taken or skipped, so every valid set is visited exactly once.
class Search {
 public:
  Search(std::span<const GiProfile* const> profiles, std::vector<Candidate> candidates)
      : profiles_(profiles), candidates_(std::move(candidates)), count_(profiles.size(), 0) {}

  std::vector<Layout> Run() {
    Visit(0);
    std::vector<std::pair<std::string, Layout>> keyed;
    for (Layout& layout : found_) keyed.emplace_back(FormatLayout(layout), std::move(layout));
    std::sort(keyed.begin(), keyed.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Layout> sorted;
    for (auto& [text, layout] : keyed) sorted.push_back(std::move(layout));
    return sorted;
  }

 private:
  bool Fits(const Candidate& c) const {
    const GiProfile& profile = *profiles_[c.profile];
    return (used_ & c.slices) == 0 && count_[c.profile] < profile.max_instances &&
           !(media_used_ && profile.media_extension);
  }

  void Push(const Candidate& c) {
    used_ |= c.slices;
    ++count_[c.profile];
    if (profiles_[c.profile]->media_extension) media_used_ = true;
    chosen_.push_back(&c);
  }

  // REQUIRES: `c` was the last candidate pushed.
  void Pop(const Candidate& c) {
    used_ &= ~c.slices;
    --count_[c.profile];
    if (profiles_[c.profile]->media_extension) media_used_ = false;
    chosen_.pop_back();
  }

  void Visit(size_t next) {
    if (next == candidates_.size()) {
      if (std::none_of(candidates_.begin(), candidates_.end(),
                       [this](const Candidate& c) { return Fits(c); })) {
        Record();
      }
      return;
    }
    const Candidate& c = candidates_[next];
    if (Fits(c)) {
      Push(c);
      Visit(next + 1);
      Pop(c);
    }
    Visit(next + 1);
  }

  void Record() {
    Layout layout;
    for (const Candidate* c : chosen_) {
      layout.instances.push_back({.profile = profiles_[c->profile]->name, .start = c->start});
    }
    found_.push_back(Canonical(std::move(layout)));
  }

  std::span<const GiProfile* const> profiles_;
  std::vector<Candidate> candidates_;
  std::vector<int> count_;  // instances per chosen profile
  std::uint32_t used_ = 0;  // memory slices taken
  bool media_used_ = false;
  std::vector<const Candidate*> chosen_;
  std::vector<Layout> found_;
};

}  // namespace

std::vector<Layout> EnumerateMaximalLayouts(const GpuMigSpec& spec,
                                            std::span<const GiProfile* const> profiles) {
  HEADROOM_CHECK(spec.memory_slices <= 32) << spec.name << ": too many memory slices for a mask";
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < profiles.size(); ++i) {
    for (int start : profiles[i]->starts) {
      const std::uint32_t slices = ((1u << profiles[i]->memory_slices) - 1u) << start;
      candidates.push_back({.profile = static_cast<int>(i), .start = start, .slices = slices});
    }
  }
  return Search(profiles, std::move(candidates)).Run();
}

int CountDistinctMultisets(std::span<const Layout> layouts) {
  return static_cast<int>(OnePerMultiset(layouts).size());
}

std::vector<Layout> OnePerMultiset(std::span<const Layout> layouts) {
  std::map<std::pair<size_t, std::string>, Layout> distinct;
  for (const Layout& layout : layouts) {
    std::vector<std::string> names;
    for (const GpuInstance& gi : layout.instances) names.push_back(gi.profile);
    std::sort(names.begin(), names.end());
    distinct.emplace(std::make_pair(names.size(), fmt::format("{}", fmt::join(names, "+"))),
                     layout);
  }
  std::vector<Layout> out;
  for (auto& [key, layout] : distinct) out.push_back(std::move(layout));
  return out;
}

core::Result<std::vector<const GiProfile*>> ProfilesNamed(const GpuMigSpec& spec,
                                                          std::string_view text) {
  std::vector<const GiProfile*> profiles;
  std::set<const GiProfile*> seen;
  for (std::string_view name : core::Split(text, ',')) {
    name = core::Trim(name);
    const GiProfile* p = spec.FindProfileOrClass(name);
    if (p == nullptr) {
      std::vector<std::string> known;
      for (const GiProfile& q : spec.profiles) known.push_back(q.short_name);
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("no profile '{}' on {} (known: {}, or full names)", name, spec.name,
                      fmt::join(known, ", "))));
    }
    if (!seen.insert(p).second) {
      return core::Fail(
          core::Error::InvalidArgument(fmt::format("'{}' ({}) is listed twice", name, p->name)));
    }
    profiles.push_back(p);
  }
  return profiles;
}

std::vector<std::pair<int, Layout>> EqualInstanceLayouts(const GpuMigSpec& spec) {
  std::vector<std::pair<int, Layout>> out;
  for (auto [profile, count] : {std::pair{"7g", 1}, {"3g", 2}, {"2g", 3}, {"1g", 7}}) {
    if (auto layout = UniformLayout(spec, profile, count)) out.emplace_back(count, *layout);
  }
  return out;
}

core::Result<std::vector<Layout>> ParseValidLayouts(const GpuMigSpec& spec,
                                                    std::span<const std::string> texts) {
  std::vector<Layout> out;
  for (const std::string& text : texts) {
    HEADROOM_ASSIGN_OR_RETURN(Layout layout, ParseLayout(text));
    HEADROOM_RETURN_IF_ERROR(ValidateLayout(spec, layout));
    out.push_back(std::move(layout));
  }
  return out;
}

core::Result<std::vector<std::optional<Layout>>> SweepLayouts(const GpuMigSpec& spec,
                                                              std::span<const std::string> given,
                                                              std::string_view profiles) {
  std::vector<Layout> layouts;
  if (!given.empty()) {
    HEADROOM_ASSIGN_OR_RETURN(layouts, ParseValidLayouts(spec, given));
  } else {
    HEADROOM_ASSIGN_OR_RETURN(std::vector<const GiProfile*> named, ProfilesNamed(spec, profiles));
    layouts = OnePerMultiset(EnumerateMaximalLayouts(spec, named));
  }
  std::vector<std::optional<Layout>> out = {std::nullopt};
  out.insert(out.end(), layouts.begin(), layouts.end());
  return out;
}

}  // namespace headroom::mig
