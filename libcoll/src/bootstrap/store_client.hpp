// A rank's connection to the job's store: set/get/add, and the abort channel the launcher
// uses to tell waiting ranks that another rank failed.
#pragma once

#include <optional>
#include <string>

#include "bootstrap/socket.hpp"
#include "bootstrap/store_wire.hpp"

namespace coll {

class StoreClient {
 public:
  // Joins the job of `size` ranks as `rank`; the store refuses a rank out of range or taken.
  StoreClient(const std::string& address, const std::string& token, int rank, int size,
              double timeout_s);

  void set(const std::string& key, const std::string& value);
  // Blocks until the key exists; `waiting_for` completes the timeout message
  // ("... waiting for <waiting_for>").
  std::string get(const std::string& key, const std::string& waiting_for);
  long long add(const std::string& key, long long delta);
  // Fails the job: the store pushes `reason` to every rank as its abort message.
  void fail(const std::string& reason);

  // Readable when the server pushed something; a transport polls it while it waits.
  int fd() const { return socket_.fd(); }
  // Non-blocking: the abort reason if the server pushed one (or the store connection closed).
  std::optional<std::string> poll_abort();

 private:
  // The next message of kind `expected` (an abort or an error throws instead).
  store::Message receive(const std::string& waiting_for, store::Op expected = store::Op::Reply);

  Socket socket_;
  store::Decoder decoder_;
  double timeout_s_;
  std::optional<std::string> abort_reason_;
};

}  // namespace coll
