// The transport seam: transports chosen by name, the shared waiter (timeout naming the silent
// peer, job abort, size mismatch) exercised through the in-process transport, and
// COLL_TRANSPORT=inproc through the public API with ranks as threads.
#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/store_server.hpp"
#include "coll/clock.hpp"
#include "coll/comm.hpp"
#include "coll/config.hpp"
#include "coll/error.hpp"
#include "coll/selector.hpp"
#include "core/usable_cpus.hpp"
#include "emulator/cluster_clock.hpp"
#include "emulator/emulator.hpp"
#include "transport/inproc_transport.hpp"
#include "transport/transport_registry.hpp"

namespace {

// The message of an error, for checking what it says.
bool says(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Sets an environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// CPU time the calling thread has used.
double thread_cpu_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// What a wait cost the thread that waited: CPU time and wall time.
struct WaitCost {
  double cpu_s;
  double wall_s;
};
template <typename Wait>
WaitCost cost_of(Wait wait) {
  const double cpu_before = thread_cpu_seconds();
  const double wall_before = coll::now_seconds();
  wait();
  return {thread_cpu_seconds() - cpu_before, coll::now_seconds() - wall_before};
}

// A wait of at least 0.5 s that used less than `share` of a core.
void expect_mostly_asleep(const WaitCost& cost, double share) {
  EXPECT_GE(cost.wall_s, 0.5);
  EXPECT_LT(cost.cpu_s, share * cost.wall_s) << "the waiting thread used " << cost.cpu_s
                                             << " s of CPU in a wait of " << cost.wall_s << " s";
}

coll::TransportOptions short_timeout() {
  coll::TransportOptions options;
  options.timeout_s = 0.2;
  return options;
}

TEST(TransportRegistry, KnowsAutoUcxSocketsAndInproc) {
  const auto names = coll::transport_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "auto"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "ucx"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "sockets"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "inproc"), names.end());
}

TEST(TransportRegistry, UnknownNameFailsListingTheKnownOnes) {
  ScopedEnv transport("COLL_TRANSPORT", "carrier-pigeon");
  try {
    coll::Comm::from_environment();  // one rank: no launcher variables in the test's environment
    FAIL() << "expected an error";
  } catch (const coll::Error& error) {
    EXPECT_EQ(error.status(), coll::Status::InvalidArgument);
    EXPECT_TRUE(says(error.what(), "unknown transport 'carrier-pigeon'")) << error.what();
    EXPECT_TRUE(says(error.what(), "known: auto, inproc, sockets, ucx")) << error.what();
  }
}

TEST(Waiter, TimeoutNamesThePeerWaitedFor) {
  const auto world = coll::InprocWorld::create(3);
  const auto transport = world->make_transport(0, short_timeout());
  int value = 0;
  auto from_one = transport->recv(1, 7, &value, sizeof value);
  auto from_two = transport->recv(2, 7, &value, sizeof value);
  std::vector<coll::Transport::Request> requests{from_one, from_two};
  try {
    transport->wait_all(requests);
    FAIL() << "expected a timeout";
  } catch (const coll::Error& error) {
    EXPECT_EQ(error.status(), coll::Status::Timeout);
    EXPECT_TRUE(says(error.what(), "receiving from rank 1 within 0.2 s (COLL_TIMEOUT)"))
        << error.what();
  }
}

TEST(Waiter, ProgressRestartsTheTimeout) {
  // The peer sends a message every 300 ms, 1.5 s in all: a 1 s timeout must not fire while they
  // keep arriving (it would if the clock did not restart on each completion).
  coll::TransportOptions options;
  options.timeout_s = 1;
  const auto world = coll::InprocWorld::create(2);
  const auto receiver = world->make_transport(0, options);
  const auto sender = world->make_transport(1, options);
  constexpr int kMessages = 5;
  std::thread peer([&] {
    for (int i = 0; i < kMessages; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      auto request = sender->send(0, static_cast<coll::Tag>(i), &i, sizeof i);
      sender->wait(request);
    }
  });
  int values[kMessages] = {};
  std::vector<coll::Transport::Request> requests;
  for (int i = 0; i < kMessages; ++i) {
    requests.push_back(receiver->recv(1, static_cast<coll::Tag>(i), &values[i], sizeof(int)));
  }
  EXPECT_NO_THROW(receiver->wait_all(requests));
  peer.join();
  for (int i = 0; i < kMessages; ++i) EXPECT_EQ(values[i], i);
}

