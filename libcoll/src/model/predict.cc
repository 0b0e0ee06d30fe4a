// Cost formulas. Notation: p ranks, N nodes, G ranks per node (G_max / G_min when uneven),
// M bytes per rank, alpha/beta per link class (intra = same node, inter = across nodes), gamma
// reduction seconds per byte, L(x) = log2 x.
//
// Link model. One step of an algorithm is a set of concurrent flows, each carrying b bytes.
// Intra-node flows cost alpha_intra + b*beta_intra (one port per rank). Inter-node flows share
// their node's NIC: f = the most flows entering or leaving one node in that step, and they cost
// alpha_inter + f*b*beta_inter. A step lasts as long as its slowest class ("a flat ring spanning
// nodes is bounded by its inter-node link"; anchors.md section 5: busbw <= the slowest link).
//
// ring (reduce-scatter then all-gather; Patarasuk & Yuan, JPDC 2009; Thakur, Rabenseifner, Gropp,
//   IJHPCA 2005): 2(p-1) steps of b = M/p over the ring's links, in rank order:
//   T = 2(p-1)*alpha + 2(p-1)/p*M*beta + (p-1)/p*M*gamma, with (alpha, f*beta) of the slowest link.
//
// tree (pipelined double binary tree, Sanders, Speck & Traeff, Parallel Computing 35(12) 2009;
//   NCCL >= 2.4): two trees each carry M/2 in k segments; every rank is interior in one tree and a
//   leaf in the other, so each pipeline step moves M/k through a rank's port. Depth D =
//   floor(L(p)): T(k) = 2(D+k-1)*(alpha + M/k*beta) + (D+k-1)*M/k*gamma  (reduce phase then
//   broadcast phase), k* = sqrt(D*M*(2beta+gamma) / (2alpha)), rounded to the better neighbouring
//   integer, with segments of at least 64 B. Large M: 2M*beta + 2D*alpha + 4sqrt(D*alpha*M*beta)
//   (anchors.md). A tree spanning nodes runs at the inter link's pace (a pipeline goes as fast as
//   its slowest stage); each tree crosses a node boundary about once per direction, so f = 1.
//
// halving_doubling (Rabenseifner: recursive-halving reduce-scatter + recursive-doubling
//   all-gather; Thakur et al. 2005): p' = 2^floor(L(p)), r = p - p'. Power of two:
//   T = 2L(p)*alpha + 2(p-1)/p*M*beta + (p-1)/p*M*gamma. As libcoll's halving_doubling.cc does,
//   reduce-scatter step j = 1..L(p') pairs ranks at distance p'/2^j and moves M/2^j (largest
//   distance first), the all-gather mirrors it; link class and NIC sharing are evaluated per
//   step, so on contiguous nodes the first (largest) steps cross nodes. Non-power-of-two: first
//   the even ranks among the first 2r send their whole vector to their odd neighbour
//   (alpha + M*beta + M*gamma) and at the end receive the result back (alpha + M*beta).
//
// ps (parameter server, co-located, k servers, k = p by default; BytePS, OSDI'20 section 4):
//   push then pull; each server owns M/k. Every rank sends M/k to each other server and every
//   server receives M/k from each other rank; messages of one rank are posted back to back and pay
//   alpha each (Thakur et al.'s linear exchange), bytes are bounded by the busiest rank port and
//   node NIC. Flat, k = p: T = 2(p-1)*alpha + 2(p-1)/p*M*beta + (p-1)/p*M*gamma, as the ring.
//
// hierarchical (intra reduce-scatter -> concurrent inter all-reduces of M/G on the "rails" ->
//   intra all-gather; Horovod hierarchical, UCC; anchors.md "2-level hierarchical"), both
//   levels rings (libcoll's COLL_HIER_INTRA/INTER defaults):
//   T = 2(G_max-1)*(alpha_intra + M/G_max*beta_intra) + 2(N-1)*c*alpha_inter
//     + 2(N-1)*M/N*beta_inter + (G_max-1)/G_max*M*gamma + (N-1)/N*M/G_min*gamma,
//   c = ceil(G_max/G_min) rails run one after another by a rank of the smallest node. The rails
//   share the NIC, so each inter step moves M/N through it, the same NIC bytes as a flat ring.
//
// hierarchical_leader (intra ring reduce-scatter + gather to the leader -> leaders' ring
//   all-reduce of M -> scatter from the leader + intra ring all-gather, as hierarchical.cc):
//   T = 4(G-1)*alpha_intra + 4(G-1)/G*M*beta_intra + (G-1)/G*M*gamma
//     + 2(N-1)*(alpha_inter + M/N*beta_inter) + (N-1)/N*M*gamma, G = G_max; the leader's
//   G-1 gather (scatter) messages pay alpha each, their bytes pass its one port.
//
// Messages that one rank sends or receives in one phase (ps, the leader's gather) are
// serialized at alpha each, as Thakur et al. model linear exchanges.
#include "model/predict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace coll::model {
namespace {

using Flows = std::vector<std::pair<int, int>>;  // (from rank, to rank)

struct StepCost {
  double latency = 0;
  double bandwidth = 0;
  bool inter = false;
};

// The slower of the step's intra-node flows and its inter-node flows (sharing their NICs).
StepCost step_cost(const CostParams& params, const Shape& shape, const Flows& flows, double bytes) {
  bool any_intra = false;
  std::vector<int> out(static_cast<std::size_t>(shape.nodes)), in(out.size());
  for (const auto& [from, to] : flows) {
    if (shape.same_node(from, to)) {
      any_intra = true;
    } else {
      ++out[static_cast<std::size_t>(shape.node_of_rank[static_cast<std::size_t>(from)])];
      ++in[static_cast<std::size_t>(shape.node_of_rank[static_cast<std::size_t>(to)])];
    }
  }
  const int sharing =
      std::max(*std::max_element(out.begin(), out.end()), *std::max_element(in.begin(), in.end()));
  StepCost intra{params.intra.alpha_s, bytes * params.intra.beta_s_per_byte, false};
  StepCost inter{params.inter.alpha_s, bytes * params.inter.beta_s_per_byte * sharing, true};
  if (sharing == 0) return intra;
  if (!any_intra) return inter;
  return intra.latency + intra.bandwidth > inter.latency + inter.bandwidth ? intra : inter;
}

std::string format(const char* pattern, auto... values) {
  char text[256];
  std::snprintf(text, sizeof text, pattern, values...);
  return text;
}

Prediction ring(const CostParams& params, const Shape& shape, double m) {
  Prediction out{"ring"};
  const int p = shape.ranks;
  if (p < 2) return out;
  Flows flows;
  for (int r = 0; r < p; ++r) flows.emplace_back(r, (r + 1) % p);
  const StepCost step = step_cost(params, shape, flows, m / p);
  out.latency_s = 2.0 * (p - 1) * step.latency;
  out.bandwidth_s = 2.0 * (p - 1) * step.bandwidth;
  out.reduction_s = (p - 1.0) / p * m * params.gamma_s_per_byte;
  out.detail = format("2(p-1)=%d steps of M/p on the %s link", 2 * (p - 1),
                      step.inter ? "inter-node" : "intra-node");
  return out;
}

Prediction tree(const CostParams& params, const Shape& shape, double m) {
  Prediction out{"tree"};
  const int p = shape.ranks;
  if (p < 2) return out;
  const LinkParams& link = shape.nodes > 1 ? params.inter : params.intra;
  const double depth = std::floor(std::log2(double(p)));
  const double alpha = link.alpha_s, beta = link.beta_s_per_byte, gamma = params.gamma_s_per_byte;
  const double k_max = std::max(1.0, std::floor(m / 64));
  auto cost = [&](double k) {
    const double steps = depth + k - 1;
    return Prediction{"tree", 2 * steps * alpha, 2 * steps * m / k * beta, steps * m / k * gamma};
  };
  double k_star = alpha > 0 ? std::sqrt(depth * m * (2 * beta + gamma) / (2 * alpha)) : k_max;
  k_star = std::clamp(k_star, 1.0, k_max);
  double k = std::floor(k_star);
  if (k + 1 <= k_max && cost(k + 1).total_s() < cost(k).total_s()) k += 1;
  out = cost(k);
  out.detail = format("depth %d, k=%.0f segments, on the %s link", int(depth), k,
                      shape.nodes > 1 ? "inter-node" : "intra-node");
  return out;
}

Prediction halving_doubling(const CostParams& params, const Shape& shape, double m) {
  Prediction out{"halving_doubling"};
  const int p = shape.ranks;
  if (p < 2) return out;
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int extra = p - pof2;
  auto real = [&](int v) { return v < extra ? 2 * v + 1 : v + extra; };  // odd ones stay
  int inter_steps = 0;
  auto add = [&](const Flows& flows, double bytes, double reduced, int times) {
    const StepCost step = step_cost(params, shape, flows, bytes);
    out.latency_s += times * step.latency;
    out.bandwidth_s += times * step.bandwidth;
    out.reduction_s += reduced * params.gamma_s_per_byte;
    inter_steps += step.inter ? times : 0;
  };
  if (extra > 0) {
    Flows to_odd, to_even;
    for (int i = 0; i < extra; ++i) {
      to_odd.emplace_back(2 * i, 2 * i + 1);
      to_even.emplace_back(2 * i + 1, 2 * i);
    }
    add(to_odd, m, m, 1);
    add(to_even, m, 0, 1);
  }
  double bytes = m;
  for (int distance = pof2 / 2; distance >= 1; distance /= 2) {
    bytes /= 2;
    Flows flows;
    for (int v = 0; v < pof2; ++v) flows.emplace_back(real(v), real(v ^ distance));
    add(flows, bytes, bytes, 2);  // once in the reduce-scatter, once in the all-gather
  }
  int steps = 0;
  for (int d = 1; d < pof2; d *= 2) steps += 2;
  out.detail =
      format("%d steps (%d on the inter-node link)%s", steps + (extra > 0 ? 2 : 0), inter_steps,
             extra > 0 ? format(", %d extra ranks fold in", extra).c_str() : "");
  return out;
}

Prediction parameter_server(const CostParams& params, const Shape& shape, double m, int servers) {
  Prediction out{"ps"};
  const int p = shape.ranks;
  if (p < 2) return out;
  const int k = servers <= 0 ? p : std::min(servers, p);
  const double shard = m / k;
  // Push phase (the pull phase mirrors it): rank r sends a shard to every server s != r.
  std::vector<double> port_out(static_cast<std::size_t>(p)), port_in(port_out.size());
  std::vector<double> lat_out(port_out.size()), lat_in(port_out.size());
  std::vector<double> nic_out(static_cast<std::size_t>(shape.nodes)), nic_in(nic_out.size());
  for (int r = 0; r < p; ++r) {
    for (int s = 0; s < k; ++s) {
      if (s == r) continue;
      const auto from = static_cast<std::size_t>(r), to = static_cast<std::size_t>(s);
      if (shape.same_node(r, s)) {
        port_out[from] += shard * params.intra.beta_s_per_byte;
        port_in[to] += shard * params.intra.beta_s_per_byte;
        lat_out[from] += params.intra.alpha_s;
        lat_in[to] += params.intra.alpha_s;
      } else {
        nic_out[static_cast<std::size_t>(shape.node_of_rank[from])] += shard;
        nic_in[static_cast<std::size_t>(shape.node_of_rank[to])] += shard;
        lat_out[from] += params.inter.alpha_s;
        lat_in[to] += params.inter.alpha_s;
      }
    }
  }
  auto top = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
  const double ports = std::max(top(port_out), top(port_in));
  const double nics = std::max(top(nic_out), top(nic_in)) * params.inter.beta_s_per_byte;
  out.latency_s = 2 * std::max(top(lat_out), top(lat_in));
  out.bandwidth_s = 2 * std::max(ports, nics);
  out.reduction_s = (p - 1) * shard * params.gamma_s_per_byte;
  out.detail = format("k=%d co-located servers, push + pull of M/k shards%s", k,
                      nics > ports ? ", NIC-bound" : "");
  return out;
}

// Ring all-reduces over N nodes whose NIC carries M/N per step (the rails together); a rank
// runs `rounds` rails one after another.
void add_inter_ring(Prediction& out, const CostParams& params, int nodes, double m,
                    int rounds = 1) {
  if (nodes < 2) return;
  out.latency_s += 2.0 * (nodes - 1) * rounds * params.inter.alpha_s;
  out.bandwidth_s += 2.0 * (nodes - 1) * m / nodes * params.inter.beta_s_per_byte;
}

Prediction hierarchical(const CostParams& params, const Shape& shape, double m) {
  Prediction out{"hierarchical"};
  const int g = shape.max_local(), n = shape.nodes;
  if (g > 1) {
    out.latency_s = 2.0 * (g - 1) * params.intra.alpha_s;
    out.bandwidth_s = 2.0 * (g - 1) * m / g * params.intra.beta_s_per_byte;
    out.reduction_s = (g - 1.0) / g * m * params.gamma_s_per_byte;
  }
  const int rounds = (g + shape.min_local() - 1) / shape.min_local();
  add_inter_ring(out, params, n, m, rounds);
  out.reduction_s += (n - 1.0) / n * m / shape.min_local() * params.gamma_s_per_byte;
  out.detail = format("2(G-1)=%d intra steps of M/G, 2(N-1)=%d inter steps on %d rail(s)",
                      2 * (g - 1), 2 * (n - 1), shape.min_local());
  return out;
}

Prediction hierarchical_leader(const CostParams& params, const Shape& shape, double m) {
  Prediction out{"hierarchical_leader"};
  const int g = shape.max_local(), n = shape.nodes;
  if (g > 1) {
    out.latency_s = 4.0 * (g - 1) * params.intra.alpha_s;
    out.bandwidth_s = 4.0 * (g - 1) / g * m * params.intra.beta_s_per_byte;
    out.reduction_s = (g - 1.0) / g * m * params.gamma_s_per_byte;
  }
  add_inter_ring(out, params, n, m);
  out.reduction_s += (n - 1.0) / n * m * params.gamma_s_per_byte;
  out.detail = format("4(G-1)=%d intra steps of M/G, 2(N-1)=%d leader ring steps of M/N",
                      4 * (g - 1), 2 * (n - 1));
  return out;
}

}  // namespace

std::optional<Prediction> predict(std::string_view algorithm, const CostParams& params,
                                  const Shape& shape, std::size_t bytes,
                                  const PredictOptions& options) {
  const double m = static_cast<double>(bytes);
  std::optional<Prediction> out;
  if (algorithm == "ring") out = ring(params, shape, m);
  if (algorithm == "tree") out = tree(params, shape, m);
  if (algorithm == "halving_doubling") out = halving_doubling(params, shape, m);
  if (algorithm == "ps" || algorithm == "parameter_server") {
    out = parameter_server(params, shape, m, options.ps_servers);
  }
  if (algorithm == "hierarchical") out = hierarchical(params, shape, m);
  if (algorithm == "hierarchical_leader") out = hierarchical_leader(params, shape, m);
  if (out) out->algorithm = std::string(algorithm);
  return out;
}

const std::vector<std::string>& modeled_algorithms() {
  static const std::vector<std::string> names{"ring", "tree",         "halving_doubling",
                                              "ps",   "hierarchical", "hierarchical_leader"};
  return names;
}

}  // namespace coll::model
