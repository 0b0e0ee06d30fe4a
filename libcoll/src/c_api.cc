// The NCCL-shaped C API over coll::Comm.
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store_server.hpp"
#include "coll/coll.h"
#include "coll/comm.hpp"
#include "coll/env.hpp"
#include "coll/shared_memory.hpp"
#include "core/log.hpp"
#include "transport/network_interfaces.hpp"

struct collComm {
  std::unique_ptr<coll::Comm> comm;
  std::string last_error;
  std::atomic<int> calls_in_progress{0};  // collCommAbort waits for them before destroying
};

struct collRequest {
  coll::Request request;
  collComm_t comm;
};

namespace {

thread_local std::string last_error;

// Stores started by collGetUniqueId live as long as the process: ranks may join at any time.
std::mutex stores_mutex;
std::vector<std::unique_ptr<coll::StoreServer>> stores;

collResult_t fail(collComm_t comm, collResult_t result, const std::string& message) {
  last_error = message;
  if (comm != nullptr) comm->last_error = message;
  return result;
}

// A C caller may pass any int as an enum, but C++ must not load an enum outside its range, so
// the check reads the argument's bytes. Empty when both are valid, else the message.
template <typename Enum>
int c_enum_value(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int));
  int raw = 0;
  std::memcpy(&raw, &value, sizeof raw);
  return raw;
}
std::string bad_type_or_op(const char* function, const collDataType_t& datatype,
                           const collRedOp_t& op) {
  const int type = c_enum_value(datatype), operation = c_enum_value(op);
  if (type >= 0 && type < collNumTypes && operation >= 0 && operation < collNumOps) return {};
  return std::string(function) + ": invalid datatype " + std::to_string(type) + " or op " +
         std::to_string(operation);
}

// Marks a call on `comm` as in progress, so that collCommAbort from another thread destroys the
// communicator only after the call has returned.
class InProgress {
 public:
  explicit InProgress(collComm_t comm) : comm_(comm) { ++comm_->calls_in_progress; }
  ~InProgress() { --comm_->calls_in_progress; }
  InProgress(const InProgress&) = delete;
  InProgress& operator=(const InProgress&) = delete;

 private:
  collComm_t comm_;
};

bool valid_type(const collDataType_t& datatype) {
  const int type = c_enum_value(datatype);
  return type >= 0 && type < collNumTypes;
}

// Where collGetUniqueId's store listens: COLL_STORE_HOST, else an address the other hosts can
// reach (NCCL's ncclGetUniqueId names its bootstrap interface's): the id is made to be shipped to
// ranks that may run anywhere.
std::string store_host() {
  if (auto host = coll::env_string("COLL_STORE_HOST")) return *host;
  const coll::InterfaceChoice choice = coll::choose_rendezvous_interface(
      coll::ipv4_interfaces(), coll::interface_filter_from_environment());
  if (coll::log_enabled(coll::LogLevel::Info)) {
    coll::log_line(coll::LogLevel::Info, 0,
                   "collGetUniqueId: the store listens on " + choice.interface.name + " " +
                       choice.interface.address + " (" + choice.why + ")");
  }
  return choice.interface.address;
}

template <typename Body>
collResult_t guarded(collComm_t comm, Body&& body) {
  try {
    body();
    return collSuccess;
  } catch (const coll::Error& error) {
    return fail(comm, static_cast<collResult_t>(error.status()), error.what());
  } catch (const std::bad_alloc&) {
    return fail(comm, collSystemError, "out of memory");
  } catch (const std::exception& error) {
    return fail(comm, collInternalError, error.what());
  }
}

}  // namespace

extern "C" {

collResult_t collGetUniqueId(collUniqueId* unique_id) {
  if (unique_id == nullptr) return fail(nullptr, collInvalidArgument, "collGetUniqueId: null id");
  return guarded(nullptr, [&] {
    auto server = std::make_unique<coll::StoreServer>(store_host(), 0, coll::make_job_token());
    const std::string text = server->address() + " " + server->token();
    if (text.size() >= sizeof unique_id->internal) {
      throw coll::Error(coll::Status::InternalError, "store address too long for a unique id");
    }
    std::memset(unique_id->internal, 0, sizeof unique_id->internal);
    std::memcpy(unique_id->internal, text.data(), text.size());
    std::lock_guard lock(stores_mutex);
    stores.push_back(std::move(server));
  });
}

collResult_t collCommInitRank(collComm_t* comm, int nranks, collUniqueId comm_id, int rank) {
  if (comm == nullptr) return fail(nullptr, collInvalidArgument, "collCommInitRank: null comm");
  *comm = nullptr;
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return fail(nullptr, collInvalidArgument,
                "collCommInitRank: rank " + std::to_string(rank) + " of " + std::to_string(nranks) +
                    " is out of range");
  }
  const std::string text(comm_id.internal, strnlen(comm_id.internal, sizeof comm_id.internal));
  const auto space = text.find(' ');
  if (space == std::string::npos) {
    return fail(nullptr, collInvalidArgument, "collCommInitRank: malformed unique id");
  }
  auto handle = std::make_unique<collComm>();
  const collResult_t result = guarded(nullptr, [&] {
    handle->comm =
        coll::Comm::from_store(text.substr(0, space), text.substr(space + 1), rank, nranks);
  });
  if (result == collSuccess) *comm = handle.release();
  return result;
}

