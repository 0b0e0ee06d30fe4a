// Strings of any length exchanged rank to rank over a private duplicate of an MPI communicator,
// with a deadline: MPI's blocking collectives wait forever for a rank that is gone or cut off,
// where every wait of a libcoll set-up ends within COLL_TIMEOUT naming who did not answer.
#include "bootstrap/mpi_exchange.hpp"

#include <chrono>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "coll/clock.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

// One tag on the private communicator: a pair's messages arrive in the order they were sent,
// so successive exchanges never mix.
constexpr int kExchangeTag = 1;

// Between polls that found nothing: yield at first (a peer on this core may be about to send),
// then sleep, so that ranks sharing cores do not take them from the ones still working.
class PollPause {
 public:
  void after_nothing() {
    if (idle_polls_++ < 1000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  void after_progress() { idle_polls_ = 0; }

 private:
  int idle_polls_ = 0;
};

std::string rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (const int rank : ranks) text += (text.empty() ? "" : ", ") + std::to_string(rank);
  return text;
}

}  // namespace

void check_mpi(int code, const char* what) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw Error(Status::SystemError, std::string(what) + " failed: " + std::string(text, length));
  }
}

MpiExchange::MpiExchange(MPI_Comm comm, double timeout_s) : timeout_s_(timeout_s) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Comm_idup(comm, &comm_, &request), "MPI_Comm_idup");
  // A rank may join up to COLL_TIMEOUT late: its last collective can take that long to fail
  // before it makes a new communicator (collCommAbort and re-create).
  const Deadline deadline(2 * timeout_s_);
  PollPause pause;
  for (int done = 0;;) {
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) break;
    if (deadline.expired()) {
      throw Error(Status::Timeout, "MPI bootstrap: not every rank joined within " +
                                       std::to_string(static_cast<long long>(deadline.timeout())) +
                                       " s (twice COLL_TIMEOUT): a rank is gone, cut off, or "
                                       "failed before it");
    }
    pause.after_nothing();
  }
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiExchange::~MpiExchange() {
  MPI_Comm_free(&comm_);
}

std::string MpiExchange::seconds_text() const {
  return std::to_string(static_cast<long long>(timeout_s_)) + " s";
}

std::vector<std::string> MpiExchange::allgather(const std::string& mine) {
  std::vector<std::string> all(static_cast<std::size_t>(size_));
  all[static_cast<std::size_t>(rank_)] = mine;
  std::vector<MPI_Request> sends;
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    sends.emplace_back();
    check_mpi(MPI_Isend(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, peer, kExchangeTag,
                        comm_, &sends.back()),
              "MPI_Isend");
  }
  std::vector<int> missing;
  for (int peer = 0; peer < size_; ++peer) {
    if (peer != rank_) missing.push_back(peer);
  }
  // As a collective's: the time without progress, each peer's message making some.
  Deadline deadline(timeout_s_);
  PollPause pause;
  while (!missing.empty()) {
    bool progress = false;
    for (auto peer = missing.begin(); peer != missing.end();) {
      int arrived = 0;
      MPI_Status status;
      check_mpi(MPI_Iprobe(*peer, kExchangeTag, comm_, &arrived, &status), "MPI_Iprobe");
      if (!arrived) {
        ++peer;
        continue;
      }
      int length = 0;
      MPI_Get_count(&status, MPI_CHAR, &length);
      std::string& text = all[static_cast<std::size_t>(*peer)];
      text.resize(static_cast<std::size_t>(length));
      check_mpi(
          MPI_Recv(text.data(), length, MPI_CHAR, *peer, kExchangeTag, comm_, MPI_STATUS_IGNORE),
          "MPI_Recv");
      peer = missing.erase(peer);
      progress = true;
    }
    if (progress) {
      pause.after_progress();
      deadline.extend();
    } else if (deadline.expired()) {
      throw Error(Status::Timeout, "MPI bootstrap: no word from rank(s) " + rank_list(missing) +
                                       " within " + seconds_text() +
                                       " (COLL_TIMEOUT): gone, cut off, or failed before this "
                                       "exchange");
    } else {
      pause.after_nothing();
    }
  }
  // Every peer's message is in, so every peer has posted its sends: ours complete as the peers
  // receive them, which they do unless they fail.
  PollPause pause_sends;
  for (int done = 0;;) {
    check_mpi(MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE),
              "MPI_Testall");
    if (done) break;
    if (deadline.expired()) {
      throw Error(Status::Timeout,
                  "MPI bootstrap: a rank did not take this rank's message within " +
                      seconds_text() + " (COLL_TIMEOUT)");
    }
    pause_sends.after_nothing();
  }
  return all;
}

}  // namespace coll
