#include "argument_check.hpp"

#include <cstring>

#include "coll/error.hpp"

namespace coll {

CallDescriptor CallDescriptor::make(std::uint64_t sequence, const AllreduceArgs& args,
                                    std::string_view algorithm, std::uint64_t tag) {
  CallDescriptor descriptor{};
  descriptor.tag = tag;
  descriptor.sequence = sequence;
  descriptor.count = args.count;
  descriptor.type = static_cast<std::int32_t>(args.type);
  descriptor.op = static_cast<std::int32_t>(args.op);
  algorithm.copy(descriptor.algorithm, sizeof descriptor.algorithm - 1);
  return descriptor;
}

std::string CallDescriptor::describe() const {
  const auto type_name = static_cast<unsigned>(type) < kNumDataTypes
                             ? dtype_name(static_cast<DataType>(type))
                             : std::string_view("?");
  const auto op_text = static_cast<unsigned>(op) < kNumReduceOps
                           ? op_name(static_cast<ReduceOp>(op))
                           : std::string_view("?");
  return "allreduce #" + std::to_string(sequence) + " of " + std::to_string(count) + " x " +
         std::string(type_name) + " " + std::string(op_text) + " (" +
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
    const bool reordered = theirs.tag != mine.tag || theirs.count != mine.count;
    throw Error(Status::InvalidUsage,
                "rank " + std::to_string(left) + " called " + theirs.describe() +
                    " but this rank called " + mine.describe() +
                    (reordered ? ": the ranks issued their collectives in different orders"
                               : ": the ranks passed different arguments"));
  }
}

}  // namespace coll
