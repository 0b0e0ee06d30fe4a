// Transports by name (COLL_TRANSPORT). Each transport's file registers its factory with a static
// TransportRegistration, so adding a transport touches no shared file. A wrapper (a decorator
// another library brings, as the link emulator does `shaped`) is registered by the program that
// links it, with register_transport_wrapper, and is named before the transport it wraps:
// COLL_TRANSPORT=shaped:auto.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/cost_clock.hpp"
#include "transport/node_resources.hpp"
#include "transport/transport.hpp"

namespace coll {

class Bootstrap;

// A rank's transport with what comes with the links it carries.
struct Connection {
  std::unique_ptr<Transport> transport;
  // What the node's ranks share besides messages; made by the transport that carries the node's
  // links (options.links is all or node), empty where none does or a wrapper must see every byte.
  NodeResources node;
  // The links between nodes are emulated (the shaped wrapper's NIC per node): the cost model then
  // prices a core per rank and lets a node's flows share its NIC even where the nodes are
  // emulated on one host (model::CostParams::nic_shared).
  bool emulated_links = false;
  // The clock the links' time runs on, which then times the communicator's collectives and
  // reductions (an emulated cluster's); null: the steady clock.
  CostClock* clock = nullptr;
};

// Collective over the bootstrap: every rank calls it with the same name and node map.
using TransportFactory = Connection (*)(Bootstrap& bootstrap, const std::vector<int>& node_of_rank,
                                        const TransportOptions& options);

// A transport between processes, with the node's resources between processes when it carries
// the node's links (options.links is all or node).
Connection between_processes(std::unique_ptr<Transport> transport, Bootstrap& bootstrap,
                             const std::vector<int>& node_of_rank, const TransportOptions& options);

struct TransportRegistration {
  TransportRegistration(std::string_view name, TransportFactory factory);
};

// Collective like TransportFactory; takes the connection it wraps, already made.
using TransportWrapper = Connection (*)(Connection inner, Bootstrap& bootstrap,
                                        const std::vector<int>& node_of_rank,
                                        const TransportOptions& options);

// Makes WRAPPER:NAME available to make_transport in this process (again: the last one counts).
// Call before making a communicator; `name` must outlive the process's transports.
void register_transport_wrapper(std::string_view name, TransportWrapper wrapper);

std::vector<std::string_view> transport_names();  // sorted

// `name` is a transport, or WRAPPER:NAME. Throws InvalidArgument naming the known transports
// and wrappers when it is neither, and that the program registers its wrappers when WRAPPER is
// unknown.
Connection make_transport(std::string_view name, Bootstrap& bootstrap,
                          const std::vector<int>& node_of_rank, const TransportOptions& options);

}  // namespace coll
