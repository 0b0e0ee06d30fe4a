// What a rank does when it finds that the job cannot go on (the ranks called different
// collectives): it tells every rank, so that all fail at once with the same message naming the
// cause, instead of only its neighbours failing and the others timing out blaming a healthy rank.
#pragma once

#include <string>

#include "transport/transport.hpp"

namespace coll {

// Posts `reason` as the job's abort message (Transport::fail_job) and throws InvalidUsage with
// the job's reason (another rank's, when it found the problem first); the other ranks' waits
// fail with "job aborted: <that reason>".
[[noreturn]] void fail_everywhere(Transport& transport, const std::string& reason);

}  // namespace coll
