// coll::Error: a status code plus a message that says what happened, on which rank, with which
// peer, and what to try.
#pragma once

#include <stdexcept>
#include <string>

#include "coll/coll.h"

namespace coll {

enum class Status : int {
  Success = collSuccess,
  SystemError = collSystemError,
  InternalError = collInternalError,
  InvalidArgument = collInvalidArgument,
  InvalidUsage = collInvalidUsage,
  RemoteError = collRemoteError,
  Timeout = collTimeout,
};

class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

// errno-based failure of a system call: "<what>: <strerror>".
[[noreturn]] void throw_system_error(const std::string& what);

}  // namespace coll
