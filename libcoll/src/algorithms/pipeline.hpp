// The pipelining every algorithm shares: how a block is cut into segments (COLL_SEGMENT_BYTES,
// grown when the tag's 24-bit message index would overflow) and the windowed loop that keeps
// COLL_WINDOW units' receives in flight while earlier units are consumed.
#pragma once

#include <algorithm>
#include <cstddef>

#include "algorithms/collective.hpp"

namespace coll {

// Elements [offset, offset + length) of a block, relative to the block's start.
struct Piece {
  std::size_t offset = 0;
  std::size_t length = 0;
};

class Segmentation {
 public:
  // Blocks of up to `longest` elements, cut into segments of `wanted` elements (at least 1, at
  // most `longest`); when an algorithm numbers `messages_per_segment` messages per segment,
  // segments grow until segments() * messages_per_segment fits TagSpace::kMaxMessages.
  Segmentation(std::size_t longest, std::size_t wanted, std::size_t messages_per_segment);
  // The context's pipelining unit (COLL_SEGMENT_BYTES, or COLL_NET_SEGMENT_BYTES where its group
  // spans nodes) worth of elements of `elem_bytes`.
  static Segmentation of(const CollectiveContext& context, std::size_t elem_bytes,
                         std::size_t longest, std::size_t messages_per_segment) {
    return {longest, context.segment_bytes() / elem_bytes, messages_per_segment};
  }

  std::size_t elems() const { return elems_; }        // elements per segment
  std::size_t segments() const { return segments_; }  // segments of the longest block
  // Segment `index` of a block of `block_length` elements (empty past the block's end).
  Piece piece(std::size_t block_length, std::size_t index) const {
    const std::size_t begin = std::min(block_length, index * elems_);
    return {begin, std::min(block_length, begin + elems_) - begin};
  }
  std::size_t segments_of(std::size_t block_length) const {
    return (block_length + elems_ - 1) / elems_;
  }

 private:
  std::size_t elems_ = 1;
  std::size_t segments_ = 0;
};

// COLL_WINDOW, at least 1: how many units' receives (and staging slots) are in flight.
inline std::size_t window_of(const Tuning& tuning) {
  return static_cast<std::size_t>(std::max(1, tuning.window));
}

// Runs units 0..units-1 in order: post(u) posts unit u's receives (into staging slot
// u % window), finish(u) waits for them and consumes them, after which unit u + window, which
// reuses that slot, is posted. Receives of the next units arrive while one is being reduced.
template <typename Post, typename Finish>
void run_windowed(std::size_t units, std::size_t window, Post&& post, Finish&& finish) {
  for (std::size_t u = 0; u < std::min(window, units); ++u) post(u);
  for (std::size_t u = 0; u < units; ++u) {
    finish(u);
    if (u + window < units) post(u + window);
  }
}

}  // namespace coll
