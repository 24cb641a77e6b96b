#include "mig/enumerate.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "core/check.h"

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
  std::set<std::multiset<std::string>> multisets;
  for (const Layout& layout : layouts) {
    std::multiset<std::string> names;
    for (const GpuInstance& instance : layout.instances) names.insert(instance.profile);
    multisets.insert(std::move(names));
  }
  return static_cast<int>(multisets.size());
}

}  // namespace headroom::mig