TEST(Waiter, AWaitForAComputingPeerSleepsAfterItsFirstSpin) {
  // Rank 0 computes for 600 ms before it sends (a DDP rank still in its backward pass): rank 1,
  // over the sockets transport, which does not wake on delivery, spins once and then sleeps
  // until the message comes. Spinning again after each short sleep kept ~90 % of a core busy,
  // a core the process's compute threads need. A bound on CPU time: load only lowers it.
  coll::StoreServer store("127.0.0.1", 0, "token");
  coll::TransportOptions options;
  options.timeout_s = 20;
  WaitCost cost{};
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      auto bootstrap = coll::make_store_bootstrap(store.address(), "token", rank, 2, 20);
      coll::Connection connection = coll::make_transport("sockets", *bootstrap, {0, 1}, options);
      coll::Transport& transport = *connection.transport;
      bootstrap->barrier("test/linked");
      int value = 0;
      if (rank == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
        value = 42;
        auto request = transport.send(1, 7, &value, sizeof value);
        transport.wait(request);
      } else {
        auto request = transport.recv(0, 7, &value, sizeof value);
        cost = cost_of([&] { transport.wait(request); });
        EXPECT_EQ(value, 42);
      }
      bootstrap->barrier("test/done");
    });
  }
  for (auto& rank : ranks) rank.join();
  expect_mostly_asleep(cost, 0.25);
}

TEST(Waiter, AConditionWaitForAComputingPeerSleepsAfterItsFirstSpin) {
  // The same for a condition no transport event signals (a peer's publication in shared
  // memory): the peer publishes after 1.2 s; the waiting thread, after its spin, sleeps in
  // slices that grow while nothing changes, so that it uses little of a core.
  class Flag final : public coll::WaitCondition {
   public:
    std::atomic<bool> set{false};
    std::size_t missing() override { return set.load(std::memory_order_acquire) ? 0 : 1; }
    int peer() const override { return 1; }
    void check_slow() override {}
  };
  coll::TransportOptions options;
  options.timeout_s = 20;
  const auto world = coll::InprocWorld::create(2);
  const auto transport = world->make_transport(0, options);
  Flag flag;
  std::thread peer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    flag.set.store(true, std::memory_order_release);
  });
  const WaitCost cost = cost_of([&] { transport->wait_for(flag); });
  peer.join();
  expect_mostly_asleep(cost, 0.06);
}

TEST(Waiter, ThreadsThatComputeBesideTheRanksCountAgainstTheCores) {
  // As many ranks as cores may spin while they wait; with a thread computing beside each
  // (COLL_COMPUTE_THREADS=1, DDP's backward) they outnumber the cores and yield instead.
  coll::TransportOptions options;
  options.ranks_on_this_host = coll::usable_cpus();
  EXPECT_FALSE(options.ranks_outnumber_cores());
  const ScopedEnv one("COLL_COMPUTE_THREADS", "1");
  options.threads_per_rank = 1 + coll::Config::from_environment().compute_threads;
  EXPECT_TRUE(options.ranks_outnumber_cores());
  const ScopedEnv malformed("COLL_COMPUTE_THREADS", "-1");
  try {
    coll::Config::from_environment();
    FAIL() << "COLL_COMPUTE_THREADS=-1 was accepted";
  } catch (const coll::Error& error) {
    EXPECT_TRUE(says(error.what(), "COLL_COMPUTE_THREADS")) << error.what();
  }
}

// A bootstrap that only reports an abort (the launcher's message after a rank failed).
class AbortedBootstrap final : public coll::Bootstrap {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::vector<std::string> allgather(const std::string&, const std::string&) override { return {}; }
  void barrier(const std::string&) override {}
  std::optional<std::string> abort_reason() override { return "rank 1 was killed by signal 9"; }
  std::string describe() const override { return "aborted"; }
};

