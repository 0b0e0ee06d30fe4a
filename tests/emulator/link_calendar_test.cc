// A link's calendar on the virtual clock: reservations that come in emulated-time order chain as
// a token bucket's do; one that comes late in real time but starts earlier is carried in the free
// time it finds from its start, across gaps; touching stretches merge, and a full calendar forgets
// its oldest stretch.
#include <gtest/gtest.h>

#include <memory>

#include "link_calendar.hpp"

namespace {

TEST(LinkCalendar, ReservationsInTimeOrderChainAsOnABucket) {
  auto link = std::make_unique<coll::LinkCalendar>();
  EXPECT_EQ(link->reserve(0, 10), 10);
  EXPECT_EQ(link->reserve(0, 10), 20);
  EXPECT_EQ(link->reserve(5, 10), 30);
  EXPECT_EQ(link->reserve(100, 10), 110);
  EXPECT_EQ(link->reserve(50, 0), 50);  // nothing to carry: no wait
}

TEST(LinkCalendar, AnEarlierStartReachedLateFillsTheFreeTimeFromItsStart) {
  auto link = std::make_unique<coll::LinkCalendar>();
  EXPECT_EQ(link->reserve(100, 10), 110);
  EXPECT_EQ(link->reserve(0, 10), 10);   // before the stretch reserved first
  EXPECT_EQ(link->reserve(15, 80), 95);  // the gap [15, 100) fits 80
  EXPECT_EQ(link->reserve(0, 8), 98);    // 5 in [10, 15), 3 in [95, 100)
  EXPECT_EQ(link->reserve(0, 4), 112);   // 2 left in [98, 100), 2 after [100, 110)
}

TEST(LinkCalendar, KeepsTheLatestStretchesWhenFull) {
  auto link = std::make_unique<coll::LinkCalendar>();
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(link->reserve(0, 1), i + 1);  // merged into one
  // Disjoint stretches, more than it keeps: the latest still constrain new reservations.
  const int many = coll::LinkCalendar::kIntervals + 100;
  for (int i = 0; i < many; ++i) link->reserve(20000 + 10 * i, 5);
  const std::int64_t last = 20000 + 10 * (many - 1);
  EXPECT_EQ(link->reserve(last, 5), last + 10);
  EXPECT_EQ(link->reserve(last - 10, 7), last + 12);  // 5 in the gap before `last`, 2 after
}

}  // namespace
