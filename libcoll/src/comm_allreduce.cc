// The all-reduce: blocking, queued on the progress engine, and fused from scattered tensors; and
// the handle (Request) of a queued one.
#include <memory>
#include <string>

#include "coll/comm.hpp"
#include "comm_impl.hpp"
#include "core/argument_validation.hpp"
#include "core/log.hpp"
#include "core/progress_engine.hpp"
#include "schedule/fusion_buffer.hpp"

namespace coll {

void Comm::Impl::run_allreduce(const AllreduceArgs& args, std::string_view algorithm,
                               std::uint64_t tag) {
  check_usable();
  const AlgorithmInfo& info = algorithm_for(args, algorithm);
  try {
    check_memory_supported(info, args);
  } catch (const Error& error) {
    throw Error(error.status(), where() + error.what());  // refused before any peer is involved
  }
  if (log_enabled(LogLevel::Trace)) {
    log_line(LogLevel::Trace, world.me,
             "allreduce #" + std::to_string(sequence + 1) + ": " + std::to_string(args.count) +
                 " x " + std::string(dtype_name(args.type)) + " " + std::string(op_name(args.op)) +
                 " with " + std::string(info.name) +
                 (algorithm.empty() && config.algorithm == "auto" ? " (auto)" : ""));
  }
  run_collective(
      CallDescriptor::make(0, args, info.name, tag),
      [&](const CollectiveContext& collective) { info.run(collective, args); }, &info);
}

void Comm::allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                     std::string_view algorithm) {
  Impl& impl = *impl_;
  validate_allreduce(impl.where(), send, recv, count, type, op);
  const AllreduceArgs args = describe_buffers(send, recv, count, type, op);
  // Blocking: the name outlives the call, and it runs no later than it returns.
  impl.serialized([&impl, args, algorithm] { impl.run_allreduce(args, algorithm, 0); });
}

Request Comm::allreduce_async(const void* send, void* recv, std::size_t count, DataType type,
                              ReduceOp op, std::string_view algorithm, std::uint64_t tag) {
  Impl& impl = *impl_;
  validate_allreduce(impl.where(), send, recv, count, type, op);
  const AllreduceArgs args = describe_buffers(send, recv, count, type, op);
  return Request(impl.engine().submit(
      [&impl, args, name = std::string(algorithm), tag] { impl.run_allreduce(args, name, tag); }));
}

Request Comm::allreduce_fused_async(std::span<const Tensor> tensors, ReduceOp op,
                                    std::string_view algorithm, std::uint64_t tag) {
  Impl& impl = *impl_;
  // Validated now, so bad input fails in the caller, not later on the engine.
  for (const Tensor& tensor : tensors) require_host(impl.where(), tensor.data, "fused all-reduce");
  const auto fused = std::make_shared<schedule::FusionBuffer>(impl.pool, tensors);
  validate_allreduce(impl.where(), fused->data(), fused->data(), fused->count(), fused->type(), op);
  return Request(impl.engine().submit([&impl, fused, op, name = std::string(algorithm), tag] {
    fused->pack();
    impl.run_allreduce({fused->data(), fused->data(), fused->count(), fused->type(), op}, name,
                       tag);
    fused->unpack();
  }));
}

bool Request::test() {
  if (!completion_) throw Error(Status::InvalidUsage, "test() on an empty coll::Request");
  return completion_->test();
}

double Request::started_at() const {
  return completion_ ? completion_->times().first : 0;
}
double Request::finished_at() const {
  return completion_ ? completion_->times().second : 0;
}

void Request::wait() {
  if (!completion_) throw Error(Status::InvalidUsage, "wait() on an empty coll::Request");
  completion_->wait();
}

}  // namespace coll
