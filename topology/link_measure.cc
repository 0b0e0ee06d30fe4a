#include "link_measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>

#include "rank_map_view.hpp"
#include "text_format.hpp"

namespace colltopo {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kPingTag = 0x70710001, kDataTag = 0x70710002, kAckTag = 0x70710003;
constexpr std::uint32_t kRowTag = 0x70710004;
constexpr int kBandwidthReps = 5;
constexpr int kWarmupPings = 10;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Buffers allocated and touched once, before any pair is timed.
struct Buffers {
  std::vector<unsigned char> data, ping{std::vector<unsigned char>(8, 1)};
  explicit Buffers(std::size_t bytes) : data(bytes, 0x5a) {}
};

// The pair's sender side: returns {one-way latency us, GB/s from me to peer}.
std::pair<double, double> measure_as_sender(coll::Comm& comm, Buffers& buffers, int peer,
                                            int latency_iters) {
  auto* ping = buffers.ping.data();
  auto round_trip = [&] {
    comm.send(ping, 8, peer, kPingTag);
    comm.recv(ping, 8, peer, kPingTag);
  };
  auto bulk = [&] {
    comm.send(buffers.data.data(), buffers.data.size(), peer, kDataTag);
    comm.recv(ping, 1, peer, kAckTag);
  };
  for (int i = 0; i < kWarmupPings; ++i) round_trip();  // warm-up: connections, caches
  bulk();
  std::vector<double> one_way;
  for (int i = 0; i < latency_iters; ++i) {
    const auto start = Clock::now();
    round_trip();
    one_way.push_back(seconds_since(start) / 2 * 1e6);
  }
  std::vector<double> rates;
  for (int i = 0; i < kBandwidthReps; ++i) {
    const auto start = Clock::now();
    bulk();
    rates.push_back(static_cast<double>(buffers.data.size()) / seconds_since(start) / 1e9);
  }
  return {median(one_way), median(rates)};
}

// Mirrors measure_as_sender step by step.
void serve_as_receiver(coll::Comm& comm, Buffers& buffers, int peer, int latency_iters) {
  auto* ping = buffers.ping.data();
  auto echo = [&](int times) {
    for (int i = 0; i < times; ++i) {
      comm.recv(ping, 8, peer, kPingTag);
      comm.send(ping, 8, peer, kPingTag);
    }
  };
  auto absorb = [&](int times) {
    for (int i = 0; i < times; ++i) {
      comm.recv(buffers.data.data(), buffers.data.size(), peer, kDataTag);
      comm.send(ping, 1, peer, kAckTag);
    }
  };
  echo(kWarmupPings);
  absorb(1);
  echo(latency_iters);
  absorb(kBandwidthReps);
}

// What a class of links should give at least, and why; 0 when nothing is known.
std::pair<double, std::string> floor_for(const coll::topo::RankMap& map,
                                         const std::vector<RankReport>& reports, int a, int b) {
  using coll::topo::LinkClass;
  if (map.link(a, b) != LinkClass::CrossNode)
    return {0.5, "shared memory should give at least 0.5 GB/s"};
  const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
  if (map.host_of_rank[ia] == map.host_of_rank[ib])
    return {0.1, "loopback TCP between emulated nodes should give at least 0.1 GB/s"};
  const auto* na = rank_nic(reports[ia]);
  const auto* nb = rank_nic(reports[ib]);
  if (!na || !nb || na->link_gbps <= 0 || nb->link_gbps <= 0) return {0, ""};
  const auto* slow = na->link_gbps <= nb->link_gbps ? na : nb;
  std::string why;
  appendf(why, "40%% of the %g Gb/s rate of %s", slow->link_gbps, slow->name.c_str());
  return {0.4 * slow->link_gbps / 8, why};
}

void print_matrix(std::string& out, const LinkMatrix& m, const std::vector<double>& values,
                  const char* format) {
  appendf(out, "  %6s", "from\\to");
  for (int b = 0; b < m.size; ++b) appendf(out, " %8s", ("r" + std::to_string(b)).c_str());
  out += "\n";
  for (int a = 0; a < m.size; ++a) {
    appendf(out, "  %7s", ("r" + std::to_string(a)).c_str());
    for (int b = 0; b < m.size; ++b) {
      if (a == b)
        appendf(out, " %8s", "-");
      else
        appendf(out, format, values[m.index(a, b)]);
    }
    out += "\n";
  }
}

}  // namespace

