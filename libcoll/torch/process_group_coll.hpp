// torch.distributed's backend "coll": a c10d::ProcessGroup (PyTorch 1.13's API) whose
// collectives run on a libcoll communicator, one at a time in issue order on a progress engine
// thread (a short one on the caller's thread when the engine is idle), each returning a Work
// whose future DistributedDataParallel's reducer waits on.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <functional>
#include <memory>

#include "coll/comm.hpp"
#include "core/progress_engine.hpp"

namespace coll::torch_backend {

class ProcessGroupColl final : public c10d::ProcessGroup {
 public:
  // Collective over `size` ranks: bootstraps libcoll through `store` (init_process_group's).
  ProcessGroupColl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size);
  ~ProcessGroupColl() override;

  // The function Backend.register_backend("coll", ...) is given.
  static c10::intrusive_ptr<c10d::ProcessGroup> create(const c10::intrusive_ptr<c10d::Store>& store,
                                                       int rank, int size,
                                                       const std::chrono::duration<float>& timeout);

  const std::string getBackendName() const override { return "coll"; }

  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& options) override;
  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& options) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& options) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& options) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& options) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& options) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& options) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& options) override;

 private:
  // Queues `collective` on the engine; the Work completes with `outputs` or its error. One of at
  // most run_here_bytes_ runs at once on this thread if the engine is idle: the hand-off to the
  // engine thread and back costs more than such a collective (docs/torch-backend.md).
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, std::vector<at::Tensor> outputs,
                                         std::size_t bytes, std::function<void(Comm&)> collective);
  // Throws (a Python RuntimeError) naming this rank unless `tensor` is a dense contiguous CPU
  // tensor of a type libcoll reduces.
  DataType checked_type(const at::Tensor& tensor, const char* collective) const;
  ReduceOp checked_op(const c10d::ReduceOp& op, const char* collective) const;

  std::size_t run_here_bytes_;  // COLL_TORCH_RUN_HERE_BYTES, default 64K
  std::unique_ptr<Comm> comm_;
  std::unique_ptr<ProgressEngine> engine_;  // destroyed first: drains queued collectives
};

}  // namespace coll::torch_backend
