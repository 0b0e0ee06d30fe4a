// Ranks that call a collective with different arguments must fail loudly, not hang or corrupt
// data. Each rank sends its call's descriptor to the next rank of the ring and compares the one
// it receives from the previous rank; agreement of every neighbour pair is agreement of all.
// The message may carry an algorithm's first data after the descriptor (CallCheck), so that
// small collectives pay no round for the check; otherwise it is a round before the collective.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "algorithms/collective.hpp"

namespace coll {

enum class CollectiveKind : std::int32_t {
  AllReduce,
  Broadcast,
  Reduce,
  AllGather,
  ReduceScatter,
  Split,
  Barrier,
};

struct CallDescriptor {
  std::uint64_t sequence;
  std::uint64_t count;
  CollectiveKind kind;
  std::int32_t type;
  std::int32_t op;    // -1 where the collective has none
  std::int32_t root;  // -1 where the collective has none
  std::uint64_t tag;  // caller's id of the data (Comm::allreduce_async), 0 when none
  char algorithm[24];

  static CallDescriptor make(std::uint64_t sequence, const AllreduceArgs& args,
                             std::string_view algorithm, std::uint64_t tag = 0);
  // Any other collective; its sequence is set when it runs.
  static CallDescriptor of(CollectiveKind kind, std::size_t count, DataType type, int op, int root,
                           std::string_view algorithm);
  std::string describe() const;  // "allreduce #7 of 1000 x float32 sum (ring)"
};

// The two buffers of a communicator's checks, leased once: leasing them per collective cost a
// tenth of a small all-reduce. One check at a time uses them (a communicator's collectives run
// one after another), and a failed check's receive may still land in them after the
// communicator broke: they stay this communicator's until it is destroyed.
struct CheckBuffers {
  explicit CheckBuffers(BufferPool& pool);
  BufferPool::Lease inbox;   // the previous rank's descriptor and carried data
  BufferPool::Lease outbox;  // this rank's descriptor and carried data, while being sent
};

// One collective's exchange of descriptors with the ring neighbours of `group`, in stage 15 of
// its tags. Every rank receives up to a descriptor and CallCheck::kMaxCarriedBytes from the
// previous rank, whether or not its own algorithm carries data, so ranks that disagree on the
// algorithm or the collective still compare descriptors instead of waiting for each other.
class NeighbourCheck final : public CallCheck {
 public:
  // Posts the receive from the previous rank, unless `algorithm_compares` (the algorithm hands
  // the descriptors around itself): then only when it is needed.
  NeighbourCheck(Transport& transport, CheckBuffers& buffers, const Group& group,
                 const TagSpace& tags, const CallDescriptor& mine, bool algorithm_compares);
  void send(const void* data, std::size_t bytes) override;
  std::span<const std::byte> receive() override;
  std::span<const std::byte> descriptor() const override;
  void compare(int first_rank, std::span<const std::byte> first, int second_rank,
               std::span<const std::byte> second) override;
  void poll_message() override;
  void compared_all() override { compared_all_ = true; }
  // Sends and receives what the collective did not (the check as a round of its own when called
  // before the collective), then waits for the send.
  void complete();

 private:
  void post_receive();
  // Compares the previous rank's message (complete) with this rank's call; throws when they differ.
  std::span<const std::byte> compare_received();

  Transport& transport_;
  CheckBuffers& buffers_;
  const CallDescriptor& mine_;
  const int me_;
  const int previous_;
  const int next_;
  const Tag send_tag_;
  const Tag receive_tag_;
  bool posted_ = false;
  bool compared_all_ = false;
  Transport::Request incoming_;
  Transport::Request outgoing_;
  bool sent_ = false;
  bool received_ = false;
};

}  // namespace coll
