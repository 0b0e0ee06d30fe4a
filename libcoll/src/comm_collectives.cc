// Every call over the group but the all-reduce: point-to-point send and receive, the barrier,
// broadcast, reduce, all-gather and reduce-scatter (their algorithms are in collectives/).
#include <cstring>
#include <string>

#include "coll/comm.hpp"
#include "collectives/collectives.hpp"
#include "comm_impl.hpp"
#include "core/argument_validation.hpp"

namespace coll {
namespace {

// All-gather and reduce-scatter take `count` elements a rank in and out, both on the host.
void check_block_buffers(const std::string& where, const char* what, const void* send,
                         const void* recv, std::size_t count) {
  check_buffer(where, what, send, count);
  check_buffer(where, what, recv, count);
  require_host(where, send, what);
  require_host(where, recv, what);
}

}  // namespace

void Comm::send(const void* data, std::size_t bytes, int peer, std::uint32_t tag) {
  Impl& impl = *impl_;
  impl.check_peer(peer, "send");
  require_host(impl.where(), data, "send");
  impl.serialized([&] {
    auto request = impl.transport.send(
        impl.world.global(peer),
        TagSpace::point_to_point(impl.context).make(impl.world.global(impl.world.me), tag), data,
        bytes);
    impl.transport.wait(request);
  });
}

void Comm::recv(void* data, std::size_t bytes, int peer, std::uint32_t tag) {
  Impl& impl = *impl_;
  impl.check_peer(peer, "recv");
  require_host(impl.where(), data, "recv");
  impl.serialized([&] {
    auto request = impl.transport.recv(
        impl.world.global(peer),
        TagSpace::point_to_point(impl.context).make(impl.world.global(peer), tag), data, bytes);
    impl.transport.wait(request);
  });
}

// Over the transport, not the bootstrap store: waiting in the store would stop this rank from
// progressing UCX, and a peer still completing a rendezvous send to it would wait forever.
// Its own kind in the call descriptor (a one-byte all-reduce on another rank is a mismatch), run by
// direct: one step, the argument check carried in it.
void Comm::barrier() {
  Impl& impl = *impl_;
  impl.serialized([&impl] {
    std::uint8_t token = 0;
    const AllreduceArgs args = describe_buffers(&token, &token, 1, DataType::Uint8, ReduceOp::Max);
    const AlgorithmInfo& direct = *find_algorithm("direct");
    impl.run_collective(
        CallDescriptor::of(CollectiveKind::Barrier, 0, DataType::Uint8, -1, -1, direct.name),
        [&](const CollectiveContext& collective) { direct.run(collective, args); }, &direct);
  });
}

void Comm::broadcast(const void* send, void* recv, std::size_t count, DataType type, int root) {
  Impl& impl = *impl_;
  check_type(impl.where(), "broadcast", type);
  check_count(impl.where(), "broadcast", count, type);
  check_root(impl.where(), "broadcast", root, size());
  if (rank() == root) check_buffer(impl.where(), "broadcast", send, count);
  check_buffer(impl.where(), "broadcast", recv, count);
  require_host(impl.where(), recv, "broadcast");
  impl.serialized([&] {
    impl.run_collective(
        CallDescriptor::of(CollectiveKind::Broadcast, count, type, -1, root, "chain"),
        [&](const CollectiveContext& collective) {
          if (rank() == root && send != recv && count > 0) {
            std::memcpy(recv, send, count * dtype_size(type));
          }
          chain_broadcast(collective, recv, count, type, root);
        });
  });
}

void Comm::reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                  int root) {
  Impl& impl = *impl_;
  check_type(impl.where(), "reduce", type);
  check_op(impl.where(), "reduce", op);
  check_count(impl.where(), "reduce", count, type);
  check_root(impl.where(), "reduce", root, size());
  check_buffer(impl.where(), "reduce", send, count);
  require_host(impl.where(), send, "reduce");
  if (rank() == root) check_buffer(impl.where(), "reduce", recv, count);
  impl.serialized([&] {
    impl.run_collective(
        CallDescriptor::of(CollectiveKind::Reduce, count, type, int(op), root, "chain"),
        [&](const CollectiveContext& collective) {
          chain_reduce(collective, send, recv, count, type, op, root);
        });
  });
}

void Comm::allgather(const void* send, void* recv, std::size_t count, DataType type) {
  Impl& impl = *impl_;
  check_type(impl.where(), "allgather", type);
  check_count(impl.where(), "allgather", count, type, static_cast<std::size_t>(size()));
  check_block_buffers(impl.where(), "allgather", send, recv, count);
  impl.serialized([&] {
    impl.run_collective(CallDescriptor::of(CollectiveKind::AllGather, count, type, -1, -1, "ring"),
                        [&](const CollectiveContext& collective) {
                          ring_allgather(collective, send, recv, count, type);
                        });
  });
}

void Comm::reduce_scatter(const void* send, void* recv, std::size_t count, DataType type,
                          ReduceOp op) {
  Impl& impl = *impl_;
  check_type(impl.where(), "reduce_scatter", type);
  check_op(impl.where(), "reduce_scatter", op);
  check_count(impl.where(), "reduce_scatter", count, type, static_cast<std::size_t>(size()));
  check_block_buffers(impl.where(), "reduce_scatter", send, recv, count);
  impl.serialized([&] {
    impl.run_collective(
        CallDescriptor::of(CollectiveKind::ReduceScatter, count, type, int(op), -1, "ring"),
        [&](const CollectiveContext& collective) {
          ring_reduce_scatter_to(collective, send, recv, count, type, op);
        });
  });
}

}  // namespace coll