collResult_t collCommInitFromEnv(collComm_t* comm) {
  if (comm == nullptr) return fail(nullptr, collInvalidArgument, "collCommInitFromEnv: null comm");
  *comm = nullptr;
  auto handle = std::make_unique<collComm>();
  const collResult_t result =
      guarded(nullptr, [&] { handle->comm = coll::Comm::from_environment(); });
  if (result == collSuccess) *comm = handle.release();
  return result;
}

collResult_t collMemAlloc(void** ptr, size_t size) {
  if (ptr == nullptr) return fail(nullptr, collInvalidArgument, "collMemAlloc: null ptr");
  if (size == 0) return fail(nullptr, collInvalidArgument, "collMemAlloc: size 0");
  return guarded(nullptr, [&] { *ptr = coll::allocate_shared(size); });
}

collResult_t collMemFree(void* ptr) {
  return guarded(nullptr, [&] { coll::free_shared(ptr); });
}

collResult_t collCommDestroy(collComm_t comm) {
  if (comm == nullptr) return fail(nullptr, collInvalidArgument, "collCommDestroy: null comm");
  return guarded(nullptr, [&] { delete comm; });
}

collResult_t collCommCount(const collComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) {
    return fail(comm, collInvalidArgument, "collCommCount: null argument");
  }
  *count = comm->comm->size();
  return collSuccess;
}

collResult_t collCommUserRank(const collComm_t comm, int* rank) {
  if (comm == nullptr || rank == nullptr) {
    return fail(comm, collInvalidArgument, "collCommUserRank: null argument");
  }
  *rank = comm->comm->rank();
  return collSuccess;
}

collResult_t collAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           collDataType_t datatype, collRedOp_t op, collComm_t comm,
                           collStream_t /*stream*/) {
  if (comm == nullptr) return fail(nullptr, collInvalidArgument, "collAllReduce: null comm");
  if (const std::string bad = bad_type_or_op("collAllReduce", datatype, op); !bad.empty()) {
    return fail(comm, collInvalidArgument, bad);
  }
  const InProgress call(comm);
  return guarded(comm, [&] {
    comm->comm->allreduce(sendbuff, recvbuff, count, static_cast<coll::DataType>(datatype),
                          static_cast<coll::ReduceOp>(op));
  });
}

collResult_t collAllReduceAsync(const void* sendbuff, void* recvbuff, size_t count,
                                collDataType_t datatype, collRedOp_t op, unsigned long long tag,
                                collComm_t comm, collRequest_t* request) {
  if (comm == nullptr || request == nullptr) {
    return fail(comm, collInvalidArgument, "collAllReduceAsync: null comm or request");
  }
  *request = nullptr;
  if (const std::string bad = bad_type_or_op("collAllReduceAsync", datatype, op); !bad.empty()) {
    return fail(comm, collInvalidArgument, bad);
  }
  return guarded(comm, [&] {
    auto handle = std::make_unique<collRequest>();
    handle->comm = comm;
    handle->request = comm->comm->allreduce_async(sendbuff, recvbuff, count,
                                                  static_cast<coll::DataType>(datatype),
                                                  static_cast<coll::ReduceOp>(op), {}, tag);
    *request = handle.release();
  });
}

collResult_t collTest(collRequest_t request, int* done) {
  if (request == nullptr || done == nullptr) {
    return fail(nullptr, collInvalidArgument, "collTest: null request or flag");
  }
  return guarded(request->comm, [&] { *done = request->request.test() ? 1 : 0; });
}

collResult_t collWait(collRequest_t request) {
  if (request == nullptr) return fail(nullptr, collInvalidArgument, "collWait: null request");
  const std::unique_ptr<collRequest> owned(request);
  return guarded(owned->comm, [&] { owned->request.wait(); });
}

