#include "collective_work.hpp"

namespace coll::torch_backend {

CollectiveWork::CollectiveWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type),
      outputs_(std::move(outputs)),
      // torch's one list-of-tensors type, not a new one made for every call
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::ofTensors())) {}

void CollectiveWork::complete(std::exception_ptr error) {
  // The future first: finish() wakes wait(), whose caller may then drop the last reference.
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
  finish(error);
}

}  // namespace coll::torch_backend
