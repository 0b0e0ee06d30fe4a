// What the emulator gives the runtime: the `shaped` wrapper, whose links bring the cluster clock
// behind the runtime's CostClock.
#include "emulator/emulator.hpp"

#include "cluster_cost_clock.hpp"
#include "emulator/cluster_clock.hpp"
#include "shaped_transport.hpp"
#include "transport/transport_registry.hpp"

namespace coll::emulator {
namespace {

// The steady clock until a shaped transport on the virtual clock exists, then its virtual time.
class ClusterCostClock final : public CostClock {
 public:
  double now() override { return cluster_clock::now(); }
  void advance_to(double seconds) override { cluster_clock::advance_to(seconds); }
  void charge_reduction(std::size_t bytes) override { cluster_clock::charge_reduction(bytes); }
};

// A communicator over shaped links times its collectives and reductions on the cluster clock.
Connection shaped_on_the_cluster_clock(Connection inner, Bootstrap& bootstrap,
                                       const std::vector<int>& node_of_rank,
                                       const TransportOptions& options) {
  Connection shaped = wrap_in_shaped_transport(std::move(inner), bootstrap, node_of_rank, options);
  shaped.clock = &cluster_cost_clock();
  return shaped;
}

}  // namespace

CostClock& cluster_cost_clock() {
  static ClusterCostClock clock;
  return clock;
}

void enable() {
  register_transport_wrapper("shaped", shaped_on_the_cluster_clock);
}

}  // namespace coll::emulator
