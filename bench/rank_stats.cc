#include "rank_stats.hpp"

#include <algorithm>
#include <cstdint>

namespace collbench {

void max_over_ranks(coll::Comm& comm, std::vector<double>& values) {
  comm.allreduce(values.data(), values.data(), values.size(), coll::DataType::Float64,
                 coll::ReduceOp::Max, "ring");
}

double max_over_ranks(coll::Comm& comm, double value) {
  std::vector<double> values{value};
  max_over_ranks(comm, values);
  return values[0];
}

std::size_t sum_over_ranks(coll::Comm& comm, std::size_t value) {
  std::uint64_t total = value;
  comm.allreduce(&total, &total, 1, coll::DataType::Uint64, coll::ReduceOp::Sum, "ring");
  return total;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

}  // namespace collbench
