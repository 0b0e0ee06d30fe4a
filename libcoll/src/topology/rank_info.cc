// RankInfo text form: a header line, then one "key=value" line per field, in a fixed order.
// Values are percent-encoded where they hold '%', spaces, control or non-ASCII bytes, so that a
// line break can never come from a value.
#include "coll/topology/rank_info.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "coll/error.hpp"
#include "coll/topology/path_class.hpp"

namespace coll::topo {
namespace {

constexpr std::string_view kHeader = "coll-rank-info 1";
constexpr const char* kKeys[] = {"rank",    "host", "node",    "process",
                                 "binding", "gpu",  "gpu_bus", "nic"};
constexpr size_t kNumKeys = sizeof kKeys / sizeof kKeys[0];

[[noreturn]] void malformed(const std::string& why) {
  throw Error(Status::InvalidArgument, "malformed rank info: " + why);
}

bool plain(unsigned char c) {
  return c > 0x20 && c < 0x7f && c != '%';
}

std::string encode(std::string_view value) {
  std::string out;
  for (unsigned char c : value) {
    if (plain(c)) {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::string decode(std::string_view value, std::string_view key) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (c == '%') {
      int hi = i + 2 < value.size() ? hex_digit(value[i + 1]) : -1;
      int lo = hi >= 0 ? hex_digit(value[i + 2]) : -1;
      if (lo < 0) malformed("bad %-escape in '" + std::string(key) + "'");
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (!plain(static_cast<unsigned char>(c))) {
      malformed("unexpected character in '" + std::string(key) + "'");
    } else {
      out += c;
    }
  }
  return out;
}

int to_int(const std::string& text, std::string_view key, int min) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    malformed("'" + std::string(key) + "' is not an integer: '" + text + "'");
  if (value < min) malformed("'" + std::string(key) + "' is below " + std::to_string(min));
  return value;
}

}  // namespace

std::string RankInfo::serialize() const {
  const std::string values[kNumKeys] = {std::to_string(rank),
                                        host_identity,
                                        std::to_string(node_override),
                                        process_id,
                                        binding,
                                        std::to_string(gpu),
                                        gpu_bus_id,
                                        nic};
  std::string out(kHeader);
  out += '\n';
  for (size_t k = 0; k < kNumKeys; ++k)
    out += std::string(kKeys[k]) + "=" + encode(values[k]) + "\n";
  return out;
}

RankInfo RankInfo::deserialize(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  if (lines.empty() || lines[0] != kHeader)
    malformed("missing header '" + std::string(kHeader) + "'");
  if (lines.size() != kNumKeys + 1)
    malformed("expected " + std::to_string(kNumKeys) + " fields, got " +
              std::to_string(lines.size() - 1));
  std::string values[kNumKeys];
  for (size_t k = 0; k < kNumKeys; ++k) {
    std::string_view line = lines[k + 1];
    std::string key = std::string(kKeys[k]) + "=";
    if (!line.starts_with(key)) malformed("expected field '" + std::string(kKeys[k]) + "'");
    values[k] = decode(line.substr(key.size()), kKeys[k]);
  }
  RankInfo info;
  info.rank = to_int(values[0], "rank", 0);
  info.host_identity = values[1];
  info.node_override = to_int(values[2], "node", -1);
  info.process_id = values[3];
  info.binding = values[4];
  info.gpu = to_int(values[5], "gpu", -1);
  info.gpu_bus_id = values[6];
  info.nic = values[7];
  if (info.host_identity.empty()) malformed("empty 'host'");
  if (info.process_id.empty()) malformed("empty 'process'");
  return info;
}

int parse_node_override(const char* value) {
  if (!value || !*value) return -1;
  std::string_view text(value);
  int node = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), node);
  if (ec != std::errc() || end != text.data() + text.size() || node < 0)
    throw Error(Status::InvalidArgument,
                "COLL_NODE='" + std::string(text) +
                    "' is not a node number; set it to an integer >= 0 or unset it");
  return node;
}

const std::string& this_process_id() {
  static const std::string id = [] {
    std::random_device rd;
    unsigned long long nonce = (static_cast<unsigned long long>(rd()) << 32) ^ rd();
    char text[64];
    std::snprintf(text, sizeof text, "%ld-%016llx", static_cast<long>(getpid()), nonce);
    return std::string(text);
  }();
  return id;
}

RankInfo make_rank_info(int rank, const NodeTopology& topology, int gpu) {
  RankInfo info;
  info.rank = rank;
  info.host_identity = topology.host_identity;
  info.node_override = parse_node_override(std::getenv("COLL_NODE"));
  info.process_id = this_process_id();
  info.binding = topology.binding_cpulist;
  info.gpu = gpu;
  int nic = -1;
  for (int g : topology.gpus())
    if (gpu >= 0 && topology.devices[g].cuda_index == gpu) {
      info.gpu_bus_id = topology.devices[g].bus_id;
      nic = nearest_nic(topology, g);
    }
  if (info.gpu_bus_id.empty()) nic = nic_for_numa(topology, topology.binding_numa_nodes);
  if (nic >= 0) info.nic = topology.devices[nic].name;
  return info;
}

}  // namespace coll::topo
