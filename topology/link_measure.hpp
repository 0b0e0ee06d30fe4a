// colltopo --measure: latency and bandwidth of every ordered rank pair over the transports
// libcoll really uses (Comm::send/recv), one pair at a time, and the pairs that fall far short
// of what their link class should give.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "coll/comm.hpp"
#include "coll/tools/json_writer.hpp"
#include "coll/topology/rank_map.hpp"
#include "rank_report.hpp"

namespace colltopo {

struct LinkMatrix {
  int size = 0;
  std::size_t bytes = 0;             // bandwidth message size
  std::vector<double> latency_us;    // size * size, row-major: one-way, median; NaN on the diagonal
  std::vector<double> gbytes_per_s;  // from a to b, median of the repetitions; NaN on the diagonal

  double latency(int a, int b) const { return latency_us.at(index(a, b)); }
  double bandwidth(int a, int b) const { return gbytes_per_s.at(index(a, b)); }
  std::size_t index(int a, int b) const { return static_cast<std::size_t>(a * size + b); }
};

struct LinkFlag {
  int a = -1, b = -1;
  std::string reason;
};

// Collective. Rank 0 returns the whole matrix; the other ranks an empty one (size 0).
LinkMatrix measure_links(coll::Comm& comm, std::size_t bytes, int latency_iters);

// Pairs whose bandwidth is under half the median of their link class, or under the class's
// floor (shared memory: 0.5 GB/s; cross-node on one host: 0.1 GB/s; between hosts: 40% of the
// slower NIC's rate when known), or whose latency is over 4x the class median and 50 us.
std::vector<LinkFlag> flag_links(const LinkMatrix& matrix, const coll::topo::RankMap& map,
                                 const std::vector<RankReport>& reports);

void print_links(std::string& out, const LinkMatrix& matrix, const std::vector<LinkFlag>& flags);
void json_links(coll::tools::JsonWriter& json, const LinkMatrix& matrix,
                const std::vector<LinkFlag>& flags);

}  // namespace colltopo
