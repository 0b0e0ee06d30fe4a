#include "transport/network_interfaces.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "coll/env.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

std::string dotted(std::uint32_t ip) {
  const in_addr address{htonl(ip)};
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &address, text, sizeof text);
  return text;
}

int prefix_length(std::uint32_t netmask) {
  return __builtin_popcount(netmask);
}

// Container and virtual-machine bridges come after real interfaces when nothing else decides,
// as NCCL orders them.
bool virtual_bridge(const std::string& name) {
  return name.starts_with("docker") || name.starts_with("virbr") || name.starts_with("br-");
}

std::vector<NetworkInterface> in_preference_order(std::vector<NetworkInterface> interfaces) {
  std::stable_sort(interfaces.begin(), interfaces.end(),
                   [](const NetworkInterface& a, const NetworkInterface& b) {
                     return virtual_bridge(a.name) < virtual_bridge(b.name);
                   });
  return interfaces;
}

std::string listing(const std::vector<NetworkInterface>& interfaces) {
  std::string text;
  for (const auto& interface : interfaces) {
    text += (text.empty() ? "" : ", ") + interface.name + " " + interface.address;
  }
  return text.empty() ? "none with an IPv4 address" : text;
}

bool reaches_every_host(const NetworkInterface& interface,
                        const std::vector<std::vector<NetworkInterface>>& others) {
  return std::all_of(others.begin(), others.end(), [&](const auto& theirs) {
    return std::any_of(theirs.begin(), theirs.end(), [&](const NetworkInterface& other) {
      return !other.loopback() && interface.same_subnet(other.ip);
    });
  });
}

}  // namespace

std::string NetworkInterface::serialize() const {
  return name + "=" + address + "/" + std::to_string(prefix_length(netmask));
}

std::optional<NetworkInterface> NetworkInterface::deserialize(const std::string& text) {
  const auto equals = text.find('=');
  const auto slash = text.rfind('/');
  if (equals == std::string::npos || slash == std::string::npos || slash < equals) return {};
  NetworkInterface interface;
  interface.name = text.substr(0, equals);
  interface.address = text.substr(equals + 1, slash - equals - 1);
  in_addr parsed{};
  if (::inet_pton(AF_INET, interface.address.c_str(), &parsed) != 1) return {};
  interface.ip = ntohl(parsed.s_addr);
  const int prefix = std::atoi(text.c_str() + slash + 1);
  if (prefix < 0 || prefix > 32) return {};
  interface.netmask = prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
  return interface;
}

std::vector<NetworkInterface> ipv4_interfaces() {
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) throw_system_error("getifaddrs");
  std::vector<NetworkInterface> found;
  for (ifaddrs* entry = interfaces; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    if ((entry->ifa_flags & IFF_UP) == 0) continue;
    NetworkInterface interface;
    interface.name = entry->ifa_name;
    interface.ip = ntohl(reinterpret_cast<const sockaddr_in*>(entry->ifa_addr)->sin_addr.s_addr);
    if (entry->ifa_netmask != nullptr) {
      interface.netmask =
          ntohl(reinterpret_cast<const sockaddr_in*>(entry->ifa_netmask)->sin_addr.s_addr);
    }
    interface.address = dotted(interface.ip);
    found.push_back(std::move(interface));
  }
  ::freeifaddrs(interfaces);
  return found;
}

InterfaceFilter InterfaceFilter::parse(const std::string& text, const std::string& variable) {
  InterfaceFilter filter;
  filter.text_ = text;
  filter.variable_ = variable;
  std::string_view list = text;
  if (list.starts_with('^')) {
    filter.exclude_ = true;
    list.remove_prefix(1);
  }
  if (list.starts_with('=')) {
    filter.exact_ = true;
    list.remove_prefix(1);
  }
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    if (!name.empty()) filter.names_.emplace_back(name);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  if (filter.names_.empty()) {
    throw Error(Status::InvalidArgument,
                variable + "='" + text +
                    "': expected interface names or prefixes such as eth0 or ib,eth "
                    "(=NAME for an exact name, ^NAME to leave one out)");
  }
  return filter;
}

bool InterfaceFilter::matches(const std::string& name) const {
  const bool listed = std::any_of(names_.begin(), names_.end(), [&](const std::string& entry) {
    return exact_ ? name == entry : name.starts_with(entry);
  });
  return listed != exclude_;
}

