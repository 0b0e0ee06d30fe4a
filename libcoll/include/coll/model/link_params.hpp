// The parameters of the alpha-beta-gamma cost model: per link class (same node, across nodes) a
// latency alpha and a transfer cost beta, plus the reduction cost gamma, and where they came from.
#pragma once

#include <string>

namespace coll::model {

struct LinkParams {
  double alpha_s = 0;          // per-message latency, seconds
  double beta_s_per_byte = 0;  // seconds per byte on one link direction (1 / bandwidth)
};

// The hardware: per link class a latency alpha and a transfer cost beta, the reduction cost gamma,
// the host staging path, and where they came from (a preset, a preset file, a calibration).
struct HardwareCosts {
  LinkParams intra;  // two ranks on the same node
  LinkParams inter;  // two ranks on different nodes (one NIC per node, shared by its ranks)
  double gamma_s_per_byte = 0;  // element-wise reduction, seconds per byte of output
  std::string source;           // "preset this-vm", "calibration /path (host ...)", ...
  // Host staging (GPUs of 2017 frameworks copied through host memory): seconds per byte of the
  // node's staging path, shared by every intra-node flow of that node in one step, so a step
  // with f such flows moves each at max(intra beta, f * staging beta). 0: no shared path.
  double staging_beta_s_per_byte = 0;
};

// What the communicator's transport offers, and what the ranks time when it connects (presets
// hold the defaults: no measurement, peer memory and a shared NIC).
struct TransportFeatures {
  // One cross-memory read's cost besides its bytes (peer_read pays it per read): measured by the
  // ranks when their transport connects; 0 in presets and where unknown.
  double peer_read_call_s = 0;
  // The transport reaches the peers' buffers (cross-memory reads or mappings). Where it does
  // not (a shaped transport, TCP alone) peer_read runs, and is priced, as the ring, so `auto`
  // never picks it for what it cannot do (set by the communicator).
  bool peer_memory = true;
  // One hand-off through the node's shared-memory slots (a published line seen by a peer; the
  // shm algorithm pays it per round): measured by the ranks when their transport connects; 0 in
  // presets and where there are no slots (shm then runs, and is priced, as direct).
  double slot_handoff_s = 0;
  // A line one rank wrote as a peer on another core loads it: the slot hand-off as timed, kept
  // where ranks share cores (which replaces slot_handoff_s with the scheduler's hand-over); 0 where
  // not timed. peer_read's reads wait for it once per read phase.
  double peer_line_s = 0;
  // A node's flows to other nodes share its NIC (a real network, or one a transport emulates).
  // False where every node is emulated on one host over loopback: there is no NIC, each flow is
  // copied by its own rank's core, which sharing_cores prices (set by the communicator).
  bool nic_shared = true;
};

// The call being priced: set by the Selector for each of its choices.
struct CallContext {
  // The all-reduce's buffers come from allocate_shared, so the peers map them: peer_read loads
  // from them without read calls.
  bool peer_buffers_mapped = false;
  // The all-reduce runs in place: each rank's input is the result the last call wrote, so the
  // parts of it the peers load are still in its core's cache, written, and every line crosses
  // cores (fresh gradients are the same, but the model cannot see writes between calls).
  bool in_place = false;
};

// How the model charges a rank's per-message work (alpha), where the hardware leaves it open.
struct Charging {
  // A rank's work on a message (alpha) overlaps the bytes of its other messages on the links:
  // DMA engines (PCIe copies, NICs) carry bytes while the ranks work, LogGP's overhead o, as the
  // shaped links emulate. False where the cores copy the bytes themselves (shared memory here).
  // Only the parameter server's formula reads it (its fan-in and fan-out).
  bool alpha_overlaps_bytes = false;
  // A rank's messages to several peers posted at once in one phase (a linear exchange: the
  // parameter server's pushes and pulls, `direct`'s vectors, the leader's gather and scatter, a
  // tree step's two messages) pay one alpha each (false: each message's software, as the shaped
  // links charge it) or one alpha for the phase (true: alpha as latency that overlaps between
  // messages). Which held on the 2017 testbed is not known; the paper study's sensitivity table
  // varies it, nothing else sets it.
  bool alpha_once_per_phase = false;
};

// Everything a cost formula prices with: the hardware's alpha, beta and gamma (read directly:
// params.intra, params.gamma_s_per_byte), the transport's features, the call, the charging.
struct CostParams : HardwareCosts {
  TransportFeatures transport;
  CallContext call;
  Charging charging;
};

// The alpha a rank pays for one phase of `intra` messages inside its node and `inter` messages
// to other nodes, posted at once (Charging::alpha_once_per_phase).
double phase_alpha(const CostParams& params, int intra, int inter);

// When the ranks of a host outnumber its cores they take turns on them: their copies and
// reductions, which the model otherwise runs in parallel, are serialised (beta and gamma times
// `ranks_per_core`), and every message step waits for the receiver to get a core back (alpha
// plus (ranks_per_core - 1) * kCoreHandOverSeconds). ranks_per_core <= 1 returns `params`.
// The two hand-overs are defaults for any host, measured on one (docs/tuning.md, "Constants
// measured on the build VM").
inline constexpr double kCoreHandOverSeconds = 12e-6;
// A round through the node's shared-memory slots waits for every rank to get a core too, but
// its waiting ranks yield instead of sleeping until a message wakes them, so it waits less.
// It stands for the whole round (sharing_cores replaces the measured hand-off with it).
inline constexpr double kSlotHandOverSeconds = 9e-6;
CostParams sharing_cores(const CostParams& params, double ranks_per_core);

}  // namespace coll::model
