#include "algorithms/partition.hpp"

#include <gtest/gtest.h>

namespace coll {
namespace {

TEST(Partition, CoversEveryElementOnceWithSizesDifferingByAtMostOne) {
  for (std::size_t count : {0u, 1u, 2u, 7u, 8u, 1000003u}) {
    for (std::size_t parts : {1u, 2u, 3u, 5u, 8u, 9u}) {
      const Partition partition(count, parts);
      std::size_t next = 0;
      for (std::size_t block = 0; block < parts; ++block) {
        EXPECT_EQ(partition.offset(block), next);
        EXPECT_LE(partition.length(block), partition.max_length());
        EXPECT_GE(partition.length(block) + 1, partition.max_length());
        next += partition.length(block);
      }
      EXPECT_EQ(next, count) << count << " / " << parts;
    }
  }
}

}  // namespace
}  // namespace coll
