// A NodeTopology as text, so that every node's topology can travel to rank 0 over Comm::send and
// be printed there with the same code that prints a fixture.
#pragma once

#include <string>
#include <string_view>

#include "coll/topology/node_topology.hpp"

namespace colltopo {

std::string encode_topology(const coll::topo::NodeTopology& node);
// Throws coll::Error(InvalidArgument) when the text was not made by encode_topology.
coll::topo::NodeTopology decode_topology(std::string_view text);

}  // namespace colltopo