TEST(Waiter, JobAbortStopsTheWaitWithTheRootCause) {
  AbortedBootstrap bootstrap;
  coll::TransportOptions options;
  options.timeout_s = 30;  // the abort, not the timeout, must end the wait
  const auto world = coll::InprocWorld::create(2);
  const auto transport = world->make_transport(0, options, &bootstrap);
  int value = 0;
  auto request = transport->recv(1, 1, &value, sizeof value);
  try {
    transport->wait(request);
    FAIL() << "expected the abort";
  } catch (const coll::Error& error) {
    EXPECT_EQ(error.status(), coll::Status::RemoteError);
    EXPECT_STREQ(error.what(), "job aborted: rank 1 was killed by signal 9");
  }
}

TEST(InprocTransport, MessageOfAnotherSizeFailsClearly) {
  const auto world = coll::InprocWorld::create(2);
  const auto a = world->make_transport(0, short_timeout());
  const auto b = world->make_transport(1, short_timeout());
  const double sent[2] = {1, 2};
  double received = 0;
  auto send = a->send(1, 3, sent, sizeof sent);
  a->wait(send);
  EXPECT_THROW(
      {
        try {
          b->recv(0, 3, &received, sizeof received);
        } catch (const coll::Error& error) {
          EXPECT_TRUE(says(error.what(), "rank 0 sent a message of a different size"))
              << error.what();
          throw;
        }
      },
      coll::Error);
}

TEST(InprocTransport, MatchesBySenderAndTagInOrder) {
  const auto world = coll::InprocWorld::create(3);
  const auto zero = world->make_transport(0, short_timeout());
  const auto one = world->make_transport(1, short_timeout());
  const auto two = world->make_transport(2, short_timeout());
  int got[4] = {};
  // Two receives posted before the sends, two after: matching must not depend on timing.
  auto r1 = zero->recv(1, 5, &got[0], sizeof(int));
  auto r2 = zero->recv(2, 5, &got[1], sizeof(int));
  const int values[4] = {10, 20, 11, 21};
  auto s1 = one->send(0, 5, &values[0], sizeof(int));
  auto s2 = two->send(0, 5, &values[1], sizeof(int));
  auto s3 = one->send(0, 5, &values[2], sizeof(int));
  auto s4 = two->send(0, 6, &values[3], sizeof(int));
  auto r3 = zero->recv(2, 6, &got[3], sizeof(int));
  auto r4 = zero->recv(1, 5, &got[2], sizeof(int));
  std::vector<coll::Transport::Request> all{r1, r2, r3, r4, s1, s2, s3, s4};
  zero->wait_all(all);
  EXPECT_EQ(got[0], 10);
  EXPECT_EQ(got[1], 20);
  EXPECT_EQ(got[2], 11);
  EXPECT_EQ(got[3], 21);
}

// Four ranks as threads through the public path (store bootstrap, rank map, transport chosen by
// COLL_TRANSPORT, argument check): each all-reduces 1001 floats with the ring; returns each
// rank's error (empty when none) and its communicator's description.
struct ThreadJobResult {
  std::vector<std::string> errors, descriptions;
  std::vector<std::vector<float>> results;
};

ThreadJobResult run_thread_job(int ranks) {
  coll::StoreServer store("127.0.0.1", 0, coll::make_job_token());
  ThreadJobResult job{std::vector<std::string>(ranks), std::vector<std::string>(ranks),
                      std::vector<std::vector<float>>(ranks)};
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        auto comm = coll::Comm::from_store(store.address(), store.token(), rank, ranks);
        job.descriptions[rank] = comm->describe();
        std::vector<float> data(1001, static_cast<float>(rank + 1));
        comm->allreduce(data.data(), data.data(), data.size(), coll::DataType::Float32,
                        coll::ReduceOp::Sum, "ring");
        job.results[rank] = data;
      } catch (const std::exception& error) {
        job.errors[rank] = error.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return job;
}

// Every rank of `job` summed 1 + 2 + 3 + 4 and describes its communicator with each of `parts`.
void expect_sums_described_as(const ThreadJobResult& job, std::vector<std::string> parts) {
  for (std::size_t rank = 0; rank < job.errors.size(); ++rank) {
    ASSERT_EQ(job.errors[rank], "") << "rank " << rank;
    for (const auto& part : parts) {
      EXPECT_TRUE(says(job.descriptions[rank], part)) << job.descriptions[rank];
    }
    EXPECT_EQ(job.results[rank], std::vector<float>(1001, 10.0f)) << "rank " << rank;
  }
}

