// coll::Comm: the C++ API. One communicator per process per job; collectives are called by
// every rank in the same order with the same arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "coll/error.hpp"
#include "coll/exchange.hpp"
#include "coll/types.hpp"

namespace coll {

class Completion;
class Selector;
struct Config;
struct Tuning;

// A collective queued with Comm::allreduce_async. Its buffers must stay valid, and untouched by
// the caller, until wait() returns or test() returns true.
class Request {
 public:
  Request() = default;
  bool test();  // true once complete; throws the collective's coll::Error if it failed
  void wait();  // blocks (without spinning) until complete; throws the collective's error
  bool valid() const { return completion_ != nullptr; }
  // When the engine started and finished running it, in steady-clock seconds (the clock of
  // std::chrono::steady_clock); 0 while not yet started / finished.
  double started_at() const;
  double finished_at() const;

 private:
  friend class Comm;
  explicit Request(std::shared_ptr<Completion> completion) : completion_(std::move(completion)) {}
  std::shared_ptr<Completion> completion_;
};

class Comm {
 public:
  // From the environment contract (COLL_RANK, COLL_SIZE, COLL_STORE, COLL_TOKEN, COLL_NODE), or
  // under mpirun from MPI, or else a communicator of one rank.
  static std::unique_ptr<Comm> from_environment();
  // The same with the caller's settings instead of the COLL_* ones (a tool that takes them as
  // flags: Config::from_environment() with its flags applied).
  static std::unique_ptr<Comm> from_environment(const Config& config);
  // Joins the store at `address` ("host:port") presenting the job's `token`.
  static std::unique_ptr<Comm> from_store(const std::string& address, const std::string& token,
                                          int rank, int size);
  // Over an exchange the caller provides (collective over `size` ranks); the communicator owns
  // it and uses it again when destroyed. Settings from the environment, or the caller's.
  static std::unique_ptr<Comm> from_exchange(int rank, int size,
                                             std::unique_ptr<Exchange> exchange);
  static std::unique_ptr<Comm> from_exchange(int rank, int size, std::unique_ptr<Exchange> exchange,
                                             const Config& config);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const;
  int size() const;
  // The node map: COLL_NODE when set (emulating several nodes on one machine), else the host.
  int node() const;
  int num_nodes() const;
  int local_rank() const;  // position among the ranks of this node
  const std::vector<int>& node_of_rank() const;

  // recv[i] = op over ranks of send[i]. send == recv is in place. `algorithm` empty means the
  // communicator's default (COLL_ALGO, else auto: the cost model's pick per message size). Throws
  // coll::Error naming this rank, the collective and the peer involved; after an error the
  // communicator refuses further calls.
  void allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                 std::string_view algorithm = {});

  // Queues the all-reduce on the communicator's progress engine (a thread started on first use)
  // and returns at once; queued collectives run in order. Every rank must queue the same
  // collectives in the same order: `tag` (e.g. a tensor id) makes ranks that queued different
  // tensors of equal size fail with an error saying so instead of silently swapping data.
  // Once the engine runs, blocking calls on this communicator queue behind it.
  Request allreduce_async(const void* send, void* recv, std::size_t count, DataType type,
                          ReduceOp op, std::string_view algorithm = {}, std::uint64_t tag = 0);

  // Tensor fusion for tensors anywhere in memory (all of one data type): the engine packs them
  // into one pooled buffer, all-reduces it once, and unpacks the results into each tensor.
  // The span and the tensors must stay valid until the request completes.
  Request allreduce_fused_async(std::span<const Tensor> tensors, ReduceOp op,
                                std::string_view algorithm = {}, std::uint64_t tag = 0);
  void barrier();

  // The collectives a training backend needs besides all-reduce, with NCCL's semantics and
  // argument order. Counts are in elements; send == recv (broadcast, reduce) or NCCL's in-place
  // layouts (all-gather: send == recv + rank * count; reduce-scatter: recv == send + rank *
  // count) run in place. Every rank calls each with the same count, type, op and root.
  //
  // recv = root's send on every rank (send is read on the root only).
  void broadcast(const void* send, void* recv, std::size_t count, DataType type, int root);
  // recv (on the root only; may be null elsewhere) = op over ranks of send.
  void reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
              int root);
  // recv (size() * count elements) = every rank's send, in rank order.
  void allgather(const void* send, void* recv, std::size_t count, DataType type);
  // recv (count elements) = block rank() of op over ranks of send (size() * count elements).
  void reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);

  // Collective over this communicator: ranks passing the same color >= 0 form a new
  // communicator, ordered by key and then by rank here; a negative color (kSplitNoColor)
  // returns nullptr. The new communicator shares this one's transport, staging pool and
  // progress engine with its own tag space (see docs/collectives.md); it may outlive this one.
  static constexpr int kSplitNoColor = -1;
  std::unique_ptr<Comm> split(int color, int key);

  // Callable from any thread: the collective in progress on this communicator, and on every
  // communicator sharing its transport (split from the same one), fails promptly with an error
  // saying it was aborted, and so do all later calls. The communicator must still be destroyed.
  void abort();

  // Blocking point-to-point messages (for diagnostics such as colltopo --measure); `tag`
  // matches a send to its receive, and both sides must agree on `bytes`.
  void send(const void* data, std::size_t bytes, int peer, std::uint32_t tag);
  void recv(void* data, std::size_t bytes, int peer, std::uint32_t tag);

  // The library version, "MAJOR.MINOR.PATCH" (COLL_MAJOR... in coll.h).
  static std::string version();
  // Names of the algorithms allreduce accepts.
  static std::vector<std::string> algorithms();
  // The algorithm allreduce runs for `algorithm` at `bytes`: "" is the communicator's default,
  // "auto" the cost model's pick, which may differ for buffers from allocate_shared
  // (`buffers_mapped`) and for a call in place (the same buffer as input and output). The one
  // place defaults are resolved.
  std::string resolve_algorithm(std::string_view algorithm, std::size_t bytes,
                                bool buffers_mapped = false, bool in_place = false) const;
  // `auto`'s cost model for this communicator: its parameters (COLL_COST_PRESET or calibration,
  // resolved on first use; throws coll::Error when they cannot be loaded), node map and tuning.
  const Selector& selector() const;
  // COLL_SEGMENT_BYTES, COLL_WINDOW, COLL_PS_*, COLL_HIER_*: what the algorithms run with.
  const Tuning& tuning() const;
  std::string describe() const;  // bootstrap, transport and node map, for logs

  struct Impl;

 private:
  explicit Comm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace coll
