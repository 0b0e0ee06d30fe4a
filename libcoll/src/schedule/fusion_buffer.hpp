// Tensor fusion for tensors scattered in memory: pack them into one pooled, pre-touched buffer,
// all-reduce that once, unpack the results. (Tensors that are already contiguous need none of
// this: they are reduced in place.)
#pragma once

#include <cstddef>
#include <span>

#include "coll/buffer_pool.hpp"
#include "coll/types.hpp"

namespace coll::schedule {

class FusionBuffer {
 public:
  // All tensors must share one data type (InvalidArgument otherwise, naming the first misfit);
  // zero-size tensors are allowed. The staging buffer comes from `pool` and returns to it.
  FusionBuffer(BufferPool& pool, std::span<const Tensor> tensors);

  DataType type() const { return type_; }
  std::size_t count() const { return count_; }  // elements of all tensors together
  std::byte* data() const { return staging_.data(); }

  void pack() const;    // tensors -> staging, in order
  void unpack() const;  // staging -> tensors, in order

 private:
  std::span<const Tensor> tensors_;
  DataType type_ = DataType::Float32;
  std::size_t count_ = 0;
  BufferPool::Lease staging_;
};

}  // namespace coll::schedule
