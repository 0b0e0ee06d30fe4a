// Transports by name (COLL_TRANSPORT). Each transport's file registers its factory with a static
// TransportRegistration, so adding a transport touches no shared file.
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

std::vector<std::string_view> transport_names();  // sorted

// Throws InvalidArgument naming the known transports when `name` is not one of them.
std::unique_ptr<Transport> make_transport(std::string_view name, Bootstrap& bootstrap,
                                          const std::vector<int>& node_of_rank,
                                          const TransportOptions& options);

}  // namespace coll
