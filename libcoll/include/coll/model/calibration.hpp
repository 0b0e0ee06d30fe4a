// Measuring this machine's alpha/beta per link class and gamma, and the file that keeps them.
//
// File format (text, one "key = value" a line, '#' comments), written by `collbench --calibrate`:
//   format = libcoll-calibration 1
//   host = <hostname the measurement ran on>
//   intra.alpha_s, intra.beta_s_per_byte, inter.alpha_s, inter.beta_s_per_byte,
//   gamma_s_per_byte = <positive finite numbers>
//   source = <free text: what was measured, what came from a preset>
#pragma once

#include <optional>
#include <string>

#include "coll/comm.hpp"
#include "coll/model/link_params.hpp"

namespace coll::model {

struct Calibration {
  CostParams params;
  std::string host;
};

struct CalibrationOptions {
  std::size_t small_bytes = 8;         // alpha: one-way time of a tiny message
  std::size_t large_bytes = 4u << 20;  // beta: slope between the small and the large size
  int small_repeats = 200, large_repeats = 20, warmup = 5;  // medians of the repeats
  std::size_t reduce_bytes = 64u << 20;  // gamma: coll::reduce of float sums on this much
};

// Collective: every rank of `comm` calls it. Rank 0 ping-pongs with its first same-node peer
// and its first other-node peer (Comm::send/recv), fits alpha = t(small) - small*beta and
// beta = (t(large) - t(small)) / (large - small) on median one-way times, and times coll::reduce
// for gamma. A class with no pair in this job (one node, one rank per node) keeps this host's
// previous calibration (calibration_path()), else the "this-vm" preset, and `source` says which.
// The result is meaningful on rank 0.
Calibration calibrate(Comm& comm, const CalibrationOptions& options = {});

// COLL_CALIBRATION_FILE, else $HOME/.cache/libcoll/calibration.txt.
std::string calibration_path();
std::string this_host();

// Creates the parent directory; throws coll::Error (SystemError) naming the path on failure.
void save_calibration(const Calibration& calibration, const std::string& path);
// nullopt when the file does not exist; throws coll::Error (InvalidArgument) naming the file,
// the line and what is wrong when it is malformed.
std::optional<Calibration> load_calibration(const std::string& path);

}  // namespace coll::model