LinkMatrix measure_links(coll::Comm& comm, std::size_t bytes, int latency_iters) {
  const int size = comm.size(), me = comm.rank();
  Buffers buffers(bytes);
  std::vector<double> row(2 * static_cast<std::size_t>(size), kNaN);  // latencies, then rates
  // One ordered pair at a time: the barrier keeps other pairs off the machine while it runs.
  for (int a = 0; a < size; ++a) {
    for (int b = 0; b < size; ++b) {
      if (a == b) continue;
      comm.barrier();
      if (me == a) {
        const auto [latency, rate] = measure_as_sender(comm, buffers, b, latency_iters);
        row[static_cast<std::size_t>(b)] = latency;
        row[static_cast<std::size_t>(size + b)] = rate;
      } else if (me == b) {
        serve_as_receiver(comm, buffers, a, latency_iters);
      }
    }
  }
  comm.barrier();
  const std::size_t row_bytes = row.size() * sizeof(double);
  if (me != 0) {
    comm.send(row.data(), row_bytes, 0, kRowTag);
    return {};
  }
  LinkMatrix m;
  m.size = size;
  m.bytes = bytes;
  m.latency_us.assign(static_cast<std::size_t>(size * size), kNaN);
  m.gbytes_per_s = m.latency_us;
  for (int a = 0; a < size; ++a) {
    if (a != 0) comm.recv(row.data(), row_bytes, a, kRowTag);
    for (int b = 0; b < size; ++b) {
      m.latency_us[m.index(a, b)] = row[static_cast<std::size_t>(b)];
      m.gbytes_per_s[m.index(a, b)] = row[static_cast<std::size_t>(size + b)];
    }
  }
  return m;
}

std::vector<LinkFlag> flag_links(const LinkMatrix& m, const coll::topo::RankMap& map,
                                 const std::vector<RankReport>& reports) {
  std::map<coll::topo::LinkClass, std::vector<double>> rates, latencies;
  for (int a = 0; a < m.size; ++a)
    for (int b = 0; b < m.size; ++b)
      if (a != b) {
        rates[map.link(a, b)].push_back(m.bandwidth(a, b));
        latencies[map.link(a, b)].push_back(m.latency(a, b));
      }
  std::vector<LinkFlag> flags;
  for (int a = 0; a < m.size; ++a) {
    for (int b = 0; b < m.size; ++b) {
      if (a == b) continue;
      const auto link = map.link(a, b);
      const std::string name(to_string(link));
      const double rate = m.bandwidth(a, b), latency = m.latency(a, b);
      const double rate_median = median(rates[link]), latency_median = median(latencies[link]);
      const auto [floor, floor_why] = floor_for(map, reports, a, b);
      std::string reason;
      if (!std::isfinite(rate) || !std::isfinite(latency)) {
        reason = "no measurement";
      } else if (rate < 0.5 * rate_median) {
        appendf(reason, "%.2f GB/s is under half the %s median (%.2f GB/s)", rate, name.c_str(),
                rate_median);
      } else if (rate < floor) {
        appendf(reason, "%.2f GB/s is under %.2f GB/s (%s)", rate, floor, floor_why.c_str());
      } else if (latency > 4 * latency_median && latency > 50) {
        appendf(reason, "latency %.1f us is over 4x the %s median (%.1f us)", latency, name.c_str(),
                latency_median);
      }
      if (!reason.empty()) flags.push_back({a, b, name + ": " + reason});
    }
  }
  return flags;
}

void print_links(std::string& out, const LinkMatrix& m, const std::vector<LinkFlag>& flags) {
  out += "measured latency (us, one way, 8 B ping-pong, median):\n";
  print_matrix(out, m, m.latency_us, " %8.1f");
  appendf(out, "measured bandwidth (GB/s, %zu-byte messages, median of %d):\n", m.bytes,
          kBandwidthReps);
  print_matrix(out, m, m.gbytes_per_s, " %8.2f");
  if (flags.empty()) {
    out += "slow links: none\n";
    return;
  }
  out += "slow links:\n";
  for (const auto& flag : flags)
    appendf(out, "  r%d -> r%d: %s\n", flag.a, flag.b, flag.reason.c_str());
}

void json_links(coll::tools::JsonWriter& json, const LinkMatrix& m,
                const std::vector<LinkFlag>& flags) {
  json.field("bytes", m.bytes).field("bandwidth_reps", kBandwidthReps);
  for (const auto& [key, values] :
       {std::pair{"latency_us", &m.latency_us}, std::pair{"gbytes_per_s", &m.gbytes_per_s}}) {
    json.begin_array(key);
    for (int a = 0; a < m.size; ++a) {
      json.begin_array();
      for (int b = 0; b < m.size; ++b) json.element((*values)[m.index(a, b)]);
      json.end_array();
    }
    json.end_array();
  }
  json.begin_array("flags");
  for (const auto& flag : flags)
    json.begin_object()
        .field("a", flag.a)
        .field("b", flag.b)
        .field("reason", flag.reason)
        .end_object();
  json.end_array();
}

}  // namespace colltopo
