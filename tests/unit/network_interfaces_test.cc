// Which interface a rank's sockets listen on: loopback on one host, never across hosts; the route
// to the store first, then a subnet every other host shares; COLL_SOCKET_IFNAME's prefixes, exact
// names and exclusions as NCCL_SOCKET_IFNAME reads them; one clear line where nothing fits; where
// collGetUniqueId's store listens.
#include "transport/network_interfaces.hpp"

#include <gtest/gtest.h>

#include "coll/error.hpp"

namespace {

using coll::InterfaceFilter;
using coll::InterfaceQuestion;
using coll::NetworkInterface;

NetworkInterface interface(const std::string& serialized) {
  return *NetworkInterface::deserialize(serialized);
}

InterfaceQuestion on_two_networks() {
  InterfaceQuestion question;
  question.mine = {interface("lo=127.0.0.1/8"), interface("docker0=172.17.0.1/16"),
                   interface("eth0=10.1.0.2/24"), interface("ib0=10.2.0.2/16")};
  question.spans_hosts = true;
  return question;
}

std::string chosen(const InterfaceQuestion& question) {
  return coll::choose_interface(question).interface.name;
}

TEST(NetworkInterfaces, SerializedFormRoundTrips) {
  const NetworkInterface eth = interface("eth0=10.1.0.2/24");
  EXPECT_EQ(eth.address, "10.1.0.2");
  EXPECT_EQ(eth.netmask, 0xFFFFFF00u);
  EXPECT_EQ(eth.serialize(), "eth0=10.1.0.2/24");
  EXPECT_TRUE(eth.same_subnet(interface("x=10.1.0.77/24").ip));
  EXPECT_FALSE(eth.same_subnet(interface("x=10.1.1.77/24").ip));
  EXPECT_FALSE(NetworkInterface::deserialize("eth0-10.1.0.2").has_value());
  EXPECT_FALSE(NetworkInterface::deserialize("eth0=10.1.0/24").has_value());
}

TEST(NetworkInterfaces, LoopbackOnOneHostNeverAcrossHosts) {
  InterfaceQuestion question = on_two_networks();
  question.spans_hosts = false;
  EXPECT_EQ(chosen(question), "lo");
  question.spans_hosts = true;
  EXPECT_NE(chosen(question), "lo");
}

TEST(NetworkInterfaces, TheRouteToTheStoreComesFirst) {
  InterfaceQuestion question = on_two_networks();
  question.rendezvous_route = "ib0";
  question.others = {{interface("eth0=10.1.0.3/24")}};
  EXPECT_EQ(chosen(question), "ib0");
  EXPECT_EQ(coll::choose_interface(question).why, "the route to the store");
}

TEST(NetworkInterfaces, ElseASubnetEveryOtherHostShares) {
  InterfaceQuestion question = on_two_networks();
  question.others = {{interface("ens3=10.2.7.9/16")}, {interface("ib1=10.2.0.4/16")}};
  EXPECT_EQ(chosen(question), "ib0");
  // No subnet in common: the first real interface, container bridges last.
  question.others = {{interface("ens3=192.0.2.1/24")}};
  EXPECT_EQ(chosen(question), "eth0");
}

TEST(NetworkInterfaces, FilterTakesPrefixesExactNamesAndExclusions) {
  const auto matches = [](const std::string& filter, const std::string& name) {
    return InterfaceFilter::parse(filter, "COLL_SOCKET_IFNAME").matches(name);
  };
  EXPECT_TRUE(matches("eth", "eth0"));
  EXPECT_TRUE(matches("ib,eth", "eth1"));
  EXPECT_FALSE(matches("=eth", "eth0"));
  EXPECT_TRUE(matches("=eth0", "eth0"));
  EXPECT_FALSE(matches("^docker,lo", "docker0"));
  EXPECT_TRUE(matches("^docker,lo", "ens3"));
  EXPECT_TRUE(matches("^=eth", "eth0"));
  EXPECT_FALSE(matches("^=eth0", "eth0"));
  InterfaceQuestion question = on_two_networks();
  question.filter = InterfaceFilter::parse("^ib,docker", "COLL_SOCKET_IFNAME");
  EXPECT_EQ(chosen(question), "eth0");
}

TEST(NetworkInterfaces, NothingThatFitsIsOneClearLine) {
  InterfaceQuestion question = on_two_networks();
  question.filter = InterfaceFilter::parse("wlan", "COLL_SOCKET_IFNAME");
  try {
    coll::choose_interface(question);
    FAIL() << "expected an error";
  } catch (const coll::Error& error) {
    EXPECT_EQ(std::string(error.what()),
              "COLL_SOCKET_IFNAME='wlan' matches no interface with an IPv4 address on this host "
              "(lo 127.0.0.1, docker0 172.17.0.1, eth0 10.1.0.2, ib0 10.2.0.2)");
  }
  question.filter.reset();
  question.mine = {interface("lo=127.0.0.1/8")};
  EXPECT_THROW(coll::choose_interface(question), coll::Error);
  EXPECT_THROW(InterfaceFilter::parse("^", "COLL_SOCKET_IFNAME"), coll::Error);
}

// collGetUniqueId's store, made before the ranks' hosts are known: an interface other hosts
// reach, never loopback while the host has another; the filter decides where it is set.
TEST(NetworkInterfaces, ARendezvousListensWhereOtherHostsReachIt) {
  const InterfaceQuestion question = on_two_networks();
  const auto rendezvous = [&](const std::optional<InterfaceFilter>& filter) {
    return coll::choose_rendezvous_interface(question.mine, filter).interface.address;
  };
  EXPECT_EQ(rendezvous(std::nullopt), "10.1.0.2");
  EXPECT_EQ(coll::choose_rendezvous_interface(question.mine, std::nullopt).why,
            "the first interface but loopback");
  EXPECT_EQ(rendezvous(InterfaceFilter::parse("ib", "COLL_SOCKET_IFNAME")), "10.2.0.2");
  EXPECT_EQ(rendezvous(InterfaceFilter::parse("=lo", "COLL_SOCKET_IFNAME")), "127.0.0.1");
  EXPECT_THROW(rendezvous(InterfaceFilter::parse("wlan", "COLL_SOCKET_IFNAME")), coll::Error);
  // Bridges come last; a host with nothing but loopback serves on loopback.
  EXPECT_EQ(coll::choose_rendezvous_interface(
                {interface("lo=127.0.0.1/8"), interface("docker0=172.17.0.1/16"),
                 interface("ens3=192.0.2.7/24")},
                std::nullopt)
                .interface.name,
            "ens3");
  EXPECT_EQ(coll::choose_rendezvous_interface({interface("lo=127.0.0.1/8")}, std::nullopt)
                .interface.address,
            "127.0.0.1");
  EXPECT_EQ(coll::choose_rendezvous_interface({}, std::nullopt).interface.address, "127.0.0.1");
}

TEST(NetworkInterfaces, ThisHostHasLoopback) {
  const auto here = coll::ipv4_interfaces();
  EXPECT_TRUE(std::any_of(here.begin(), here.end(), [](auto& i) { return i.loopback(); }));
  EXPECT_FALSE(coll::interface_routing_to("127.0.0.1").has_value());
}

}  // namespace
