#include "argument_check.hpp"

#include <cstring>

#include "coll/error.hpp"
#include "transport/job_failure.hpp"
#include "transport/waiter.hpp"

namespace coll {

namespace {

std::string_view kind_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce:
      return "allreduce";
    case CollectiveKind::Broadcast:
      return "broadcast";
    case CollectiveKind::Reduce:
      return "reduce";
    case CollectiveKind::AllGather:
      return "allgather";
    case CollectiveKind::ReduceScatter:
      return "reducescatter";
    case CollectiveKind::Split:
      return "split";
    case CollectiveKind::Barrier:
      return "barrier";
  }
  return "?";
}

}  // namespace

CallDescriptor CallDescriptor::make(std::uint64_t sequence, const AllreduceArgs& args,
                                    std::string_view algorithm, std::uint64_t tag) {
  CallDescriptor descriptor = of(CollectiveKind::AllReduce, args.count, args.type,
                                 static_cast<int>(args.op), -1, algorithm);
  descriptor.sequence = sequence;
  descriptor.tag = tag;
  return descriptor;
}

CallDescriptor CallDescriptor::of(CollectiveKind kind, std::size_t count, DataType type, int op,
                                  int root, std::string_view algorithm) {
  CallDescriptor descriptor{};
  descriptor.kind = kind;
  descriptor.count = count;
  descriptor.type = static_cast<std::int32_t>(type);
  descriptor.op = op;
  descriptor.root = root;
  algorithm.copy(descriptor.algorithm, sizeof descriptor.algorithm - 1);
  return descriptor;
}

std::string CallDescriptor::describe() const {
  const auto type_name = static_cast<unsigned>(type) < kNumDataTypes
                             ? dtype_name(static_cast<DataType>(type))
                             : std::string_view("?");
  const std::string op_text = op < 0 ? ""
                              : static_cast<unsigned>(op) < kNumReduceOps
                                  ? " " + std::string(op_name(static_cast<ReduceOp>(op)))
                                  : " ?";
  return std::string(kind_name(kind)) + " #" + std::to_string(sequence) + " of " +
         std::to_string(count) + " x " + std::string(type_name) + op_text +
         (root >= 0 ? " with root " + std::to_string(root) : "") + " (" +
         std::string(algorithm, strnlen(algorithm, sizeof algorithm)) + ")" +
         (tag != 0 ? " tagged " + std::to_string(tag) : "");
}

CheckBuffers::CheckBuffers(BufferPool& pool)
    : inbox(pool.acquire(sizeof(CallDescriptor) + CallCheck::kMaxCarriedBytes)),
      outbox(pool.acquire(sizeof(CallDescriptor) + CallCheck::kMaxCarriedBytes)) {}

NeighbourCheck::NeighbourCheck(Transport& transport, CheckBuffers& buffers, const Group& group,
                               const TagSpace& tags, const CallDescriptor& mine)
    : transport_(transport),
      buffers_(buffers),
      mine_(mine),
      me_(group.global(group.me)),
      previous_(group.global(group.index_after(-1))),
      next_(group.global(group.index_after(1))),
      send_tag_(tags.make(group.global(group.me), 0)),
      incoming_(transport.recv_up_to(previous_, tags.make(previous_, 0), buffers.inbox.data(),
                                     sizeof(CallDescriptor) + kMaxCarriedBytes)) {}

void NeighbourCheck::send(const void* data, std::size_t bytes) {
  if (bytes > kMaxCarriedBytes) {
    throw Error(Status::InternalError, "the argument check carries at most " +
                                           std::to_string(kMaxCarriedBytes) + " bytes, not " +
                                           std::to_string(bytes));
  }
  sent_ = true;
  if (bytes == 0) {
    outgoing_ = transport_.send(next_, send_tag_, &mine_, sizeof mine_);
    return;
  }
  // Descriptor and data in one message: one copy of at most kMaxCarriedBytes, cheaper than the
  // second message it saves.
  std::byte* outbox = buffers_.outbox.data();
  std::memcpy(outbox, &mine_, sizeof mine_);
  std::memcpy(outbox + sizeof mine_, data, bytes);
  outgoing_ = transport_.send(next_, send_tag_, outbox, sizeof mine_ + bytes);
}

std::span<const std::byte> NeighbourCheck::receive() {
  received_ = true;
  transport_.wait(incoming_);
  if (incoming_.bytes < sizeof(CallDescriptor))
    fail_everywhere(transport_, size_mismatch_reason(previous_, me_, sizeof mine_));
  CallDescriptor theirs;
  std::memcpy(&theirs, buffers_.inbox.data(), sizeof theirs);
  if (std::memcmp(&theirs, &mine_, sizeof mine_) != 0) {
    const bool reordered =
        theirs.tag != mine_.tag || theirs.count != mine_.count || theirs.kind != mine_.kind;
    fail_everywhere(transport_,
                    "rank " + std::to_string(previous_) + " called " + theirs.describe() +
                        " but rank " + std::to_string(me_) + " called " + mine_.describe() +
                        (reordered ? ": the ranks issued their collectives in different orders"
                                   : ": the ranks passed different arguments"));
  }
  return {buffers_.inbox.data() + sizeof theirs, incoming_.bytes - sizeof theirs};
}

void NeighbourCheck::complete() {
  if (!sent_) send(nullptr, 0);
  if (!received_) receive();
  transport_.wait(outgoing_);
}

}  // namespace coll
