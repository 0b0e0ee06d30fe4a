// libcoll_mpi.so, a PMPI interposer: LD_PRELOAD it into an MPI program and every blocking
// MPI_Allreduce on a predefined contiguous type and operation over an intracommunicator of two or
// more ranks runs on libcoll; every other call goes to MPI unchanged (docs/mpi-interposer.md).
//
// Each MPI communicator gets its libcoll communicator on its first such call, bootstrapped over
// a duplicate of it, and keeps it in an MPI attribute: freeing the MPI communicator frees it.
// MPI_Alloc_mem, MPI's way to ask for memory to communicate from, returns coll::allocate_shared
// memory, which the ranks of a node map: all-reduces on it read peers' data with plain loads.
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/mpi_exchange.hpp"
#include "coll/comm.hpp"
#include "coll/config.hpp"
#include "coll/error.hpp"
#include "coll/shared_memory.hpp"
#include "mpi_types.hpp"

namespace {

struct Settings {
  bool enabled = true;  // COLL_MPI_INTERPOSE=0 turns the interposer off
  bool debug = false;   // COLL_MPI_DEBUG=1: one line per rank at MPI_Finalize
};

const Settings& settings() {
  static const Settings read = [] {
    Settings result;
    const char* interpose = std::getenv("COLL_MPI_INTERPOSE");
    // COLL_ALGO=native_mpi asks libcoll for MPI's own all-reduce: that is this very call.
    const char* algorithm = std::getenv("COLL_ALGO");
    result.enabled = !(interpose && std::strcmp(interpose, "0") == 0) &&
                     !(algorithm && std::strcmp(algorithm, "native_mpi") == 0);
    const char* debug = std::getenv("COLL_MPI_DEBUG");
    result.debug = debug && std::strcmp(debug, "0") != 0 && debug[0] != '\0';
    return result;
  }();
  return read;
}

// The libcoll communicators attached to MPI communicators, in creation order, so that
// MPI_Finalize destroys those the program never freed in an order every rank agrees on.
class Attachments {
 public:
  static Attachments& instance() {
    static Attachments attachments;
    return attachments;
  }

  // The libcoll communicator attached to `comm`, or null before its first eligible all-reduce.
  // Each thread remembers its last answer while no communicator has been detached since: MPI's
  // attribute lookup (a locked hash table) took about 4 % of an 8-byte all-reduce's time (perf).
  coll::Comm* attached(MPI_Comm comm) {
    thread_local LastLookup last;
    const unsigned long detached = detached_.load(std::memory_order_acquire);
    if (last.comm == comm && last.detached == detached && last.attached) return last.attached;
    const int keyval = keyval_.load(std::memory_order_acquire);
    if (keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL) return nullptr;
    void* value = nullptr;
    int found = 0;
    coll::check_mpi(PMPI_Comm_get_attr(comm, keyval, &value, &found), "MPI_Comm_get_attr");
    last = {comm, found ? static_cast<coll::Comm*>(value) : nullptr, detached};
    return last.attached;
  }

  // The libcoll communicator of `comm`, created on first use (collective over `comm`).
  coll::Comm& of(MPI_Comm comm) {
    if (coll::Comm* existing = attached(comm)) return *existing;
    std::call_once(keyval_once_, [this] {
      int keyval = MPI_KEYVAL_INVALID;
      coll::check_mpi(PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, detach, &keyval, nullptr),
                      "MPI_Comm_create_keyval");
      keyval_.store(keyval, std::memory_order_release);
    });
    auto exchange =
        std::make_unique<coll::MpiExchange>(comm, coll::Config::from_environment().timeout_s);
    const int rank = exchange->rank();
    const int size = exchange->size();
    auto created = coll::Comm::from_exchange(rank, size, std::move(exchange));
    coll::check_mpi(PMPI_Comm_set_attr(comm, keyval_.load(), created.get()), "MPI_Comm_set_attr");
    std::lock_guard lock(mutex_);
    live_.emplace(++created_, Live{comm, created.get()});
    return *created.release();
  }

  // Before MPI_Finalize: deleting the attributes runs `detach` on each.
  void detach_all() {
    int keyval = keyval_.load();
    if (keyval == MPI_KEYVAL_INVALID) return;
    std::vector<MPI_Comm> remaining;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [order, live] : live_) remaining.push_back(live.comm);
    }
    for (MPI_Comm comm : remaining) PMPI_Comm_delete_attr(comm, keyval);
    PMPI_Comm_free_keyval(&keyval);
    keyval_.store(MPI_KEYVAL_INVALID);
  }

  std::atomic<long> on_libcoll{0};
  std::atomic<long> passed_to_mpi{0};
  std::atomic<long> shared_allocations{0};
  std::atomic<long> barriers_on_libcoll{0};
  std::atomic<long> barriers_to_mpi{0};

 private:
  struct Live {
    MPI_Comm comm;
    coll::Comm* attached;
  };
  struct LastLookup {
    MPI_Comm comm = MPI_COMM_NULL;
    coll::Comm* attached = nullptr;
    unsigned long detached = 0;
  };

  // The attribute's delete callback: MPI_Comm_free, or detach_all.
  static int detach(MPI_Comm, int, void* value, void*) {
    auto* attached = static_cast<coll::Comm*>(value);
    Attachments& self = instance();
    self.detached_.fetch_add(1, std::memory_order_acq_rel);  // before its handle can be reused
    {
      std::lock_guard lock(self.mutex_);
      std::erase_if(self.live_,
                    [attached](const auto& entry) { return entry.second.attached == attached; });
    }
    delete attached;  // collective over the communicator, as freeing it is
    return MPI_SUCCESS;
  }

  std::once_flag keyval_once_;
  std::atomic<int> keyval_{MPI_KEYVAL_INVALID};  // read by every call, set once
  std::atomic<unsigned long> detached_{0};       // communicators detached so far
  std::mutex mutex_;
  unsigned long created_ = 0;
  std::map<unsigned long, Live> live_;
};

