// allocate_shared's regions: found by any range inside them, refused past their end and once
// freed; and a peer's view of one (PeerMappings), here this process mapping its own region
// through /proc as a peer of its host does: the same bytes at another address, refused when the
// published identity does not match, and dropped least recently used first past its capacity.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "coll/error.hpp"
#include "coll/shared_memory.hpp"
#include "core/shared_regions.hpp"
#include "transport/peer_mappings.hpp"
#include "transport/peer_memory.hpp"

namespace {

using coll::SharedRegionRef;

struct SharedBuffer {
  explicit SharedBuffer(std::size_t bytes)
      : data(static_cast<std::byte*>(coll::allocate_shared(bytes))) {}
  ~SharedBuffer() { coll::free_shared(data); }
  SharedRegionRef region() const { return coll::shared_region_of(data, 1).value(); }
  std::byte* data;
};

TEST(SharedMemory, RegionsAreFoundByAnyRangeInsideThem) {
  SharedBuffer buffer(10000);
  const SharedRegionRef region = buffer.region();
  EXPECT_EQ(region.base, coll::address_of(buffer.data));
  EXPECT_EQ(region.size, 12288u);  // whole pages
  EXPECT_GE(region.fd, 0);
  EXPECT_NE(region.inode, 0u);
  const auto inside = coll::shared_region_of(buffer.data + 100, 12188);
  ASSERT_TRUE(inside.has_value());
  EXPECT_EQ(inside->base, region.base);
  EXPECT_FALSE(coll::shared_region_of(buffer.data + 100, 12189).has_value());  // past the end
  int on_stack = 0;
  EXPECT_FALSE(coll::shared_region_of(&on_stack, sizeof on_stack).has_value());
}

TEST(SharedMemory, FreedRegionsAreForgottenAndForeignPointersRefused) {
  void* pointer = coll::allocate_shared(1);
  static_cast<char*>(pointer)[4095] = 1;  // a whole page, writable
  coll::free_shared(pointer);
  EXPECT_FALSE(coll::shared_region_of(pointer, 1).has_value());
  EXPECT_NO_THROW(coll::free_shared(nullptr));
  int on_stack = 0;
  try {
    coll::free_shared(&on_stack);
    FAIL() << "a pointer allocate_shared did not return was freed";
  } catch (const coll::Error& error) {
    EXPECT_EQ(error.status(), coll::Status::InvalidArgument);
  }
}

TEST(PeerMappings, AViewShowsTheOwnersBytesAtAnotherAddress) {
  SharedBuffer buffer(1 << 20);
  std::memset(buffer.data + 4096, 0x5a, 100);
  coll::PeerMappings mappings(0, 2, 4);
  const std::byte* view =
      mappings.view(1, ::getpid(), buffer.region(), coll::address_of(buffer.data + 4096), 100);
  ASSERT_NE(view, nullptr);
  EXPECT_NE(view, buffer.data + 4096);
  EXPECT_EQ(std::memcmp(view, buffer.data + 4096, 100), 0);
  buffer.data[4096] = std::byte{7};  // the owner's later writes show through
  EXPECT_EQ(view[0], std::byte{7});
  // Outside the region: no view.
  EXPECT_EQ(mappings.view(1, ::getpid(), buffer.region(),
                          coll::address_of(buffer.data + (1 << 20) - 10), 11),
            nullptr);
}

TEST(PeerMappings, ARegionThatIsNotWhatWasPublishedIsRefusedForThatPeer) {
  SharedBuffer buffer(4096);
  SharedRegionRef wrong = buffer.region();
  wrong.inode += 1;
  coll::PeerMappings mappings(0, 3, 4);
  EXPECT_EQ(mappings.view(1, ::getpid(), wrong, wrong.base, 1), nullptr);
  // That peer is not tried again; another peer is.
  EXPECT_EQ(mappings.view(1, ::getpid(), buffer.region(), wrong.base, 1), nullptr);
  EXPECT_NE(mappings.view(2, ::getpid(), buffer.region(), wrong.base, 1), nullptr);
}

TEST(PeerMappings, TheLeastRecentlyUsedMappingIsDroppedPastCapacity) {
  SharedBuffer first(4096), second(4096), third(4096);
  coll::PeerMappings mappings(0, 2, 2);
  auto view = [&](const SharedBuffer& buffer) {
    return mappings.view(1, ::getpid(), buffer.region(), coll::address_of(buffer.data), 1);
  };
  const std::byte* first_view = view(first);
  ASSERT_NE(first_view, nullptr);
  EXPECT_EQ(view(first), first_view);  // kept
  ASSERT_NE(view(second), nullptr);
  EXPECT_EQ(view(first), first_view);  // used again: second is now the oldest
  ASSERT_NE(view(third), nullptr);     // drops second
  EXPECT_EQ(view(first), first_view);  // still kept
}

}  // namespace
