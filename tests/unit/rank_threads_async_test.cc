// The progress engine with ranks as threads of one process: queued, fused and blocking
// all-reduces interleaved, checked exactly. ThreadSanitizer sees every thread involved: the
// callers, each communicator's engine and the transport's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store_server.hpp"
#include "coll/comm.hpp"
#include "exact_data.hpp"

namespace {

using coll::DataType;
using coll::ReduceOp;

constexpr int kRanks = 3;

// Each rank queues tensors of assorted sizes (one algorithm each), a fused group of scattered
// tensors and then a blocking call, which runs behind them; returns the wrong elements it saw.
std::size_t queue_and_check(coll::Comm& comm) {
  const std::vector<std::size_t> counts{0, 1, 2, 1000, 4099, 70001};
  const std::vector<std::string> algorithms{"ring", "tree", "halving_doubling", ""};
  std::vector<std::vector<float>> sends, recvs;
  std::vector<coll::Request> requests;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    sends.emplace_back(counts[i]);
    recvs.emplace_back(counts[i]);
    collbench::fill_input(DataType::Float32, ReduceOp::Sum, comm.rank(), sends.back().data(),
                          counts[i]);
  }
  for (std::size_t i = 0; i < counts.size(); ++i) {
    requests.push_back(comm.allreduce_async(sends[i].data(), recvs[i].data(), counts[i],
                                            DataType::Float32, ReduceOp::Sum,
                                            algorithms[i % algorithms.size()], i + 1));
  }
  std::vector<std::vector<std::int32_t>> fused{
      std::vector<std::int32_t>(5), std::vector<std::int32_t>(0), std::vector<std::int32_t>(3001)};
  std::vector<coll::Tensor> tensors;
  std::size_t first = 0;
  for (auto& tensor : fused) {
    collbench::fill_input(DataType::Int32, ReduceOp::Max, comm.rank(), tensor.data(), tensor.size(),
                          first);
    tensors.push_back({tensor.data(), tensor.size(), DataType::Int32});
    first += tensor.size();
  }
  requests.push_back(comm.allreduce_fused_async(tensors, ReduceOp::Max, "ring", 100));
  std::vector<double> blocking(777);
  collbench::fill_input(DataType::Float64, ReduceOp::Min, comm.rank(), blocking.data(),
                        blocking.size());
  comm.allreduce(blocking.data(), blocking.data(), blocking.size(), DataType::Float64,
                 ReduceOp::Min);
  for (auto& request : requests) request.wait();

  std::size_t wrong = collbench::count_wrong(DataType::Float64, ReduceOp::Min, comm.size(),
                                             blocking.data(), blocking.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    wrong += collbench::count_wrong(DataType::Float32, ReduceOp::Sum, comm.size(), recvs[i].data(),
                                    counts[i]);
  }
  first = 0;
  for (const auto& tensor : fused) {
    wrong += collbench::count_wrong(DataType::Int32, ReduceOp::Max, comm.size(), tensor.data(),
                                    tensor.size(), first);
    first += tensor.size();
  }
  return wrong;
}

class RankThreads : public ::testing::TestWithParam<const char*> {};

TEST_P(RankThreads, QueuedFusedAndBlockingCallsAreExact) {
  ::setenv("COLL_TRANSPORT", GetParam(), 1);
  coll::StoreServer store("127.0.0.1", 0, coll::make_job_token());
  std::vector<std::string> errors(kRanks);
  std::vector<std::size_t> wrong(kRanks, 0);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        auto comm = coll::Comm::from_store(store.address(), store.token(), rank, kRanks);
        for (int round = 0; round < 3; ++round) wrong[rank] += queue_and_check(*comm);
      } catch (const std::exception& error) {
        errors[rank] = error.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ::unsetenv("COLL_TRANSPORT");
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_EQ(errors[rank], "") << "rank " << rank;
    EXPECT_EQ(wrong[rank], 0u) << "rank " << rank;
  }
}

// inproc: the transport's shared mailboxes; ucx: one UCX worker per rank thread, each polled by
// its communicator's engine.
INSTANTIATE_TEST_SUITE_P(Transports, RankThreads, ::testing::Values("inproc", "ucx"),
                         [](const auto& param) { return std::string(param.param); });

}  // namespace
