// A chain of the group's members starting at the root, cut into pipelined segments: what the
// broadcast and reduce chains share. Position 0 is the root; data flows away from it
// (broadcast) or towards it (reduce), one segment behind the other.
#pragma once

#include <algorithm>
#include <cstddef>

#include "algorithms/collective.hpp"

namespace coll {

class Chain {
 public:
  Chain(const CollectiveContext& context, int root, std::size_t count, DataType type)
      : group_(context.group), root_(root), count_(count) {
    const std::size_t elem = dtype_size(type);
    segment_ = std::max<std::size_t>(1, context.segment_bytes() / elem);
    // Keep the segment index within the tag's message bits.
    segment_ = std::max(segment_, (count + TagSpace::kMaxMessages - 1) / TagSpace::kMaxMessages);
    segments_ = (count + segment_ - 1) / segment_;
  }

  int size() const { return group_.size(); }
  int position() const { return (group_.me - root_ + size()) % size(); }
  // The global rank at a position of the chain.
  int at(int chain_position) const { return group_.global((root_ + chain_position) % size()); }
  int me() const { return group_.global(group_.me); }

  std::size_t segments() const { return segments_; }
  std::size_t segment_elems() const { return std::min(segment_, count_); }
  std::size_t offset(std::size_t segment) const { return segment * segment_; }
  std::size_t length(std::size_t segment) const {
    return std::min(segment_, count_ - offset(segment));
  }

 private:
  const Group& group_;
  int root_;
  std::size_t count_;
  std::size_t segment_ = 1;
  std::size_t segments_ = 0;
};

}  // namespace coll
