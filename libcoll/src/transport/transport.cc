#include "transport/transport.hpp"

#include "coll/error.hpp"

namespace coll {

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
