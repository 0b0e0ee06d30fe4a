// The links a shaped transport emulates (COLL_SHAPE): per link class a latency alpha and a
// transfer cost beta, the node's shared host-staging path, and the time scale K that slows all
// of them, so that links faster than this machine can move data are emulated at 1/K speed.
#pragma once

#include <string>

namespace coll {

struct LinkShape {
  struct Link {
    double alpha_s = 0;          // added to every message
    double beta_s_per_byte = 0;  // 1 / the link direction's rate
  };
  Link intra;  // two ranks on one node: a link per rank pair and direction
  Link inter;  // across nodes: each node's NIC, one bucket out and one in, shared by its ranks
  double staging_beta_s_per_byte = 0;  // a node's staging path, shared by its intra sends; 0: none
  double time_scale = 1;               // K: every alpha and beta above is multiplied by K
  // clock=virtual: messages and compute move each thread's virtual time
  // (emulator/cluster_clock.hpp) instead of waiting in real time; clock=real (the default) holds
  // each send for real.
  bool virtual_clock = false;
  // reduce=GAMMA, virtual clock only: every reduction's work on the emulated hardware, seconds per
  // byte reduced (the preset's gamma); on the real clock reductions take this machine's time.
  double reduce_s_per_byte = 0;

  // "intra=ALPHA:BETA,inter=ALPHA:BETA[,staging=BETA][,scale=K][,clock=real|virtual]
  // [,reduce=GAMMA]" (seconds, seconds per byte).
  // Throws coll::Error (InvalidArgument) naming `what` and the part that is wrong.
  static LinkShape parse(const std::string& text, const std::string& what);
  std::string to_string() const;  // parse(to_string()) gives the same shape
};

}  // namespace coll
