// The pipelining units read from the environment: COLL_SEGMENT_BYTES sets both, unless
// COLL_NET_SEGMENT_BYTES sets the one between nodes; out of range is an error naming the variable.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "coll/config.hpp"
#include "coll/error.hpp"

namespace {

// Sets the two variables for one test and restores them unset.
class SegmentEnvironment {
 public:
  SegmentEnvironment(const char* segment, const char* net_segment) {
    set("COLL_SEGMENT_BYTES", segment);
    set("COLL_NET_SEGMENT_BYTES", net_segment);
  }
  ~SegmentEnvironment() {
    ::unsetenv("COLL_SEGMENT_BYTES");
    ::unsetenv("COLL_NET_SEGMENT_BYTES");
  }

 private:
  static void set(const char* name, const char* value) {
    if (value == nullptr) {
      ::unsetenv(name);
    } else {
      ::setenv(name, value, 1);
    }
  }
};

TEST(SegmentConfig, DefaultsAre256KInsideANodeAnd1MBetweenNodes) {
  const SegmentEnvironment unset(nullptr, nullptr);
  const coll::Config config = coll::Config::from_environment();
  EXPECT_EQ(config.tuning.segment_bytes, std::size_t{256} << 10);
  EXPECT_EQ(config.tuning.net_segment_bytes, std::size_t{1} << 20);
}

TEST(SegmentConfig, TheSegmentSizeSetsBothUnlessTheNetworksIsSet) {
  {
    const SegmentEnvironment both("64K", nullptr);
    const coll::Config config = coll::Config::from_environment();
    EXPECT_EQ(config.tuning.segment_bytes, std::size_t{64} << 10);
    EXPECT_EQ(config.tuning.net_segment_bytes, std::size_t{64} << 10);
  }
  const SegmentEnvironment apart("64K", "4M");
  const coll::Config config = coll::Config::from_environment();
  EXPECT_EQ(config.tuning.segment_bytes, std::size_t{64} << 10);
  EXPECT_EQ(config.tuning.net_segment_bytes, std::size_t{4} << 20);
}

TEST(SegmentConfig, ANetworkSegmentOutOfRangeNamesTheVariable) {
  const SegmentEnvironment tiny(nullptr, "8");
  try {
    coll::Config::from_environment();
    FAIL() << "expected an error";
  } catch (const coll::Error& error) {
    EXPECT_NE(std::string(error.what()).find("COLL_NET_SEGMENT_BYTES"), std::string::npos)
        << error.what();
  }
}

}  // namespace
