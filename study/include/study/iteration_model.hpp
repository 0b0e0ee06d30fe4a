// One training iteration priced by the cost model and the WFBP simulator alone: no process is
// launched, so any shape (up to 512 nodes x 8) takes milliseconds. Used by --model-only, by
// --paper-tables and by the scaling simulation.
//   iteration = forward + backward + exposed communication, where exposed = the part of the
//   gradient all-reduces that backward does not hide (Shi et al.'s t_c; data loading, the
//   host-to-device copy and the update are left out, an assumption: that the paper's frameworks
//   hide or shrink them; its finding 1, paraphrased, says loading can bottleneck AlexNet).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "coll/model/link_params.hpp"
#include "coll/model/shape.hpp"
#include "study/compute_profile.hpp"
#include "study/fusion_plan.hpp"
#include "study/iteration_sim.hpp"
#include "study/model_table.hpp"

namespace coll::study {

struct IterationSetup {
  coll::model::Shape shape;
  coll::model::CostParams params;
  std::string algorithm = "ring";  // a modelled algorithm or "auto" (the fastest per message)
  std::string inter;               // hierarchical*: the algorithm across nodes ("" = ring)
  std::string intra;               // hierarchical*: the algorithm inside nodes ("" = ring)
  int ps_servers = 0;              // ps: servers (0 = every rank)
  bool ps_dedicated = false;
  std::string fusion = "none";  // fusion policy, "layer" included
  bool overlap = true;
  std::size_t element_bytes = 4;        // gradient element size (-d; fp32 unless told otherwise)
  int batch_per_gpu = 1;                // samples each GPU computes per iteration
  double compute_scale = 1;             // multiplies the compute profile
  std::string compute_profile = "p40";  // "p40" (from FLOPs) or a CSV of backward times
};

struct ModelledIteration {
  double forward_s = 0, backward_s = 0;
  double comm_s = 0;     // sum of the buckets' all-reduce times
  double exposed_s = 0;  // communication not hidden by backward
  double iteration_s = 0;
  std::string fusion;                            // the policy that made the plan (auto: chosen)
  std::map<std::string, int> algorithm_buckets;  // buckets per algorithm used
  std::vector<Bucket> buckets;
  // Per bucket, the messages its all-reduce passes on in sequence: its formula's α terms in
  // units of α, none hidden behind bytes (each is a hop whose receiver must act before the next).
  std::vector<double> hops;
  // Over the buckets priced `hierarchical` on nodes of several ranks: (G-1)/G of the shorter of
  // their intra-node phases (one node's ring all-reduce) and the rest, the time a rank could
  // spend in its inter-node phase while others of its node are still in the intra-node one.
  double phase_overlap_s = 0;
  SimResult timeline;
  ComputeProfile profile;
};

// Throws coll::Error (InvalidArgument) naming what cannot be modelled: an algorithm without a
// formula (under the setup's levels), a bad profile or policy.
ModelledIteration model_iteration(const ModelTable& table, const IterationSetup& setup);

// The all-reduce time of `bytes` under the setup's algorithm and tuning, in seconds, and the
// algorithm that gives it (for "auto", the fastest modelled algorithm).
std::pair<double, std::string> modelled_allreduce(const IterationSetup& setup, std::size_t bytes);

}  // namespace coll::study