bool is_intracommunicator_of_several(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return false;
  int inter = 0;
  int size = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return false;
  return PMPI_Comm_size(comm, &size) == MPI_SUCCESS && size > 1;
}

int world_rank() {
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// A libcoll failure in `call`, raised through the communicator's error handler.
int failed(const char* call, MPI_Comm comm, const std::exception& error) {
  std::fprintf(stderr, "libcoll_mpi: MPI_COMM_WORLD rank %d: %s failed: %s\n", world_rank(), call,
               error.what());
  PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

}  // namespace

extern "C" int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm) {
  Attachments& attachments = Attachments::instance();
  const auto type = coll::mpi::coll_type(datatype);
  const auto reduce_op = coll::mpi::coll_op(op);
  // MPI_BOTTOM (absolute addresses) and invalid arguments are MPI's to handle and report.
  const bool buffers_ok =
      count == 0 || (recvbuf != nullptr && sendbuf != nullptr && sendbuf != MPI_BOTTOM);
  if (!settings().enabled || !type || !reduce_op || count < 0 || !buffers_ok) {
    ++attachments.passed_to_mpi;
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  }
  try {
    // An attached communicator passed the communicator test when it was attached.
    coll::Comm* libcoll = attachments.attached(comm);
    if (!libcoll && !is_intracommunicator_of_several(comm)) {
      ++attachments.passed_to_mpi;
      return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    }
    if (!libcoll) libcoll = &attachments.of(comm);
    const void* send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    libcoll->allreduce(send, recvbuf, static_cast<std::size_t>(count), *type, *reduce_op);
    ++attachments.on_libcoll;
    return MPI_SUCCESS;
  } catch (const std::exception& error) {
    return failed("MPI_Allreduce", comm, error);
  }
}

// A barrier on a communicator with a libcoll communicator is a one-byte all-reduce there, with
// the algorithm auto picks for it (inside a node the shared flags of shm): no rank leaves before
// all arrived, and the ranks leave as close together as they leave a small all-reduce, where
// MPI's barrier (or Comm::barrier, which messages around the ring so that a rank in another
// collective is named) lets them go up to a microsecond apart. Every rank agrees whether one is
// attached, since all attach in the same all-reduce.
extern "C" int MPI_Barrier(MPI_Comm comm) {
  Attachments& attachments = Attachments::instance();
  try {
    coll::Comm* libcoll = settings().enabled ? attachments.attached(comm) : nullptr;
    if (!libcoll) {
      ++attachments.barriers_to_mpi;
      return PMPI_Barrier(comm);
    }
    std::uint8_t token = 0;
    libcoll->allreduce(&token, &token, 1, coll::DataType::Uint8, coll::ReduceOp::Max);
    ++attachments.barriers_on_libcoll;
    return MPI_SUCCESS;
  } catch (const std::exception& error) {
    return failed("MPI_Barrier", comm, error);
  }
}

extern "C" int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  if (!settings().enabled || size <= 0) return PMPI_Alloc_mem(size, info, baseptr);
  try {
    *static_cast<void**>(baseptr) = coll::allocate_shared(static_cast<std::size_t>(size));
    ++Attachments::instance().shared_allocations;
    return MPI_SUCCESS;
  } catch (const std::exception&) {  // no memfd here: MPI's own memory does as well
    return PMPI_Alloc_mem(size, info, baseptr);
  }
}

extern "C" int MPI_Free_mem(void* base) {
  try {
    coll::free_shared(base);
    return MPI_SUCCESS;
  } catch (const coll::Error&) {  // not from allocate_shared: MPI's
    return PMPI_Free_mem(base);
  }
}

extern "C" int MPI_Finalize() {
  Attachments& attachments = Attachments::instance();
  attachments.detach_all();
  if (settings().debug) {
    std::fprintf(stderr,
                 "libcoll_mpi: MPI_COMM_WORLD rank %d: %ld MPI_Allreduce calls ran on libcoll, "
                 "%ld went to MPI%s; %ld MPI_Barrier calls ran on libcoll, %ld went to MPI; "
                 "%ld MPI_Alloc_mem buffer(s) from allocate_shared\n",
                 world_rank(), attachments.on_libcoll.load(), attachments.passed_to_mpi.load(),
                 settings().enabled ? "" : " (interposer disabled)",
                 attachments.barriers_on_libcoll.load(), attachments.barriers_to_mpi.load(),
                 attachments.shared_allocations.load());
  }
  return PMPI_Finalize();
}
