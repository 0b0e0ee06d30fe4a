// What a rank that has waited a while publishes in the job's store: the rank it waits on. The
// launcher, which owns the store, follows these records from a rank that timed out to the rank
// that holds the job up (docs/reliability.md).
#pragma once

#include <optional>
#include <string>

namespace coll {

// The store key of `rank`'s record ("wait/3"); shared by every communicator of the job.
std::string wait_key(int rank);
// "2 receiving from" / "2 sending to": the peer first, then what for (for people reading it).
std::string wait_record(int peer, bool sending);
// The peer of a record; nothing for an empty ("waits no more") or malformed one.
std::optional<int> waited_peer(const std::string& record);

}  // namespace coll
