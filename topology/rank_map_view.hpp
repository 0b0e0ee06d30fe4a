// The job as rank 0 sees it after the gather: the rank map (rank -> node, local rank, binding,
// GPU, NIC) and the link class of every rank pair with the transport libcoll uses for it.
#pragma once

#include <string>
#include <vector>

#include "coll/tools/json_writer.hpp"
#include "coll/topology/rank_map.hpp"
#include "rank_report.hpp"

namespace colltopo {

// The transport a rank's communicator uses for a link class, from its Comm::describe() text
// ("... ucx: 1 peer(s) over sm,self, 2 over tcp(lo)"): "ucx sm,self", "ucx tcp(lo)"; "self" for
// SameProcess; "?" when the text does not say.
std::string transport_for(const std::string& comm_description, coll::topo::LinkClass link);

// The NIC record a rank uses, looked up in its node's topology; nullptr if none.
const coll::topo::PciDevice* rank_nic(const RankReport& report);

void print_rank_map(std::string& out, const coll::topo::RankMap& map,
                    const std::vector<RankReport>& reports);
void json_rank_map(coll::tools::JsonWriter& json, const coll::topo::RankMap& map,
                   const std::vector<RankReport>& reports);

}  // namespace colltopo
