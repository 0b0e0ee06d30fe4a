#include "process_group_coll.hpp"

#include <Python.h>

#include <stdexcept>

#include <ATen/Parallel.h>

#include "coll/config.hpp"
#include "coll/env.hpp"
#include "collective_work.hpp"
#include "store_exchange.hpp"

namespace coll::torch_backend {

namespace {

std::size_t run_here_bytes(int rank) {
  const auto text = env_string("COLL_TORCH_RUN_HERE_BYTES");
  if (!text) return 64 << 10;
  const auto bytes = parse_size(*text);
  TORCH_CHECK(bytes && *bytes >= 0, "coll backend, rank ", rank,
              ": COLL_TORCH_RUN_HERE_BYTES must be a size (0, 4K, 1M), not '", *text, "'");
  return static_cast<std::size_t>(*bytes);
}

// The COLL_* settings; unless COLL_COMPUTE_THREADS says otherwise, torch's intra-op threads
// compute beside the collectives (DDP's backward beside its buckets' all-reduces).
Config torch_config() {
  Config config = Config::from_environment();
  if (!env_string("COLL_COMPUTE_THREADS")) config.compute_threads = at::get_num_threads();
  return config;
}

}  // namespace

ProcessGroupColl::ProcessGroupColl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size)
    : c10d::ProcessGroup(rank, size),
      run_here_bytes_(run_here_bytes(rank)),
      comm_(Comm::from_exchange(rank, size, std::make_unique<StoreExchange>(store, rank, size),
                                torch_config())),
      engine_(std::make_unique<ProgressEngine>(steady_cost_clock())) {}

ProcessGroupColl::~ProcessGroupColl() {
  // Finished collectives release their tensors on the engine thread, and freeing a tensor that
  // has a Python object takes the GIL: drain the engine without holding it (destroy_process_group
  // holds it), or that thread and this one wait for each other. Destroying the communicator is
  // collective, so other Python threads may run meanwhile too.
  PyThreadState* released =
      Py_IsInitialized() && PyGILState_Check() ? PyEval_SaveThread() : nullptr;
  engine_.reset();
  comm_.reset();
  if (released != nullptr) PyEval_RestoreThread(released);
}

c10::intrusive_ptr<c10d::ProcessGroup> ProcessGroupColl::create(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
    const std::chrono::duration<float>&) {
  return c10::make_intrusive<ProcessGroupColl>(store, rank, size);
}

DataType ProcessGroupColl::checked_type(const at::Tensor& tensor, const char* collective) const {
  TORCH_CHECK(tensor.device().is_cpu() && tensor.layout() == at::kStrided && tensor.is_contiguous(),
              "coll backend, rank ", getRank(), ": ", collective,
              " needs dense contiguous CPU tensors, got ", tensor.toString(),
              tensor.is_contiguous() ? "" : " (not contiguous)");
  switch (tensor.scalar_type()) {
    case at::kFloat:
      return DataType::Float32;
    case at::kDouble:
      return DataType::Float64;
    case at::kHalf:
      return DataType::Float16;
    case at::kBFloat16:
      return DataType::Bfloat16;
    case at::kChar:
      return DataType::Int8;
    case at::kByte:
      return DataType::Uint8;
    case at::kInt:
      return DataType::Int32;
    case at::kLong:
      return DataType::Int64;
    default:
      TORCH_CHECK(false, "coll backend, rank ", getRank(), ": ", collective,
                  " does not support tensors of type ", tensor.scalar_type());
  }
}

ReduceOp ProcessGroupColl::checked_op(const c10d::ReduceOp& op, const char* collective) const {
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
      return ReduceOp::Sum;
    case c10d::ReduceOp::AVG:
      return ReduceOp::Avg;
    case c10d::ReduceOp::PRODUCT:
      return ReduceOp::Prod;
    case c10d::ReduceOp::MIN:
      return ReduceOp::Min;
    case c10d::ReduceOp::MAX:
      return ReduceOp::Max;
    default:
      TORCH_CHECK(false, "coll backend, rank ", getRank(), ": ", collective,
                  " does not support reduce op ", static_cast<int>(op.op_),
                  " (sum, avg, product, min and max only)");
  }
}

