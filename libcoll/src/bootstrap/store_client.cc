#include "bootstrap/store_client.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <string_view>
#include <thread>

#include "coll/clock.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

constexpr double kRankReleaseSeconds = 2;

}  // namespace

StoreClient::StoreClient(const std::string& address, const std::string& token, int rank, int size,
                         double timeout_s)
    : timeout_s_(timeout_s) {
  const auto [host, port] = split_host_port(address, "COLL_STORE");
  // This process's previous communicator may have held the rank a moment ago: the store frees
  // it once it has seen that connection close, which can come after this hello.
  const double stop_retrying = now_seconds() + kRankReleaseSeconds;
  while (true) {
    socket_ = Socket::connect(host, port, timeout_s);
    decoder_ = store::Decoder();
    const std::string rank_size = std::to_string(rank) + "/" + std::to_string(size);
    try {
      const std::string challenge =
          receive("the store at " + address + " to say hello", store::Op::Challenge).value;
      const std::string key = store::hello_key(token, challenge, rank_size);
      socket_.send_all(store::encode({store::Op::Hello, key, rank_size}));
      const std::string welcome =
          receive("the store at " + address + " to accept rank " + std::to_string(rank)).value;
      if (!store::same_text(welcome, store::welcome_proof(token, challenge, key, rank_size))) {
        throw Error(Status::RemoteError, "the store at " + address +
                                             " does not prove that it knows the job's token "
                                             "(COLL_TOKEN): not this job's store");
      }
      return;
    } catch (const Error& error) {
      const bool taken =
          std::string_view(error.what()).find(store::kRankTaken) != std::string_view::npos;
      if (!taken || now_seconds() > stop_retrying) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void StoreClient::set(const std::string& key, const std::string& value) {
  socket_.send_all(store::encode({store::Op::Set, key, value}));
}

std::string StoreClient::get(const std::string& key, const std::string& waiting_for) {
  socket_.send_all(store::encode({store::Op::Get, key, ""}));
  return receive(waiting_for).value;
}

void StoreClient::fail(const std::string& reason) {
  socket_.send_all(store::encode({store::Op::Fail, "", reason.substr(0, store::kMaxFailBytes)}));
}

long long StoreClient::add(const std::string& key, long long delta) {
  socket_.send_all(store::encode({store::Op::Add, key, std::to_string(delta)}));
  return std::stoll(receive("the store to count '" + key + "'").value);
}

store::Message StoreClient::receive(const std::string& waiting_for, store::Op expected) {
  // A job already aborted answers nothing more: fail now rather than at the timeout.
  if (abort_reason_) throw Error(Status::RemoteError, "job aborted: " + *abort_reason_);
  const Deadline deadline(timeout_s_);
  while (true) {
    if (auto message = decoder_.next()) {
      if (message->op == expected) return *message;
      switch (message->op) {
        case store::Op::Abort:
          abort_reason_ = message->value;
          throw Error(Status::RemoteError, "job aborted: " + message->value);
        default:
          throw Error(Status::RemoteError, message->value);
      }
    }
    if (deadline.expired()) {
      throw Error(Status::Timeout, "no answer within " + std::to_string(int(timeout_s_)) +
                                       " s (COLL_TIMEOUT) waiting for " + waiting_for);
    }
    pollfd fd{socket_.fd(), POLLIN, 0};
    const int ready = ::poll(&fd, 1, static_cast<int>(deadline.remaining() * 1000) + 1);
    if (ready <= 0) continue;
    char buffer[65536];
    const ssize_t n = ::recv(socket_.fd(), buffer, sizeof buffer, 0);
    if (n == 0) throw Error(Status::RemoteError, "the job's store closed the connection");
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_system_error("receive from store");
    }
    decoder_.feed(buffer, static_cast<std::size_t>(n));
  }
}

std::optional<std::string> StoreClient::poll_abort() {
  if (abort_reason_) return abort_reason_;
  char buffer[4096];
  const ssize_t n = ::recv(socket_.fd(), buffer, sizeof buffer, MSG_DONTWAIT);
  if (n == 0) {
    abort_reason_ = "the launcher's store closed the connection (launcher gone?)";
  } else if (n > 0) {
    decoder_.feed(buffer, static_cast<std::size_t>(n));
  }
  // Also what an earlier read left behind: an abort that arrived with the reply to the hello
  // (the job failed before this rank joined) sits in the decoder, not on the socket.
  while (auto message = decoder_.next()) {
    if (message->op == store::Op::Abort || message->op == store::Op::Error) {
      abort_reason_ = message->value;
    }
  }
  return abort_reason_;
}

}  // namespace coll
