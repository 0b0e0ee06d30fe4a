#include "argument_check.hpp"

#include <algorithm>
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
                               const TagSpace& tags, const CallDescriptor& mine,
                               bool algorithm_compares)
    : transport_(transport),
      buffers_(buffers),
      mine_(mine),
      me_(group.global(group.me)),
      previous_(group.global(group.index_after(-1))),
      next_(group.global(group.index_after(1))),
      send_tag_(tags.make(me_, 0)),
      receive_tag_(tags.make(previous_, 0)) {
  if (!algorithm_compares) post_receive();
}

void NeighbourCheck::post_receive() {
  posted_ = true;
  incoming_ = transport_.recv_up_to(previous_, receive_tag_, buffers_.inbox.data(),
                                    sizeof(CallDescriptor) + kMaxCarriedBytes);
}

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
  if (!posted_) post_receive();
  received_ = true;
  transport_.wait(incoming_);
  return compare_received();
}

std::span<const std::byte> NeighbourCheck::compare_received() {
  if (incoming_.bytes < sizeof(CallDescriptor))
    fail_everywhere(transport_, size_mismatch_reason(previous_, me_, sizeof mine_));
  compare(previous_, {buffers_.inbox.data(), sizeof(CallDescriptor)}, me_, descriptor());
  return {buffers_.inbox.data() + sizeof(CallDescriptor), incoming_.bytes - sizeof(CallDescriptor)};
}

std::span<const std::byte> NeighbourCheck::descriptor() const {
  return {reinterpret_cast<const std::byte*>(&mine_), sizeof mine_};
}

void NeighbourCheck::compare(int first_rank, std::span<const std::byte> first, int second_rank,
                             std::span<const std::byte> second) {
  if (first.size() == second.size() && std::memcmp(first.data(), second.data(), first.size()) == 0)
    return;
  CallDescriptor theirs{}, ours{};
  std::memcpy(&theirs, first.data(), std::min(first.size(), sizeof theirs));
  std::memcpy(&ours, second.data(), std::min(second.size(), sizeof ours));
  const bool reordered =
      theirs.tag != ours.tag || theirs.count != ours.count || theirs.kind != ours.kind;
  CallDescriptor same_algorithm = theirs;
  std::memcpy(same_algorithm.algorithm, ours.algorithm, sizeof ours.algorithm);
  const bool only_algorithm = std::memcmp(&same_algorithm, &ours, sizeof ours) == 0;
  const char* why = reordered ? ": the ranks issued their collectives in different orders"
                    : only_algorithm
                        ? ": the ranks chose different algorithms (their COLL_ALGO, tuning files "
                          "or cost parameters differ, or some passed buffers from "
                          "allocate_shared and others not, or some reduced in place and others "
                          "not)"
                        : ": the ranks passed different arguments";
  fail_everywhere(transport_, "rank " + std::to_string(first_rank) + " called " +
                                  theirs.describe() + " but rank " + std::to_string(second_rank) +
                                  " called " + ours.describe() + why);
}

void NeighbourCheck::poll_message() {
  if (!posted_) {
    if (!transport_.probe(previous_, receive_tag_)) return;
    post_receive();
  }
  transport_.progress();
  if (!transport_.test(incoming_)) return;
  received_ = true;
  compare_received();
}

void NeighbourCheck::complete() {
  if (compared_all_) return;
  if (!sent_) send(nullptr, 0);
  if (!received_) receive();
  transport_.wait(outgoing_);
}

}  // namespace coll
