// Combining per-rank measurements: the slowest rank defines a collective's time.
#pragma once

#include <cstddef>
#include <vector>

#include "coll/comm.hpp"

namespace collbench {

void max_over_ranks(coll::Comm& comm, std::vector<double>& values);
double max_over_ranks(coll::Comm& comm, double value);
std::size_t sum_over_ranks(coll::Comm& comm, std::size_t value);
double median(std::vector<double> values);

}  // namespace collbench
