// EventQueue: the discrete-event engine's agenda. Events are ordered by (time, sequence number),
// so events at the same time run in the order they were scheduled (FIFO ties, as in ns-3) and a
// run is a pure function of its inputs. Cancellation marks the event and costs O(1); marked
// events are dropped when they reach the top. Keyed events are for owners that have at most one
// event pending (the simulator's instances): scheduling one for a key replaces the key's pending
// one in place (an indexed heap), so a rescheduled owner leaves nothing stale behind to pop.
// Both kinds share one sequence. Time never runs backwards: scheduling in the past is a broken
// invariant. Thread-compatible.
#ifndef HEADROOM_SIM_EVENT_QUEUE_H_
#define HEADROOM_SIM_EVENT_QUEUE_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <queue>
#include <unordered_set>
#include <vector>

#include "core/check.h"
#include "core/time.h"

namespace headroom::sim {

// Simulated time since the start of a run, integer nanoseconds.
using SimTime = core::Duration;

using EventId = std::uint64_t;

template <class Payload>
class EventQueue {
 public:
  struct Event {
    SimTime time;
    EventId id;
    Payload payload;
  };

  SimTime now() const { return now_; }
  bool empty() const { return size() == 0; }
  std::size_t size() const {
    return heap_.size() - cancelled_.size() + keyed_.size() - (popped_ != kNotPending ? 1 : 0);
  }

  // REQUIRES: time >= now().
  EventId Schedule(SimTime time, Payload payload) {
    CheckNotPast(time);
    const EventId id = next_id_++;
    heap_.push(Event{time, id, std::move(payload)});
    return id;
  }

  // Schedules the one pending event of `key`, replacing the one it had. REQUIRES: time >= now().
  EventId ScheduleKeyed(std::size_t key, SimTime time, Payload payload) {
    CheckNotPast(time);
    const EventId id = next_id_++;
    if (key == popped_) {
      // The key's event just ran and still holds the top: the next one takes its place. It
      // sorts after the one it replaces (a later id, no earlier time), so it can only go down.
      popped_ = kNotPending;
      payloads_[key] = std::move(payload);
      keyed_.front().time = time;
      keyed_.front().id = id;
      SiftDown(0);
      return id;
    }
    RemovePopped();
    if (key >= position_.size()) {
      position_.resize(key + 1, kNotPending);
      payloads_.resize(key + 1);
    }
    payloads_[key] = std::move(payload);
    if (position_[key] == kNotPending) {
      position_[key] = keyed_.size();
      keyed_.push_back({time, id, key});
      SiftUp(position_[key]);
    } else {
      const std::size_t at = position_[key];
      const bool earlier = time < keyed_[at].time;  // ids only grow: a tie sorts later
      keyed_[at].time = time;
      keyed_[at].id = id;
      if (earlier) {
        SiftUp(at);
      } else {
        SiftDown(at);
      }
    }
    return id;
  }

  // REQUIRES: `id` is pending (scheduled, neither run nor cancelled). Owners keep the id of
  // their pending event and forget it when it runs.
  void Cancel(EventId id) { cancelled_.insert(id); }

  // The next live event, advancing now() to its time; nullopt when none is left.
  std::optional<Event> Pop() {
    DropCancelled();
    RemovePopped();
    if (!keyed_.empty() && (heap_.empty() || Before(keyed_.front(), heap_.top()))) {
      const Keyed top = keyed_.front();
      popped_ = top.key;  // removed by the next operation, unless it schedules the key again
      now_ = top.time;
      return Event{top.time, top.id, std::move(payloads_[top.key])};
    }
    if (heap_.empty()) return std::nullopt;
    Event event = heap_.top();
    heap_.pop();
    now_ = event.time;
    return event;
  }

  // Time of the next live event, dropping cancelled ones at the top.
  std::optional<SimTime> PeekTime() {
    DropCancelled();
    RemovePopped();
    if (!keyed_.empty() && (heap_.empty() || Before(keyed_.front(), heap_.top()))) {
      return keyed_.front().time;
    }
    if (heap_.empty()) return std::nullopt;
    return heap_.top().time;
  }

 private:
  static constexpr std::size_t kNotPending = static_cast<std::size_t>(-1);

  // A keyed event's place in its heap; its payload waits in payloads_ by key, so that a sift
  // moves 24 bytes, not the event.
  struct Keyed {
    SimTime time;
    EventId id;
    std::size_t key;
  };

  template <class A, class B>
  static bool Before(const A& a, const B& b) {
    return a.time != b.time ? a.time < b.time : a.id < b.id;
  }

  void CheckNotPast(SimTime time) const {
    HEADROOM_CHECK(time >= now_) << "event scheduled in the past: " << time.count() << " ns < "
                                 << now_.count() << " ns";
  }

  void DropCancelled() {
    while (!heap_.empty() && TakeCancelled(heap_.top().id)) heap_.pop();
  }

  void Place(std::size_t at, const Keyed& entry) {
    position_[entry.key] = at;
    keyed_[at] = entry;
  }

  // keyed_ is a 4-ary heap: half the depth of a binary one for the simulator's few dozen
  // instances, whose ends are rescheduled at every arrival and iteration. The pop order is
  // the total order (time, id) whatever the heap's shape.
  static constexpr std::size_t kArity = 4;

  void SiftUp(std::size_t at) {
    const Keyed entry = keyed_[at];
    while (at > 0) {
      const std::size_t parent = (at - 1) / kArity;
      if (!Before(entry, keyed_[parent])) break;
      Place(at, keyed_[parent]);
      at = parent;
    }
    Place(at, entry);
  }

  void SiftDown(std::size_t at) {
    const Keyed entry = keyed_[at];
    const std::size_t n = keyed_.size();
    while (true) {
      const std::size_t first = kArity * at + 1;
      if (first >= n) break;
      std::size_t child = first;
      const std::size_t last = std::min(first + kArity, n);
      for (std::size_t c = first + 1; c < last; ++c) {
        if (Before(keyed_[c], keyed_[child])) child = c;
      }
      if (!Before(keyed_[child], entry)) break;
      Place(at, keyed_[child]);
      at = child;
    }
    Place(at, entry);
  }

  // Pop leaves a keyed event it returns at the top, where its owner's next event (most often
  // scheduled at once: an instance's next iteration) takes its place with one sift down instead
  // of a removal and an insertion; any other operation removes it first.
  void RemovePopped() {
    if (popped_ == kNotPending) return;
    popped_ = kNotPending;
    RemoveKeyedTop();
  }

  void RemoveKeyedTop() {
    position_[keyed_.front().key] = kNotPending;
    const Keyed last = keyed_.back();
    keyed_.pop_back();
    if (keyed_.empty()) return;
    keyed_.front() = last;
    SiftDown(0);
  }

  // Whether `id` was cancelled, forgetting it if so. No hashing while nothing is cancelled.
  bool TakeCancelled(EventId id) { return !cancelled_.empty() && cancelled_.erase(id) > 0; }

  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.id > b.id;
    }
  };

  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::unordered_set<EventId> cancelled_;
  std::vector<Keyed> keyed_;           // a 4-ary min-heap by (time, id)
  std::vector<std::size_t> position_;  // by key: its index in keyed_, or kNotPending
  std::vector<Payload> payloads_;      // by key: its pending event's payload
  std::size_t popped_ = kNotPending;   // the key whose event Pop returned, still at the top
  SimTime now_{0};
  EventId next_id_ = 0;
};

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_EVENT_QUEUE_H_
