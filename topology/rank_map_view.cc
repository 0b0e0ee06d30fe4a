#include "rank_map_view.hpp"

#include <cctype>

#include "text_format.hpp"

namespace colltopo {
namespace {

using coll::topo::LinkClass;

std::string gpu_text(const coll::topo::RankInfo& info) {
  if (info.gpu < 0) return "-";
  return "cuda" + std::to_string(info.gpu) + " " + info.gpu_bus_id;
}

char link_code(LinkClass link) {
  switch (link) {
    case LinkClass::SameProcess:
      return 'P';
    case LinkClass::SameNode:
      return 'S';
    case LinkClass::CrossNode:
      return 'X';
  }
  return '?';
}

bool has_link(const coll::topo::RankMap& map, LinkClass link) {
  for (int a = 0; a < map.size; ++a)
    for (int b = 0; b < map.size; ++b)
      if (a != b && map.link(a, b) == link) return true;
  return false;
}

// The transport rank `a` uses towards rank `b`.
std::string pair_transport(const coll::topo::RankMap& map, const std::vector<RankReport>& reports,
                           int a, int b) {
  return transport_for(reports[static_cast<std::size_t>(a)].comm, map.link(a, b));
}

// "vm#COLL_NODE=1" for "vm/<boot id>/<machine id>#COLL_NODE=1": the full identity is in JSON.
std::string short_node_name(const std::string& name) {
  const std::size_t slash = name.find('/'), hash = name.find('#');
  if (slash == std::string::npos) return name;
  return name.substr(0, slash) + (hash == std::string::npos ? "" : name.substr(hash));
}

}  // namespace

std::string transport_for(const std::string& text, LinkClass link) {
  if (link == LinkClass::SameProcess) return "self";
  const std::size_t ucx = text.find("ucx: ");
  const std::string local_marker = " peer(s) over ";
  const std::size_t local = text.find(local_marker, ucx == std::string::npos ? 0 : ucx);
  if (ucx == std::string::npos || local == std::string::npos) return "?";
  const std::size_t start = local + local_marker.size();
  // The network part, when present, is ", <count> over <tls>(<devices>)" at the end.
  std::size_t net = std::string::npos;
  for (std::size_t at = text.find(", ", start); at != std::string::npos;
       at = text.find(", ", at + 1)) {
    if (at + 2 < text.size() && std::isdigit(static_cast<unsigned char>(text[at + 2])) &&
        text.find(" over ", at) != std::string::npos) {
      net = at;
      break;
    }
  }
  if (link == LinkClass::SameNode) return "ucx " + text.substr(start, net - start);
  if (net == std::string::npos) return "?";
  return "ucx " + text.substr(text.find(" over ", net) + 6);
}

const coll::topo::PciDevice* rank_nic(const RankReport& report) {
  const int nic = report.topology.find_device(report.info.nic);
  return nic < 0 ? nullptr : &report.topology.devices[static_cast<std::size_t>(nic)];
}

void print_rank_map(std::string& out, const coll::topo::RankMap& map,
                    const std::vector<RankReport>& reports) {
  appendf(out, "rank map: %d ranks on %d nodes\n", map.size, map.num_nodes());
  appendf(out, "  %4s %4s %5s  %-10s %-20s %-10s %s\n", "rank", "node", "local", "binding", "GPU",
          "NIC", "node name");
  for (int r = 0; r < map.size; ++r) {
    const auto& info = reports[static_cast<std::size_t>(r)].info;
    const auto i = static_cast<std::size_t>(r);
    const std::string local =
        std::to_string(map.local_rank[i]) + "/" + std::to_string(map.local_size[i]);
    appendf(out, "  %4d %4d %5s  %-10s %-20s %-10s %s\n", r, map.node_of_rank[i], local.c_str(),
            info.binding.empty() ? "-" : info.binding.c_str(), gpu_text(info).c_str(),
            info.nic.empty() ? "-" : info.nic.c_str(),
            short_node_name(map.node_names[static_cast<std::size_t>(map.node_of_rank[i])]).c_str());
  }
  out += "link classes (";
  bool first = true;
  for (LinkClass link : {LinkClass::SameProcess, LinkClass::SameNode, LinkClass::CrossNode}) {
    if (!has_link(map, link)) continue;
    // The transport as rank 0's side of its first such link names it (all ranks agree on it).
    std::string transport = "?";
    for (int a = 0; a < map.size && transport == "?"; ++a)
      for (int b = 0; b < map.size; ++b)
        if (a != b && map.link(a, b) == link) {
          transport = pair_transport(map, reports, a, b);
          break;
        }
    appendf(out, "%s%c = %s over %s", first ? "" : "; ", link_code(link),
            std::string(to_string(link)).c_str(), transport.c_str());
    first = false;
  }
  out += first ? "single rank):\n" : "):\n";
  appendf(out, "  %6s", "");
  for (int b = 0; b < map.size; ++b) appendf(out, " %4s", ("r" + std::to_string(b)).c_str());
  out += "\n";
  for (int a = 0; a < map.size; ++a) {
    appendf(out, "  %6s", ("r" + std::to_string(a)).c_str());
    for (int b = 0; b < map.size; ++b)
      appendf(out, " %4c", a == b ? '-' : link_code(map.link(a, b)));
    out += "\n";
  }
}

void json_rank_map(coll::tools::JsonWriter& json, const coll::topo::RankMap& map,
                   const std::vector<RankReport>& reports) {
  json.begin_array("ranks");
  for (int r = 0; r < map.size; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const auto& info = reports[i].info;
    json.begin_object()
        .field("rank", r)
        .field("node", map.node_of_rank[i])
        .field("local_rank", map.local_rank[i])
        .field("local_size", map.local_size[i])
        .field("node_name", map.node_names[static_cast<std::size_t>(map.node_of_rank[i])])
        .field("binding", info.binding)
        .field("gpu", info.gpu)
        .field("gpu_bus_id", info.gpu_bus_id)
        .field("nic", info.nic)
        .field("comm", reports[i].comm)
        .end_object();
  }
  json.end_array().begin_array("links");
  for (int a = 0; a < map.size; ++a)
    for (int b = 0; b < map.size; ++b)
      if (a != b)
        json.begin_object()
            .field("a", a)
            .field("b", b)
            .field("class", to_string(map.link(a, b)))
            .field("transport", pair_transport(map, reports, a, b))
            .end_object();
  json.end_array();
}

}  // namespace colltopo
