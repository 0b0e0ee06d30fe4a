// The ring's two phases over any group and any split of the buffer into one block per member,
// so that other algorithms (hierarchical) can reduce-scatter and all-gather inside a node.
#pragma once

#include <cstddef>
#include <span>

#include "algorithms/collective.hpp"
#include "algorithms/ring_schedule.hpp"

namespace coll {

// Block b of the buffer is elements [bounds[b], bounds[b + 1]); bounds has group size + 1
// entries, ascending, from 0 to the count. Blocks may be empty.
using RingBounds = std::span<const std::size_t>;

// Afterwards block ring_block_of(me) of args.recv holds the reduction of every member's
// args.send over it; other blocks of recv hold partial sums. Avg is averaged over the group.
void ring_reduce_scatter(const CollectiveContext& context, const AllreduceArgs& args,
                         RingBounds bounds);

// Each member's block ring_block_of(me) of `data` is sent around until all members hold all.
void ring_all_gather(const CollectiveContext& context, void* data, DataType type,
                     RingBounds bounds);

// Both phases as one pipelined stream (the ring all-reduce).
void ring_reduce_scatter_all_gather(const CollectiveContext& context, const AllreduceArgs& args,
                                    RingBounds bounds);

}  // namespace coll
