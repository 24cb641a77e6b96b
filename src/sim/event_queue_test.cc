#include "sim/event_queue.h"

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

TEST(EventQueueDeathTest, SchedulingInThePastIsABrokenInvariant) {
  EventQueue<int> q;
  q.Schedule(nanoseconds(10), 1);
  ASSERT_TRUE(q.Pop());
  EXPECT_DEATH(q.Schedule(nanoseconds(9), 2), "in the past");
}

}  // namespace
}  // namespace headroom::sim