namespace {

at::Tensor single(std::vector<at::Tensor>& tensors, const char* collective, int rank) {
  TORCH_CHECK(tensors.size() == 1, "coll backend, rank ", rank, ": ", collective,
              " takes one tensor per process, got ", tensors.size());
  return tensors[0];
}

void check_same(const at::Tensor& tensor, const at::Tensor& like, const char* collective,
                int rank) {
  TORCH_CHECK(tensor.numel() == like.numel() && tensor.scalar_type() == like.scalar_type(),
              "coll backend, rank ", rank, ": ", collective, " needs tensors of ", like.numel(),
              " ", like.scalar_type(), ", got ", tensor.numel(), " ", tensor.scalar_type());
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::enqueue(c10d::OpType type,
                                                         std::vector<at::Tensor> outputs,
                                                         std::size_t bytes,
                                                         std::function<void(Comm&)> collective) {
  auto work = c10::make_intrusive<CollectiveWork>(getRank(), type, std::move(outputs));
  std::function<void()> run = [work, collective = std::move(collective), comm = comm_.get()] {
    try {
      collective(*comm);
      work->complete(nullptr);
    } catch (const std::exception& error) {
      // libcoll's message names the failing rank; say which backend it comes from.
      work->complete(std::make_exception_ptr(
          std::runtime_error(std::string("coll backend: ") + error.what())));
    }
  };
  if (bytes > run_here_bytes_ || !engine_->run_here_if_idle(run)) engine_->submit(std::move(run));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& options) {
  at::Tensor tensor = single(tensors, "allreduce", getRank());
  const DataType type = checked_type(tensor, "allreduce");
  const ReduceOp op = checked_op(options.reduceOp, "allreduce");
  return enqueue(c10d::OpType::ALLREDUCE, {tensor}, tensor.nbytes(),
                 [tensor, type, op](Comm& comm) {
                   comm.allreduce(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), type, op);
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::broadcast(std::vector<at::Tensor>& tensors,
                                                           const c10d::BroadcastOptions& options) {
  at::Tensor tensor = single(tensors, "broadcast", getRank());
  const DataType type = checked_type(tensor, "broadcast");
  const int root = static_cast<int>(options.rootRank);
  return enqueue(c10d::OpType::BROADCAST, {tensor}, tensor.nbytes(),
                 [tensor, type, root](Comm& comm) {
                   comm.broadcast(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), type, root);
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::reduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::ReduceOptions& options) {
  at::Tensor tensor = single(tensors, "reduce", getRank());
  const DataType type = checked_type(tensor, "reduce");
  const ReduceOp op = checked_op(options.reduceOp, "reduce");
  const int root = static_cast<int>(options.rootRank);
  return enqueue(
      c10d::OpType::REDUCE, {tensor}, tensor.nbytes(), [tensor, type, op, root](Comm& comm) {
        comm.reduce(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), type, op, root);
      });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  at::Tensor input = single(inputs, "allgather", getRank());
  const DataType type = checked_type(input, "allgather");
  TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<std::size_t>(getSize()),
              "coll backend, rank ", getRank(), ": allgather needs one list of ", getSize(),
              " output tensors");
  for (const auto& output : outputs[0]) check_same(output, input, "allgather", getRank());
  std::vector<at::Tensor> results = outputs[0];
  return enqueue(c10d::OpType::ALLGATHER, results, input.nbytes() * getSize(),
                 [input, results, type](Comm& comm) {
                   // Gathered into one buffer, then copied out: the output tensors need not be
                   // adjacent.
                   at::Tensor gathered = at::empty(
                       {static_cast<int64_t>(results.size()), input.numel()}, input.options());
                   comm.allgather(input.data_ptr(), gathered.data_ptr(), input.numel(), type);
                   for (std::size_t i = 0; i < results.size(); ++i) {
                     results[i].view({-1}).copy_(gathered[static_cast<int64_t>(i)]);
                   }
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::_allgather_base(at::Tensor& output,
                                                                 at::Tensor& input,
                                                                 const c10d::AllgatherOptions&) {
  const DataType type = checked_type(input, "allgather");
  checked_type(output, "allgather");
  TORCH_CHECK(
      output.numel() == input.numel() * getSize() && output.scalar_type() == input.scalar_type(),
      "coll backend, rank ", getRank(), ": allgather's output must hold ", getSize(), " inputs");
  return enqueue(c10d::OpType::_ALLGATHER_BASE, {output}, output.nbytes(),
                 [input, output, type](Comm& comm) {
                   comm.allgather(input.data_ptr(), output.data_ptr(), input.numel(), type);
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& options) {
  at::Tensor output = single(outputs, "reduce_scatter", getRank());
  const DataType type = checked_type(output, "reduce_scatter");
  const ReduceOp op = checked_op(options.reduceOp, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<std::size_t>(getSize()),
              "coll backend, rank ", getRank(), ": reduce_scatter needs one list of ", getSize(),
              " input tensors");
  for (const auto& input : inputs[0]) check_same(input, output, "reduce_scatter", getRank());
  std::vector<at::Tensor> blocks = inputs[0];
  return enqueue(c10d::OpType::REDUCE_SCATTER, {output}, output.nbytes() * getSize(),
                 [output, blocks, type, op](Comm& comm) {
                   std::vector<at::Tensor> flat;
                   for (const auto& block : blocks) flat.push_back(block.reshape({-1}));
                   const at::Tensor packed = at::cat(flat);
                   comm.reduce_scatter(packed.data_ptr(), output.data_ptr(), output.numel(), type,
                                       op);
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& options) {
  const DataType type = checked_type(output, "reduce_scatter");
  checked_type(input, "reduce_scatter");
  const ReduceOp op = checked_op(options.reduceOp, "reduce_scatter");
  TORCH_CHECK(
      input.numel() == output.numel() * getSize() && output.scalar_type() == input.scalar_type(),
      "coll backend, rank ", getRank(), ": reduce_scatter's input must hold ", getSize(),
      " outputs");
  return enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, {output}, input.nbytes(),
                 [input, output, type, op](Comm& comm) {
                   comm.reduce_scatter(input.data_ptr(), output.data_ptr(), output.numel(), type,
                                       op);
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::barrier(const c10d::BarrierOptions&) {
  return enqueue(c10d::OpType::BARRIER, {}, 0, [](Comm& comm) { comm.barrier(); });
}

}  // namespace coll::torch_backend