collResult_t collBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           collDataType_t datatype, int root, collComm_t comm,
                           collStream_t /*stream*/) {
  if (comm == nullptr) return fail(nullptr, collInvalidArgument, "collBroadcast: null comm");
  if (!valid_type(datatype)) {
    return fail(comm, collInvalidArgument,
                "collBroadcast: invalid datatype " + std::to_string(c_enum_value(datatype)));
  }
  const InProgress call(comm);
  return guarded(comm, [&] {
    comm->comm->broadcast(sendbuff, recvbuff, count, static_cast<coll::DataType>(datatype), root);
  });
}

collResult_t collReduce(const void* sendbuff, void* recvbuff, size_t count, collDataType_t datatype,
                        collRedOp_t op, int root, collComm_t comm, collStream_t /*stream*/) {
  if (comm == nullptr) return fail(nullptr, collInvalidArgument, "collReduce: null comm");
  if (const std::string bad = bad_type_or_op("collReduce", datatype, op); !bad.empty()) {
    return fail(comm, collInvalidArgument, bad);
  }
  const InProgress call(comm);
  return guarded(comm, [&] {
    comm->comm->reduce(sendbuff, recvbuff, count, static_cast<coll::DataType>(datatype),
                       static_cast<coll::ReduceOp>(op), root);
  });
}

collResult_t collAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           collDataType_t datatype, collComm_t comm, collStream_t /*stream*/) {
  if (comm == nullptr) return fail(nullptr, collInvalidArgument, "collAllGather: null comm");
  if (!valid_type(datatype)) {
    return fail(comm, collInvalidArgument,
                "collAllGather: invalid datatype " + std::to_string(c_enum_value(datatype)));
  }
  const InProgress call(comm);
  return guarded(comm, [&] {
    comm->comm->allgather(sendbuff, recvbuff, sendcount, static_cast<coll::DataType>(datatype));
  });
}

collResult_t collReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               collDataType_t datatype, collRedOp_t op, collComm_t comm,
                               collStream_t /*stream*/) {
  if (comm == nullptr) return fail(nullptr, collInvalidArgument, "collReduceScatter: null comm");
  if (const std::string bad = bad_type_or_op("collReduceScatter", datatype, op); !bad.empty()) {
    return fail(comm, collInvalidArgument, bad);
  }
  const InProgress call(comm);
  return guarded(comm, [&] {
    comm->comm->reduce_scatter(sendbuff, recvbuff, recvcount, static_cast<coll::DataType>(datatype),
                               static_cast<coll::ReduceOp>(op));
  });
}

collResult_t collCommSplit(collComm_t comm, int color, int key, collComm_t* newcomm) {
  if (comm == nullptr || newcomm == nullptr) {
    return fail(comm, collInvalidArgument, "collCommSplit: null comm or newcomm");
  }
  *newcomm = nullptr;
  const InProgress call(comm);
  return guarded(comm, [&] {
    auto split = comm->comm->split(color, key);
    if (!split) return;
    auto handle = std::make_unique<collComm>();
    handle->comm = std::move(split);
    *newcomm = handle.release();
  });
}

collResult_t collCommAbort(collComm_t comm) {
  if (comm == nullptr) return fail(nullptr, collInvalidArgument, "collCommAbort: null comm");
  comm->comm->abort();
  // The calls in progress on other threads now fail promptly; destroy once they have returned.
  while (comm->calls_in_progress.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return guarded(nullptr, [&] { delete comm; });
}

collResult_t collGetVersion(int* version) {
  if (version == nullptr) return fail(nullptr, collInvalidArgument, "collGetVersion: null version");
  *version = COLL_VERSION_CODE;
  return collSuccess;
}

const char* collGetErrorString(collResult_t result) {
  switch (result) {
    case collSuccess:
      return "no error";
    case collUnhandledCudaError:
      return "unhandled cuda error";
    case collSystemError:
      return "unhandled system error (a system call or UCX failed)";
    case collInternalError:
      return "internal error (a libcoll bug)";
    case collInvalidArgument:
      return "invalid argument";
    case collInvalidUsage:
      return "invalid usage (ranks disagree, or the communicator failed before)";
    case collRemoteError:
      return "remote process exited or there was a network error";
    case collInProgress:
      return "operation in progress";
    case collTimeout:
      return "a peer did not answer within COLL_TIMEOUT";
    default:
      return "unknown result code";
  }
}

const char* collGetLastError(collComm_t comm) {
  if (comm != nullptr && !comm->last_error.empty()) return comm->last_error.c_str();
  return last_error.c_str();
}

}  // extern "C"
