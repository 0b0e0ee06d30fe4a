#include "rank_report.hpp"

#include <cstdint>

#include "coll/error.hpp"
#include "topology_codec.hpp"

namespace colltopo {
namespace {

constexpr std::uint32_t kReportTag = 0x70700001;

// Three strings, each "<length>:<bytes>".
std::string pack(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) out += std::to_string(part.size()) + ":" + part;
  return out;
}

std::vector<std::string> unpack(const std::string& text, int from) {
  std::vector<std::string> parts;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t colon = text.find(':', pos);
    std::size_t length = 0;
    try {
      length = std::stoul(text.substr(pos, colon - pos));
    } catch (const std::exception&) {
      colon = std::string::npos;
    }
    if (colon == std::string::npos || length > text.size() - colon - 1) {
      throw coll::Error(coll::Status::InvalidArgument,
                        "colltopo: malformed report from rank " + std::to_string(from));
    }
    parts.push_back(text.substr(colon + 1, length));
    pos = colon + 1 + length;
  }
  return parts;
}

}  // namespace

RankReport make_report(const coll::Comm& comm, bool cuda) {
  RankReport report;
  report.topology = coll::topo::discover_local({.probe_cuda = cuda});
  int gpu = -1;
  if (cuda) {
    int visible = 0;
    for (int g : report.topology.gpus())
      if (report.topology.devices[static_cast<std::size_t>(g)].cuda_index >= 0) ++visible;
    if (visible > 0) gpu = comm.local_rank() % visible;
  }
  report.info = coll::topo::make_rank_info(comm.rank(), report.topology, gpu);
  report.comm = comm.describe();
  return report;
}

void send_text(coll::Comm& comm, const std::string& text, int peer, std::uint32_t tag) {
  const std::uint64_t length = text.size();
  comm.send(&length, sizeof length, peer, tag);
  if (length > 0) comm.send(text.data(), text.size(), peer, tag + 1);
}

std::string recv_text(coll::Comm& comm, int peer, std::uint32_t tag) {
  std::uint64_t length = 0;
  comm.recv(&length, sizeof length, peer, tag);
  if (length > (1u << 30)) {
    throw coll::Error(coll::Status::InvalidArgument, "colltopo: rank " + std::to_string(peer) +
                                                         " announced a " + std::to_string(length) +
                                                         "-byte report; expected a few KB");
  }
  std::string text(length, '\0');
  if (length > 0) comm.recv(text.data(), text.size(), peer, tag + 1);
  return text;
}

std::vector<RankReport> gather_reports(coll::Comm& comm, const RankReport& mine) {
  const std::string text = pack({mine.info.serialize(), mine.comm, encode_topology(mine.topology)});
  if (comm.rank() != 0) {
    send_text(comm, text, 0, kReportTag);
    return {};
  }
  std::vector<RankReport> all(static_cast<std::size_t>(comm.size()));
  all[0] = mine;
  for (int r = 1; r < comm.size(); ++r) {
    const auto parts = unpack(recv_text(comm, r, kReportTag), r);
    if (parts.size() != 3)
      throw coll::Error(coll::Status::InvalidArgument,
                        "colltopo: malformed report from rank " + std::to_string(r));
    RankReport& report = all[static_cast<std::size_t>(r)];
    report.info = coll::topo::RankInfo::deserialize(parts[0]);
    report.comm = parts[1];
    report.topology = decode_topology(parts[2]);
  }
  return all;
}

}  // namespace colltopo
