// A job with a hostile store client, for the launcher tests. Run by collrun with 2 ranks:
// rank 0 forks a child that joins the store with the job's token as rank 0, asks for megabytes
// of replies and never reads them, then rank 0 fails. Rank 1 waits for the launcher's abort and
// reports it. The child stays until the store hangs up on it (at most 20 s).
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "bootstrap/socket.hpp"
#include "bootstrap/store_client.hpp"
#include "bootstrap/store_wire.hpp"
#include "coll/clock.hpp"

namespace {

constexpr double kHogLifetimeS = 20;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// Joins as rank 0, sets a 1 MiB value, asks for it 64 times, and waits without reading.
void hog(int flooded) {
  const auto [host, port] = coll::split_host_port(env("COLL_STORE"), "COLL_STORE");
  coll::Socket socket = coll::Socket::connect(host, port, 10);
  using coll::store::encode;
  using coll::store::Op;
  // The hello answers the store's challenge, the first frame it sends.
  coll::store::Decoder decoder;
  std::optional<coll::store::Message> challenge;
  while (!challenge) {
    char byte;
    if (::recv(socket.fd(), &byte, 1, 0) <= 0) return;
    decoder.feed(&byte, 1);
    challenge = decoder.next();
  }
  const std::string rank_size = "0/" + env("COLL_SIZE");
  std::string requests =
      encode({Op::Hello, coll::store::hello_key(env("COLL_TOKEN"), challenge->value, rank_size),
              rank_size});
  requests += encode({Op::Set, "big", std::string(1u << 20, 'x')});
  for (int i = 0; i < 64; ++i) requests += encode({Op::Get, "big", ""});
  socket.send_all(requests);
  // Stuck from here on: the store has begun to answer, and nothing will read its replies.
  pollfd answered{socket.fd(), POLLIN, 0};
  ::poll(&answered, 1, static_cast<int>(kHogLifetimeS * 1000));
  const char done = 1;
  [[maybe_unused]] const auto ignored = ::write(flooded, &done, 1);
  pollfd hung_up{socket.fd(), POLLRDHUP, 0};
  ::poll(&hung_up, 1, static_cast<int>(kHogLifetimeS * 1000));
}

}  // namespace

int main() {
  const int rank = std::atoi(env("COLL_RANK").c_str());
  if (rank == 0) {
    int flooded[2];
    if (::pipe(flooded) != 0) return 2;
    if (::fork() == 0) {
      ::close(flooded[0]);
      hog(flooded[1]);
      return 0;
    }
    ::close(flooded[1]);
    char done = 0;
    [[maybe_unused]] const auto ignored = ::read(flooded[0], &done, 1);
    std::fprintf(stderr, "store_hog: rank 0 fails on purpose with a stuck store client\n");
    return 1;
  }
  coll::StoreClient client(env("COLL_STORE"), env("COLL_TOKEN"), rank,
                           std::atoi(env("COLL_SIZE").c_str()), 30);
  const double give_up = coll::now_seconds() + 30;
  while (coll::now_seconds() < give_up) {
    if (const auto reason = client.poll_abort()) {
      std::fprintf(stderr, "store_hog: rank %d heard the abort: %s\n", rank, reason->c_str());
      return 3;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::fprintf(stderr, "store_hog: rank %d never heard the abort\n", rank);
  return 4;
}
