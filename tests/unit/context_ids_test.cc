#include "collectives/context_ids.hpp"

#include <gtest/gtest.h>

#include "coll/error.hpp"

namespace {

using coll::ContextIds;

TEST(ContextIds, TheFamilysFirstCommunicatorHoldsContextZero) {
  ContextIds ids;
  EXPECT_EQ(ContextIds::lowest_free(ids.in_use()), 1u);
}

TEST(ContextIds, ANewContextIsFreeOnEveryFutureMemberAndReleasedOnesAreReused) {
  ContextIds a, b;
  a.take(1);
  b.take(2);
  ContextIds::Mask both = a.in_use();
  for (std::size_t w = 0; w < both.size(); ++w) both[w] |= b.in_use()[w];
  EXPECT_EQ(ContextIds::lowest_free(both), 3u);
  a.release(1);
  EXPECT_EQ(ContextIds::lowest_free(a.in_use()), 1u);
}

TEST(ContextIds, AllTakenIsAnErrorNotAWraparound) {
  ContextIds ids;
  for (unsigned id = 1; id < 256; ++id) ids.take(id);
  EXPECT_THROW(ContextIds::lowest_free(ids.in_use()), coll::Error);
  ids.release(200);
  EXPECT_EQ(ContextIds::lowest_free(ids.in_use()), 200u);
}

}  // namespace
