// Which network interface a rank's sockets listen on. With no setting: loopback while the job
// stays on one host; across hosts, the interface through which this rank reaches the job's
// rendezvous (the store), else the first one that shares a subnet with every other host, never
// loopback. COLL_SOCKET_IFNAME (alias COLL_UCX_NET_DEVICES) narrows the choice in the convention
// of NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME: a comma-separated list of name prefixes, `=`
// before it for exact names, `^` before it for names to leave out (`^=` exact ones).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace coll {

struct NetworkInterface {
  std::string name;           // "eth0"
  std::string address;        // "10.1.0.2"
  std::uint32_t ip = 0;       // host byte order
  std::uint32_t netmask = 0;  // host byte order

  bool loopback() const { return (ip >> 24) == 127; }
  bool same_subnet(std::uint32_t other_ip) const { return (ip & netmask) == (other_ip & netmask); }
  // "eth0=10.1.0.2/24", as ranks publish their candidates to each other.
  std::string serialize() const;
  static std::optional<NetworkInterface> deserialize(const std::string& text);
};

// The interfaces that are up and have an IPv4 address, in the kernel's order.
std::vector<NetworkInterface> ipv4_interfaces();

class InterfaceFilter {
 public:
  // Throws InvalidArgument naming `variable` on an empty list.
  static InterfaceFilter parse(const std::string& text, const std::string& variable);
  bool matches(const std::string& name) const;
  const std::string& text() const { return text_; }
  const std::string& variable() const { return variable_; }

 private:
  std::string text_;
  std::string variable_;
  bool exclude_ = false;
  bool exact_ = false;
  std::vector<std::string> names_;
};

// COLL_SOCKET_IFNAME, else its alias COLL_UCX_NET_DEVICES; none when neither is set.
std::optional<InterfaceFilter> interface_filter_from_environment();

struct InterfaceChoice {
  NetworkInterface interface;
  std::string why;  // "the route to the store", "a subnet shared with every host", ...
};

// What the choice rests on; `others` holds the candidate interfaces of each rank on another host.
struct InterfaceQuestion {
  std::vector<NetworkInterface> mine;
  std::optional<InterfaceFilter> filter;
  bool spans_hosts = false;
  std::optional<std::string> rendezvous_route;  // the interface routing to the rendezvous
  std::vector<std::vector<NetworkInterface>> others;
};

// Throws InvalidArgument naming the variable and this host's interfaces when none fits.
InterfaceChoice choose_interface(const InterfaceQuestion& question);

// Where a rendezvous this host serves listens (collGetUniqueId's store), chosen before anyone
// knows where the job's other ranks run: the interface a job across hosts would use, the filter's
// (COLL_SOCKET_IFNAME) else the first one but loopback, bridges last, as NCCL's bootstrap picks
// its own; loopback only where the host has no other interface. Throws as choose_interface
// where the filter matches none.
InterfaceChoice choose_rendezvous_interface(const std::vector<NetworkInterface>& mine,
                                            const std::optional<InterfaceFilter>& filter);

// The name of the interface through which this host reaches `host` (a name or an IPv4
// address); none for a loopback address or one that cannot be resolved or routed.
std::optional<std::string> interface_routing_to(const std::string& host);

}  // namespace coll
