// Packing scattered tensors into one buffer and back is bit-exact for any list of tensors.
#include "schedule/fusion_buffer.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "coll/error.hpp"

namespace coll::schedule {
namespace {

TEST(FusionBuffer, PackUnpackRoundTripsArbitraryTensorLists) {
  BufferPool pool;
  std::mt19937 random(7);
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t n = random() % 12;  // 0..11 tensors
    std::vector<std::vector<double>> storage(n);
    std::vector<Tensor> tensors;
    for (std::size_t i = 0; i < n; ++i) {
      storage[i].resize(random() % 5 == 0 ? 0 : random() % 1000 + 1);  // zero-size and odd sizes
      for (auto& v : storage[i]) v = double(random());
      tensors.push_back({storage[i].data(), storage[i].size(), DataType::Float64});
    }
    const auto original = storage;
    FusionBuffer fused(pool, tensors);
    fused.pack();
    // The packed buffer is the tensors back to back, in order.
    const auto* packed = reinterpret_cast<const double*>(fused.data());
    std::size_t at = 0;
    for (const auto& tensor : original) {
      ASSERT_EQ(std::memcmp(packed + at, tensor.data(), tensor.size() * sizeof(double)), 0);
      at += tensor.size();
    }
    EXPECT_EQ(fused.count(), at);
    // A "reduction" in the buffer comes back to the right tensors and elements.
    auto* writable = reinterpret_cast<double*>(fused.data());
    for (std::size_t i = 0; i < fused.count(); ++i) writable[i] = double(i) * 0.5;
    fused.unpack();
    at = 0;
    for (const auto& tensor : storage) {
      for (double v : tensor) EXPECT_EQ(v, double(at++) * 0.5);
    }
  }
}

TEST(FusionBuffer, MixedDataTypesAreRefusedNamingTheTensor) {
  BufferPool pool;
  float a[4] = {};
  double b[4] = {};
  const Tensor tensors[] = {{a, 4, DataType::Float32}, {b, 4, DataType::Float64}};
  try {
    FusionBuffer fused(pool, tensors);
    FAIL() << "mixed types accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("tensor 1 is float64"), std::string::npos)
        << error.what();
  }
}

TEST(FusionBuffer, NullDataWithElementsIsRefused) {
  BufferPool pool;
  const Tensor tensors[] = {{nullptr, 0, DataType::Float32}, {nullptr, 3, DataType::Float32}};
  EXPECT_THROW(FusionBuffer(pool, tensors), Error);
}

}  // namespace
}  // namespace coll::schedule
