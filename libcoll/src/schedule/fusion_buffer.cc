#include "schedule/fusion_buffer.hpp"

#include <cstring>
#include <string>

#include "coll/error.hpp"

namespace coll::schedule {
namespace {

DataType common_type(std::span<const Tensor> tensors) {
  if (tensors.empty()) return DataType::Float32;
  for (std::size_t i = 1; i < tensors.size(); ++i) {
    if (tensors[i].type != tensors[0].type) {
      throw Error(Status::InvalidArgument, "fused all-reduce: tensor " + std::to_string(i) +
                                               " is " + std::string(dtype_name(tensors[i].type)) +
                                               " but tensor 0 is " +
                                               std::string(dtype_name(tensors[0].type)) +
                                               "; fuse tensors of one data type only");
    }
  }
  return tensors[0].type;
}

std::size_t total_count(std::span<const Tensor> tensors) {
  std::size_t total = 0;
  for (const auto& tensor : tensors) {
    if (tensor.count > 0 && tensor.data == nullptr) {
      throw Error(Status::InvalidArgument, "fused all-reduce: a tensor of " +
                                               std::to_string(tensor.count) +
                                               " elements has no data");
    }
    total += tensor.count;
  }
  return total;
}

}  // namespace

FusionBuffer::FusionBuffer(BufferPool& pool, std::span<const Tensor> tensors)
    : tensors_(tensors),
      type_(common_type(tensors)),
      count_(total_count(tensors)),
      staging_(pool.acquire(count_ * dtype_size(type_))) {}

void FusionBuffer::pack() const {
  const std::size_t elem = dtype_size(type_);
  std::byte* at = staging_.data();
  for (const auto& tensor : tensors_) {
    if (tensor.count > 0) std::memcpy(at, tensor.data, tensor.count * elem);
    at += tensor.count * elem;
  }
}

void FusionBuffer::unpack() const {
  const std::size_t elem = dtype_size(type_);
  const std::byte* at = staging_.data();
  for (const auto& tensor : tensors_) {
    if (tensor.count > 0) std::memcpy(tensor.data, at, tensor.count * elem);
    at += tensor.count * elem;
  }
}

}  // namespace coll::schedule
