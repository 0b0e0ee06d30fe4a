#include "argument_check.hpp"

#include <cstring>

#include "coll/error.hpp"
#include "job_failure.hpp"

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

void check_same_call(Transport& transport, const Group& group, const TagSpace& tags,
                     const CallDescriptor& mine) {
  const int left = group.global(group.index_after(-1));
  const int right = group.global(group.index_after(1));
  CallDescriptor theirs{};
  Transport::Request requests[2] = {
      transport.recv(left, tags.make(left, 0), &theirs, sizeof theirs),
      transport.send(right, tags.make(group.global(group.me), 0), &mine, sizeof mine),
  };
  transport.wait_all(requests);
  if (std::memcmp(&theirs, &mine, sizeof mine) != 0) {
    const bool reordered =
        theirs.tag != mine.tag || theirs.count != mine.count || theirs.kind != mine.kind;
    fail_everywhere(transport,
                    "rank " + std::to_string(left) + " called " + theirs.describe() + " but rank " +
                        std::to_string(group.global(group.me)) + " called " + mine.describe() +
                        (reordered ? ": the ranks issued their collectives in different orders"
                                   : ": the ranks passed different arguments"));
  }
}

}  // namespace coll