TEST(InprocTransport, SelectedByNameForRanksThatAreThreads) {
  ScopedEnv transport("COLL_TRANSPORT", "inproc");
  constexpr int kRanks = 4;
  expect_sums_described_as(run_thread_job(kRanks), {"inproc: 4 ranks as threads"});
}

// A wrapper named before the transport: the shaped links deliver the same result.
TEST(ShapedTransport, WrapsATransportChosenByName) {
  coll::emulator::enable();
  ScopedEnv transport("COLL_TRANSPORT", "shaped:inproc");
  ScopedEnv shape("COLL_SHAPE", "intra=1e-4:1e-8,inter=1e-4:1e-8");
  constexpr int kRanks = 4;
  expect_sums_described_as(run_thread_job(kRanks), {"shaped(intra=0.0001:1e-08", "over inproc"});
}

// On the emulated cluster's virtual clock, a parameter server's all-reduce run right after
// another takes what the model says alone less the lead it shares with the one before: the
// server (rank 0 of 4) takes the early workers' pushes while it still sends the first one's pulls.
TEST(ShapedTransport, BackToBackParameterServerAllreducesOverlapByTheModelsLead) {
  coll::emulator::enable();
  ScopedEnv transport("COLL_TRANSPORT", "shaped:inproc");
  ScopedEnv shape("COLL_SHAPE", "intra=1e-3:0,inter=1e-3:0,clock=virtual");
  ScopedEnv servers("COLL_PS_SERVERS", "1");
  ScopedEnv unchecked("COLL_CHECK_ARGS", "0");  // the argument check's own exchange would sync
  constexpr int kRanks = 4;
  coll::StoreServer store("127.0.0.1", 0, coll::make_job_token());
  std::vector<double> first(kRanks), second(kRanks);
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        auto comm = coll::Comm::from_store(store.address(), store.token(), rank, kRanks);
        float value = 1;
        comm->barrier();
        const double start = coll::cluster_clock::now();
        comm->allreduce(&value, &value, 1, coll::DataType::Float32, coll::ReduceOp::Sum, "ps");
        first[rank] = coll::cluster_clock::now() - start;
        const double next = coll::cluster_clock::now();
        comm->allreduce(&value, &value, 1, coll::DataType::Float32, coll::ReduceOp::Sum, "ps");
        second[rank] = coll::cluster_clock::now() - next;
      } catch (const std::exception& error) {
        errors[rank] = error.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) ASSERT_EQ(error, "");
  coll::model::CostParams params;
  params.intra = params.inter = {1e-3, 0};
  coll::Tuning one_server;
  one_server.algorithm_options.set("COLL_PS_SERVERS", "1");
  const auto alone = coll::predict("ps", params, coll::model::Shape::uniform(1, kRanks),
                                   sizeof(float), one_server);
  ASSERT_TRUE(alone);
  EXPECT_NEAR(alone->total_s(), 6e-3, 1e-9);  // 3 pushes taken, then 3 pulls sent, in turn
  EXPECT_NEAR(alone->lead_s, 2e-3, 1e-9);     // the first 2 workers' pushes
  EXPECT_NEAR(first[0], alone->total_s(), 1e-6);
  EXPECT_NEAR(second[0], alone->total_s() - alone->lead_s, 1e-6);
}

TEST(ShapedTransport, WithoutAShapeFailsNamingTheVariable) {
  coll::emulator::enable();
  ScopedEnv transport("COLL_TRANSPORT", "shaped:inproc");
  ::unsetenv("COLL_SHAPE");
  try {
    coll::Comm::from_environment();
    FAIL() << "expected an error";
  } catch (const coll::Error& error) {
    EXPECT_EQ(error.status(), coll::Status::InvalidArgument);
    EXPECT_TRUE(says(error.what(), "needs COLL_SHAPE")) << error.what();
  }
}

TEST(TransportRegistry, UnknownWrapperFailsListingTheKnownOnes) {
  coll::emulator::enable();
  ScopedEnv transport("COLL_TRANSPORT", "squeezed:ucx");
  try {
    coll::Comm::from_environment();
    FAIL() << "expected an error";
  } catch (const coll::Error& error) {
    EXPECT_TRUE(says(error.what(), "unknown transport wrapper 'squeezed'")) << error.what();
    EXPECT_TRUE(says(error.what(), "shaped:<transport>")) << error.what();
  }
}

}  // namespace
