// What the emulator gives the runtime: the `shaped` wrapper, and its cluster clock behind the
// runtime's CostClock.
#include "emulator/emulator.hpp"

#include "core/cost_clock.hpp"
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

}  // namespace

void enable() {
  static ClusterCostClock clock;
  install_cost_clock(&clock);
  register_transport_wrapper("shaped", wrap_in_shaped_transport);
}

}  // namespace coll::emulator
