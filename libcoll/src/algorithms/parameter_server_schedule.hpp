// Which members serve which shard, as a pure function, testable without processes (shared by
// the parameter server's code, its cost formula and its bus factor).
#pragma once

#include <vector>

#include "algorithms/collective.hpp"

namespace coll {

// k = COLL_PS_SERVERS (0 or more than the group: every member).
int ps_server_count(int members, const Tuning& tuning);

// Group indices of the servers, ascending; shard j (Partition of the buffer into k) is served
// by servers[j]. `node_of_member` gives each member's node. By default the servers are spread
// over the nodes: the first member of every node first, then the second, and so on, so that
// k = number of nodes puts one server on each node. COLL_PS_DEDICATED makes them the last k.
std::vector<int> ps_servers(const std::vector<int>& node_of_member, const Tuning& tuning);

}  // namespace coll
