// LeastWorkTable: least-work routing's view of the model instances of one priority class, and
// its choice: the first instance, in order from a cursor (wrapping), with the least work as of
// now, where an instance's work is the tokens it still has to prefill or generate and, inside a
// run of decode steps, falls by its running sequences at each step done. The row simulator asks
// it once a request, so it is built for that: an instance's exact steps done by now (the
// caller's count, a search) is asked only of the instances that can be the least, found by
// bounding every one's steps done from the time elapsed in one branch-free pass over four
// instances at a time; and an idle instance (work 0, none less) is found from a bit set, with no
// pass at all. The choice is exactly the one a scan of every instance's exact work makes
// (LeastWorkTableTest checks it against that scan). Thread-compatible.
#ifndef HEADROOM_SIM_LEAST_WORK_TABLE_H_
#define HEADROOM_SIM_LEAST_WORK_TABLE_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace headroom::sim {

// What the table knows of one instance.
struct RouteState {
  double outstanding = 0;  // tokens still to prefill or generate, as of its run's start
  double running = 0;      // sequences decoding in the run
  // The run of decode steps under way: its steps (0 when none, or a single step: the work
  // stays as it is until the next event), its start and end in ns of simulated time, its first
  // step and each later step's growth in seconds (steps done by a time are the most whose
  // arithmetic sum fits in the time elapsed).
  int steps = 0;
  double start_ns = 0;
  double end_ns = 0;
  double first_step_s = 0;
  double step_growth_s = 0;
};

class LeastWorkTable {
 public:
  explicit LeastWorkTable(std::size_t instances = 0);

  std::size_t size() const { return size_; }
  void Set(std::size_t k, const RouteState& state);
  // Its outstanding work alone (a request joined its queue; its run goes on).
  void SetOutstanding(std::size_t k, double outstanding);

  // The first instance from `cursor` with the least work at now_ns. steps_done(k): the exact
  // steps done by now of instance k's run (asked only of an instance with a run of steps).
  // REQUIRES: size() > 0, cursor < size(), no instance's run starts after now_ns.
  template <class StepsDone>
  std::size_t Least(double now_ns, std::size_t cursor, StepsDone&& steps_done);

 private:
  static constexpr std::size_t kLanes = 4;
  static constexpr std::size_t kWordBits = 64;

  // Four instances' columns side by side (the last block padded with instances that never win).
  struct Block {
    double outstanding[kLanes];
    double running[kLanes];
    double steps[kLanes];
    double start_ns[kLanes];
    // Upper bound on its steps done per ns elapsed (over its shortest step) and the bound's
    // margin (3 steps; its steps, with a rate of 0, where no such bound holds); lower bound per
    // ns (over its longest step), 0 where unknown.
    double fast_per_ns[kLanes];
    double fast_margin[kLanes];
    double slow_per_ns[kLanes];
    double least[kLanes];  // Bound's: its work's lower bound at the last choice
  };

