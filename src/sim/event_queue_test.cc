#include "sim/event_queue.h"

#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace headroom::sim {
namespace {

using std::chrono::nanoseconds;

TEST(EventQueueTest, OrdersByTimeThenBySchedulingOrder) {
  EventQueue<int> q;
  q.Schedule(nanoseconds(20), 1);
  q.Schedule(nanoseconds(10), 2);
  q.Schedule(nanoseconds(20), 3);
  q.Schedule(nanoseconds(10), 4);
  std::vector<int> order;
  while (auto e = q.Pop()) order.push_back(e->payload);
  EXPECT_EQ(order, (std::vector<int>{2, 4, 1, 3}));
  EXPECT_EQ(q.now(), nanoseconds(20));
}

TEST(EventQueueTest, CancelledEventsNeverRun) {
  EventQueue<int> q;
  const EventId a = q.Schedule(nanoseconds(5), 1);
  q.Schedule(nanoseconds(6), 2);
  const EventId c = q.Schedule(nanoseconds(7), 3);
  q.Cancel(a);
  q.Cancel(c);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.PeekTime(), nanoseconds(6));
  auto e = q.Pop();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->payload, 2);
  EXPECT_FALSE(q.Pop());
  EXPECT_TRUE(q.empty());
}

TEST(EventQueueTest, AKeyedEventReplacesTheKeysPendingOne) {
  EventQueue<int> q;
  q.ScheduleKeyed(0, nanoseconds(30), 1);
  q.ScheduleKeyed(1, nanoseconds(20), 2);
  q.ScheduleKeyed(0, nanoseconds(10), 3);  // earlier: replaces 1
  q.ScheduleKeyed(1, nanoseconds(40), 4);  // later: replaces 2
  EXPECT_EQ(q.size(), 2u);
  std::vector<int> order;
  while (auto e = q.Pop()) order.push_back(e->payload);
  EXPECT_EQ(order, (std::vector<int>{3, 4}));
  EXPECT_TRUE(q.empty());
}

TEST(EventQueueTest, KeyedAndPlainEventsShareOneOrder) {
  EventQueue<int> q;
  q.Schedule(nanoseconds(10), 1);
  q.ScheduleKeyed(5, nanoseconds(10), 2);
  q.Schedule(nanoseconds(5), 3);
  q.ScheduleKeyed(2, nanoseconds(10), 4);
  q.Schedule(nanoseconds(10), 5);
  EXPECT_EQ(q.PeekTime(), nanoseconds(5));
  std::vector<int> order;
  while (auto e = q.Pop()) order.push_back(e->payload);
  EXPECT_EQ(order, (std::vector<int>{3, 1, 2, 4, 5}));
}

// Against the simplest correct agenda: every event in one heap, a key's replaced events skipped
// when they come up.
TEST(EventQueueTest, KeyedEventsRunAsStaleSkippingWould) {
  std::mt19937_64 rng(7);
  EventQueue<int> keyed;
  EventQueue<int> plain;
  std::vector<EventId> latest(16, 0);
  std::map<int, std::size_t> key_of;
  std::vector<int> got, want;
  int next = 0;
  for (int round = 0; round < 2000; ++round) {
    for (int k = 0; k < 3; ++k) {
      const auto at = keyed.now() + nanoseconds(rng() % 50);
      const auto key = static_cast<std::size_t>(rng() % latest.size());
      const int payload = next++;
      if (rng() % 4 == 0) {
        keyed.Schedule(at, -payload - 1);
        plain.Schedule(at, -payload - 1);
      } else {
        keyed.ScheduleKeyed(key, at, payload);
        latest[key] = plain.Schedule(at, payload);
        key_of[payload] = key;
      }
    }
    if (auto e = keyed.Pop()) got.push_back(e->payload);
    while (auto e = plain.Pop()) {
      if (e->payload >= 0 && e->id != latest[key_of[e->payload]]) continue;
      want.push_back(e->payload);
      break;
    }
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(keyed.now(), plain.now());
}

// The simulator's pattern: an instance's iteration ends, and its next one is scheduled at once
// (taking the place the event that just ran left at the top), or later, or never.
TEST(EventQueueTest, AKeyRescheduledAsItsEventRunsSortsAsAFreshOne) {
  std::mt19937_64 rng(11);
  EventQueue<int> keyed;
  EventQueue<int> plain;
  std::vector<EventId> latest(8, 0);
  std::vector<bool> pending(latest.size(), false);
  std::map<int, std::size_t> key_of;
  std::vector<int> got, want;
  int next = 0;
  std::size_t plain_live = 0;
  const auto schedule_keyed = [&](std::size_t key) {
    const auto at = keyed.now() + nanoseconds(rng() % 40);
    const int payload = next++;
    keyed.ScheduleKeyed(key, at, payload);
    latest[key] = plain.Schedule(at, payload);
    key_of[payload] = key;
    pending[key] = true;
  };
  for (std::size_t key = 0; key < latest.size(); ++key) schedule_keyed(key);
  for (int round = 0; round < 5000; ++round) {
    if (rng() % 3 == 0) {
      const auto at = keyed.now() + nanoseconds(rng() % 40);
      keyed.Schedule(at, -next - 1);
      plain.Schedule(at, -next - 1);
      ++next;
      ++plain_live;
    }
    if (keyed.empty()) schedule_keyed(static_cast<std::size_t>(rng() % latest.size()));
    auto e = keyed.Pop();
    ASSERT_TRUE(e);
    got.push_back(e->payload);
    while (auto p = plain.Pop()) {
      if (p->payload >= 0 && p->id != latest[key_of[p->payload]]) continue;
      want.push_back(p->payload);
      break;
    }
    if (e->payload >= 0) {
      const std::size_t key = key_of[e->payload];
      pending[key] = false;
      if (rng() % 4 != 0) schedule_keyed(key);  // at once, mostly
    } else {
      --plain_live;
    }
    if (rng() % 8 == 0) {  // and some key that is idle starts again
      const auto key = static_cast<std::size_t>(rng() % latest.size());
      if (!pending[key]) schedule_keyed(key);
    }
    std::size_t live = plain_live;
    for (bool p : pending) live += p ? 1 : 0;
    EXPECT_EQ(keyed.size(), live);
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(keyed.now(), plain.now());
}

TEST(EventQueueTest, SizeLeavesOutTheKeyedEventJustRun) {
  EventQueue<int> q;
  q.ScheduleKeyed(0, nanoseconds(5), 1);
  q.ScheduleKeyed(1, nanoseconds(7), 2);
  EXPECT_EQ(q.size(), 2u);
  ASSERT_TRUE(q.Pop());
  EXPECT_EQ(q.size(), 1u);
  q.ScheduleKeyed(0, nanoseconds(9), 3);  // takes the place of the event that ran
  EXPECT_EQ(q.size(), 2u);
  std::vector<int> order;
  while (auto e = q.Pop()) order.push_back(e->payload);
  EXPECT_EQ(order, (std::vector<int>{2, 3}));
  EXPECT_TRUE(q.empty());
  q.ScheduleKeyed(0, nanoseconds(9), 4);  // after the last one ran
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.PeekTime(), nanoseconds(9));
}

TEST(EventQueueDeathTest, SchedulingInThePastIsABrokenInvariant) {
  EventQueue<int> q;
  q.Schedule(nanoseconds(10), 1);
  ASSERT_TRUE(q.Pop());
  EXPECT_DEATH(q.Schedule(nanoseconds(9), 2), "in the past");
}

}  // namespace
}  // namespace headroom::sim