std::optional<InterfaceFilter> interface_filter_from_environment() {
  for (const char* variable : {"COLL_SOCKET_IFNAME", "COLL_UCX_NET_DEVICES"}) {
    if (auto value = env_string(variable)) return InterfaceFilter::parse(*value, variable);
  }
  return std::nullopt;
}

InterfaceChoice choose_interface(const InterfaceQuestion& question) {
  std::vector<NetworkInterface> candidates;
  for (const auto& interface : in_preference_order(question.mine)) {
    if (!question.filter || question.filter->matches(interface.name)) {
      candidates.push_back(interface);
    }
  }
  if (question.filter && candidates.empty()) {
    throw Error(Status::InvalidArgument,
                question.filter->variable() + "='" + question.filter->text() +
                    "' matches no interface with an IPv4 address on this host (" +
                    listing(question.mine) + ")");
  }
  if (!question.spans_hosts) {
    const auto loopback =
        std::find_if(candidates.begin(), candidates.end(), [](auto& c) { return c.loopback(); });
    if (loopback != candidates.end()) return {*loopback, "the job runs on one host"};
    if (!candidates.empty()) return {candidates.front(), "the job runs on one host"};
  }
  // Across hosts loopback reaches no peer: kept only where the user's filter leaves nothing else.
  const bool only_loopback = std::all_of(candidates.begin(), candidates.end(),
                                         [](const NetworkInterface& c) { return c.loopback(); });
  if (!(question.filter && only_loopback)) {
    std::erase_if(candidates, [](const NetworkInterface& c) { return c.loopback(); });
  }
  if (candidates.empty()) {
    throw Error(Status::InvalidArgument,
                "no network interface but loopback on this host (" + listing(question.mine) +
                    ") for a job across hosts; set COLL_SOCKET_IFNAME to the interface the "
                    "hosts reach each other through");
  }
  if (question.rendezvous_route) {
    for (const auto& candidate : candidates) {
      if (candidate.name == *question.rendezvous_route)
        return {candidate, "the route to the store"};
    }
  }
  for (const auto& candidate : candidates) {
    if (reaches_every_host(candidate, question.others)) {
      return {candidate, "a subnet shared with every other host"};
    }
  }
  return {candidates.front(), "the first interface (no subnet shared with every other host)"};
}

InterfaceChoice choose_rendezvous_interface(const std::vector<NetworkInterface>& mine,
                                            const std::optional<InterfaceFilter>& filter) {
  const bool only_loopback =
      std::all_of(mine.begin(), mine.end(), [](const NetworkInterface& i) { return i.loopback(); });
  if (only_loopback && !filter) {
    const auto loopback = std::find_if(mine.begin(), mine.end(),
                                       [](const NetworkInterface& i) { return i.loopback(); });
    if (loopback != mine.end()) return {*loopback, "no interface but loopback on this host"};
    return {*NetworkInterface::deserialize("lo=127.0.0.1/8"), "no interface on this host"};
  }
  InterfaceChoice choice = choose_interface({mine, filter, true, std::nullopt, {}});
  choice.why = filter ? "matches " + filter->variable() + "='" + filter->text() + "'"
                      : "the first interface but loopback";
  return choice;
}

std::optional<std::string> interface_routing_to(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), "9", &hints, &found) != 0 || found == nullptr) return {};
  sockaddr_in target = *reinterpret_cast<sockaddr_in*>(found->ai_addr);
  ::freeaddrinfo(found);
  if ((ntohl(target.sin_addr.s_addr) >> 24) == 127) return {};
  // Connecting a datagram socket sends nothing: it only asks the kernel for the route.
  const int probe = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (probe < 0) return {};
  sockaddr_in local{};
  socklen_t length = sizeof local;
  const bool routed =
      ::connect(probe, reinterpret_cast<const sockaddr*>(&target), sizeof target) == 0 &&
      ::getsockname(probe, reinterpret_cast<sockaddr*>(&local), &length) == 0;
  ::close(probe);
  if (!routed) return {};
  const std::uint32_t ip = ntohl(local.sin_addr.s_addr);
  for (const auto& interface : ipv4_interfaces()) {
    if (interface.ip == ip) return interface.name;
  }
  return {};
}

}  // namespace coll
