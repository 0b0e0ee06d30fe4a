// Transports by name (COLL_TRANSPORT). Each transport's file registers its factory with a static
// TransportRegistration, so adding a transport touches no shared file. A wrapper (a decorator
// such as `shaped`) registers with TransportWrapperRegistration and is named before the
// transport it wraps: COLL_TRANSPORT=shaped:ucx.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "transport/transport.hpp"

namespace coll {

class Bootstrap;

// Collective over the bootstrap: every rank calls it with the same name and node map.
using TransportFactory = std::unique_ptr<Transport> (*)(Bootstrap& bootstrap,
                                                        const std::vector<int>& node_of_rank,
                                                        const TransportOptions& options);

struct TransportRegistration {
  TransportRegistration(std::string_view name, TransportFactory factory);
};

// Collective like TransportFactory; takes the transport it wraps, already made.
using TransportWrapper = std::unique_ptr<Transport> (*)(std::unique_ptr<Transport> inner,
                                                        Bootstrap& bootstrap,
                                                        const std::vector<int>& node_of_rank,
                                                        const TransportOptions& options);

struct TransportWrapperRegistration {
  TransportWrapperRegistration(std::string_view name, TransportWrapper wrapper);
};

std::vector<std::string_view> transport_names();  // sorted

// `name` is a transport, or WRAPPER:NAME. Throws InvalidArgument naming the known transports
// and wrappers when it is neither.
std::unique_ptr<Transport> make_transport(std::string_view name, Bootstrap& bootstrap,
                                          const std::vector<int>& node_of_rank,
                                          const TransportOptions& options);

}  // namespace coll
