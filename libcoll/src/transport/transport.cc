#include "transport/transport.hpp"

#include <unistd.h>

#include <algorithm>

#include "coll/error.hpp"

namespace coll {

bool TransportOptions::ranks_outnumber_cores() const {
  return ranks_on_this_host > std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
}

void Transport::interrupt(const std::string& reason) {
  std::call_once(interrupt_once_, [&] {
    interrupt_reason_ = reason;
    interrupted_.store(true, std::memory_order_release);
  });
}

void Transport::check_interrupt() const {
  if (interrupted()) throw Error(Status::InvalidUsage, interrupt_reason_);
}

}  // namespace coll
