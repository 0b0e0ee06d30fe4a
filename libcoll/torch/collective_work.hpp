// The Work a coll process group returns: wait() blocks until the collective ran on the engine
// and rethrows its error; getFuture() completes with the output tensors (what DDP waits on).
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

namespace coll::torch_backend {

class CollectiveWork final : public c10d::Work {
 public:
  CollectiveWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs);

  // Called once, on the engine thread, when the collective finished or failed.
  void complete(std::exception_ptr error);

  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace coll::torch_backend
