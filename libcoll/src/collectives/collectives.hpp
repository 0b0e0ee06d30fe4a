// The collectives beside all-reduce (coll::Comm::broadcast, reduce, allgather, reduce_scatter),
// each over any group of the communicator. Roots and block owners are group indices.
#pragma once

#include <cstddef>

#include "algorithms/collective.hpp"

namespace coll {

// Pipelined chain from the root: data (count elements) of the root reaches every member.
void chain_broadcast(const CollectiveContext& context, void* data, std::size_t count, DataType type,
                     int root);

// Pipelined chain towards the root: recv (root only) = op over members of send.
void chain_reduce(const CollectiveContext& context, const void* send, void* recv, std::size_t count,
                  DataType type, ReduceOp op, int root);

// Ring all-gather: recv (members x count) = every member's send, in member order.
void ring_allgather(const CollectiveContext& context, const void* send, void* recv,
                    std::size_t count, DataType type);

// Ring reduce-scatter: recv (count) = block `me` of op over members of send (members x count).
void ring_reduce_scatter_to(const CollectiveContext& context, const void* send, void* recv,
                            std::size_t count, DataType type, ReduceOp op);

}  // namespace coll
