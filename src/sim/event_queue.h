// EventQueue: the discrete-event engine's agenda. Events are ordered by (time, sequence number),
// so events at the same time run in the order they were scheduled (FIFO ties, as in ns-3) and a
// run is a pure function of its inputs. Cancellation marks the event and costs O(1); marked
// events are dropped when they reach the top. Time never runs backwards: scheduling in the past
// is a broken invariant. Thread-compatible.
#ifndef HEADROOM_SIM_EVENT_QUEUE_H_
#define HEADROOM_SIM_EVENT_QUEUE_H_

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
  bool empty() const { return heap_.size() == cancelled_.size(); }
  std::size_t size() const { return heap_.size() - cancelled_.size(); }

  // REQUIRES: time >= now().
  EventId Schedule(SimTime time, Payload payload) {
    HEADROOM_CHECK(time >= now_) << "event scheduled in the past: " << time.count() << " ns < "
                                 << now_.count() << " ns";
    const EventId id = next_id_++;
    heap_.push(Event{time, id, std::move(payload)});
    return id;
  }

  // REQUIRES: `id` is pending (scheduled, neither run nor cancelled). Owners keep the id of
  // their pending event and forget it when it runs.
  void Cancel(EventId id) { cancelled_.insert(id); }

  // The next live event, advancing now() to its time; nullopt when none is left.
  std::optional<Event> Pop() {
    while (!heap_.empty()) {
      Event event = heap_.top();
      heap_.pop();
      if (TakeCancelled(event.id)) continue;
      now_ = event.time;
      return event;
    }
    return std::nullopt;
  }

  // Time of the next live event, dropping cancelled ones at the top.
  std::optional<SimTime> PeekTime() {
    while (!heap_.empty()) {
      if (!TakeCancelled(heap_.top().id)) return heap_.top().time;
      heap_.pop();
    }
    return std::nullopt;
  }

 private:
  // Whether `id` was cancelled, forgetting it if so. No hashing while nothing is cancelled.
  bool TakeCancelled(EventId id) { return !cancelled_.empty() && cancelled_.erase(id) > 0; }

  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.id > b.id;
    }
  };

  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::unordered_set<EventId> cancelled_;
  SimTime now_{0};
  EventId next_id_ = 0;
};

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_EVENT_QUEUE_H_
