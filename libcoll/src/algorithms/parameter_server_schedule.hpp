// Which members serve which shard, as a pure function, testable without processes (shared by
// the parameter server's code, its cost formula and its bus factor).
#pragma once

#include <vector>

#include "algorithms/collective.hpp"

namespace coll {

// Where the servers are: the parameter server's options (declared with its registration).
struct ServerPlacement {
  int servers = 0;         // k, COLL_PS_SERVERS (0 or more than the group: every member)
  bool dedicated = false;  // COLL_PS_DEDICATED: the last k members serve
};

// The placement `tuning`'s algorithm options set (their defaults where unset).
ServerPlacement server_placement(const Tuning& tuning);

// k, the number of servers of a group of `members`.
int ps_server_count(int members, const ServerPlacement& placement);

// Group indices of the servers, ascending; shard j (Partition of the buffer into k) is served
// by servers[j]. `node_of_member` gives each member's node. By default the servers are spread
// over the nodes: the first member of every node first, then the second, and so on, so that
// k = number of nodes puts one server on each node. COLL_PS_DEDICATED makes them the last k.
std::vector<int> ps_servers(const std::vector<int>& node_of_member,
                            const ServerPlacement& placement);

// The order in which member `me` pushes to `servers`: those on other nodes first, node by node
// from the next one after its own (wrapping around), then its own node's. Pushes cross the NICs,
// the slower and shared links, so started first their bytes overlap this rank's work on the
// others; starting from the next node spreads the workers' first pushes over the servers.
std::vector<int> push_order(std::vector<int> servers, const std::vector<int>& node_of_member,
                            int me);

// The order in which every server takes pushes from, and sends pulls to, `peers`: by position
// within the node, then by node (the first member of every node, then the second...). The
// same for every server, so that the members served first by one are served first by all and
// start the next all-reduce early; a server's first pulls go mostly to other nodes.
std::vector<int> pull_order(std::vector<int> peers, const std::vector<int>& node_of_member);

}  // namespace coll