  double Field(double (Block::*column)[kLanes], std::size_t k) const {
    return (blocks_[k / kLanes].*column)[k % kLanes];
  }
  double& Field(double (Block::*column)[kLanes], std::size_t k) {
    return (blocks_[k / kLanes].*column)[k % kLanes];
  }
  // Its bits in idle_ and ending_, from its columns.
  void MarkZeros(std::size_t k, bool decoding) {
    // Work 0 now (nothing to do), or at its run's end (its last step leaves nothing).
    const Block& b = blocks_[k / kLanes];
    const std::size_t j = k % kLanes;
    const auto idle = static_cast<std::uint64_t>(!decoding && b.outstanding[j] == 0);
    const auto ending =
        static_cast<std::uint64_t>(decoding && b.outstanding[j] - b.running[j] * b.steps[j] == 0);
    const std::size_t bit = k % kWordBits;
    std::uint64_t& idle_word = idle_[k / kWordBits];
    std::uint64_t& ending_word = ending_[k / kWordBits];
    idle_word = (idle_word & ~(std::uint64_t{1} << bit)) | idle << bit;
    ending_word = (ending_word & ~(std::uint64_t{1} << bit)) | ending << bit;
  }
  // Calls visit(k) for each instance k in `bits`, in order from `from` (wrapping), until it
  // returns true; returns whether one did.
  template <class Visit>
  bool ForEachFrom(const std::vector<std::uint64_t>& bits, std::size_t from, Visit&& visit) const {
    if (bits.size() == 1) {  // one word, rotated: the common case
      std::uint64_t word = bits[0];
      if (from > 0) word = (word >> from) | (word << (size_ - from));
      if (size_ < kWordBits) word &= (std::uint64_t{1} << size_) - 1;
      for (; word != 0; word &= word - 1) {
        std::size_t k = from + static_cast<std::size_t>(std::countr_zero(word));
        if (visit(k < size_ ? k : k - size_)) return true;
      }
      return false;
    }
    return ForEachIn(bits, from, size_, visit) || ForEachIn(bits, 0, from, visit);
  }
  template <class Visit>
  bool ForEachIn(const std::vector<std::uint64_t>& bits, std::size_t from, std::size_t to,
                 Visit& visit) const;
  // Fills each instance's lower bound on its work at now_ns; returns the least upper bound.
  double Bound(double now_ns);
  // maybe_: the instances whose lower bound is at most `least_most`.
  void MarkMaybe(double least_most);

  std::size_t size_ = 0;
  std::vector<Block> blocks_;
  std::vector<double> end_ns_;
  std::vector<std::uint64_t> idle_;    // no work at all
  std::vector<std::uint64_t> ending_;  // a run of steps whose end leaves no work
  std::vector<std::uint64_t> maybe_;   // Least's: those whose lower bound reaches the least
};

template <class StepsDone>
std::size_t LeastWorkTable::Least(double now_ns, std::size_t cursor, StepsDone&& steps_done) {
  const auto distance = [&](std::size_t k) {
    return k >= cursor ? k - cursor : k + size_ - cursor;
  };
  const auto work = [&](std::size_t k) {
    const double outstanding = Field(&Block::outstanding, k);
    if (Field(&Block::steps, k) <= 1) return outstanding;
    return outstanding - Field(&Block::running, k) * static_cast<double>(steps_done(k));
  };
  // Work is never below 0, so an idle instance is the least unless one before it from the
  // cursor has none left either: a run at its very end, whose last step leaves no work.
  std::size_t idle = size_;
  ForEachFrom(idle_, cursor, [&](std::size_t k) {
    idle = k;
    return true;
  });
  if (idle < size_) {
    std::size_t ended = idle;
    ForEachFrom(ending_, cursor, [&](std::size_t k) {
      if (distance(k) >= distance(idle)) return true;
      // Not before its run's end (the end event's time, rounded to the ns; 1 us of margin).
      if (now_ns + 1000 < end_ns_[k] || work(k) != 0) return false;
      ended = k;
      return true;
    });
    return ended;
  }
  MarkMaybe(Bound(now_ns));
  std::size_t best = size_;
  double best_work = std::numeric_limits<double>::infinity();
  ForEachFrom(maybe_, cursor, [&](std::size_t k) {
    if (Field(&Block::least, k) >= best_work) return false;
    if (const double w = work(k); w < best_work) {
      best_work = w;
      best = k;
    }
    return false;
  });
  return best;
}

template <class Visit>
bool LeastWorkTable::ForEachIn(const std::vector<std::uint64_t>& bits, std::size_t from,
                               std::size_t to, Visit& visit) const {
  for (std::size_t w = from / kWordBits; w * kWordBits < to; ++w) {
    std::uint64_t word = bits[w];
    if (w == from / kWordBits) word &= ~std::uint64_t{0} << (from % kWordBits);
    if (to - w * kWordBits < kWordBits) word &= (std::uint64_t{1} << (to - w * kWordBits)) - 1;
    for (; word != 0; word &= word - 1) {
      if (visit(w * kWordBits + static_cast<std::size_t>(std::countr_zero(word)))) return true;
    }
  }
  return false;
}

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_LEAST_WORK_TABLE_H_
