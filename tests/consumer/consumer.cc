// Uses the installed C++ API: one all-reduce and one broadcast, checked.
#include <coll/comm.hpp>
#include <cstdio>
#include <vector>

int main() {
  auto comm = coll::Comm::from_environment();
  std::vector<int> data(1000, comm->rank() + 1);
  comm->allreduce(data.data(), data.data(), data.size(), coll::DataType::Int32,
                  coll::ReduceOp::Sum);
  const int n = comm->size();
  int root_value = comm->rank() == 0 ? 42 : 0;
  comm->broadcast(&root_value, &root_value, 1, coll::DataType::Int32, 0);
  const bool ok = data[999] == n * (n + 1) / 2 && root_value == 42;
  std::printf("c++ consumer rank %d of %d, libcoll %s: %s\n", comm->rank(), n,
              coll::Comm::version().c_str(), ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
